// @vitest-environment jsdom
import { Operator, type SearchRequest } from '@hearth/core';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { bundle, mockClient, renderWithHearth, Reply } from '../test/render.js';
import { defaultColumns, SearchControl } from './SearchControl.js';

const patients = [
  {
    resourceType: 'Patient',
    id: 'p1',
    name: [{ given: ['Ada'], family: 'Lovelace' }],
    birthDate: '1815-12-10',
    gender: 'female',
  },
  {
    resourceType: 'Patient',
    id: 'p2',
    name: [{ given: ['Alan'], family: 'Turing' }],
    birthDate: '1912-06-23',
    gender: 'male',
  },
];

describe('SearchControl', () => {
  it('shows the rows with columns from search parameters and the total', async () => {
    const { client, requests } = mockClient({ 'GET /fhir/R4/Patient': () => bundle(patients, 42) });
    renderWithHearth(<SearchControl search={{ resourceType: 'Patient' }} onChange={() => undefined} />, client);
    const table = screen.getByRole('table', { name: 'Patient search results' });
    await within(table).findByText('Ada Lovelace');
    expect(within(table).getByText('Alan Turing')).toBeTruthy();
    expect(within(table).getByRole('button', { name: 'Column birthdate' })).toBeTruthy();
    expect(screen.getByText('1–2 of 42')).toBeTruthy();
    const sent = requests.find((r) => r.url.pathname === '/fhir/R4/Patient')!.url.searchParams;
    expect(sent.get('_total')).toBe('accurate');
    expect(sent.get('_count')).toBe('20');
  });

  it('adds a filter through the editor and reports the new search', async () => {
    const user = userEvent.setup({ delay: null });
    const { client } = mockClient({ 'GET /fhir/R4/Patient': () => bundle(patients) });
    const onChange = vi.fn();
    renderWithHearth(<SearchControl search={{ resourceType: 'Patient' }} onChange={onChange} />, client);
    await user.click(screen.getByRole('button', { name: 'Filters' }));
    await user.click(await screen.findByRole('button', { name: 'Add filter' }));
    await user.type(screen.getByLabelText('Filter 1 value'), 'Love');
    await user.click(screen.getByRole('button', { name: 'Apply' }));
    expect(onChange).toHaveBeenCalled();
    const [search] = onChange.mock.calls[0] as [SearchRequest];
    expect(search.filters).toEqual([{ code: 'name', operator: Operator.EQUALS, value: 'Love' }]);
  });

  it("adds the server's own search parameters (a project's SearchParameters) to the known ones", async () => {
    const user = userEvent.setup({ delay: null });
    const { client } = mockClient({
      'GET /fhir/R4/Patient': () => bundle(patients),
      'GET /fhir/R4/metadata': () => ({
        resourceType: 'CapabilityStatement',
        rest: [
          { mode: 'server', resource: [{ type: 'Patient', searchParam: [{ name: 'favorite-color', type: 'token' }] }] },
        ],
      }),
    });
    renderWithHearth(<SearchControl search={{ resourceType: 'Patient' }} onChange={() => undefined} />, client);
    await screen.findByText('Ada Lovelace');
    await user.click(screen.getByRole('button', { name: 'Filters' }));
    await user.click(await screen.findByRole('button', { name: 'Add filter' }));
    await user.click(screen.getByRole('textbox', { name: 'Filter 1 parameter' }));
    expect(await screen.findByRole('option', { name: 'favorite-color' })).toBeTruthy();
  });

  it('offers the codes of a bound token parameter', async () => {
    const user = userEvent.setup({ delay: null });
    const { client } = mockClient({ 'GET /fhir/R4/Patient': () => bundle(patients) });
    const onChange = vi.fn();
    renderWithHearth(<SearchControl search={{ resourceType: 'Patient' }} onChange={onChange} />, client);
    await screen.findByText('Ada Lovelace');
    await user.click(screen.getByRole('button', { name: 'Column gender' }));
    await user.click(await screen.findByRole('menuitem', { name: 'Filter…' }));
    await user.click(await screen.findByRole('textbox', { name: 'Filter 1 value' }));
    await user.click(await screen.findByRole('option', { name: 'female' }));
    await user.click(screen.getByRole('button', { name: 'Apply' }));
    expect(onChange.mock.calls[0][0].filters).toEqual([{ code: 'gender', operator: Operator.EQUALS, value: 'female' }]);
  });

  it('sorts from a column menu and pages through results', async () => {
    const user = userEvent.setup({ delay: null });
    const { client } = mockClient({ 'GET /fhir/R4/Patient': () => bundle(patients, 45) });
    const onChange = vi.fn();
    renderWithHearth(<SearchControl search={{ resourceType: 'Patient', count: 20 }} onChange={onChange} />, client);
    await screen.findByText('Ada Lovelace');
    await user.click(screen.getByRole('button', { name: 'Column birthdate' }));
    await user.click(await screen.findByRole('menuitem', { name: 'Sort descending' }));
    expect(onChange.mock.calls[0][0].sortRules).toEqual([{ code: 'birthdate', descending: true }]);
    await user.click(screen.getByRole('button', { name: 'Page 3' }));
    expect(onChange.mock.calls[1][0].offset).toBe(40);
  });

  it('selects rows and deletes them in bulk', async () => {
    const user = userEvent.setup({ delay: null });
    let remaining = [...patients];
    const { client, requests } = mockClient({
      'GET /fhir/R4/Patient': () => bundle(remaining),
      'DELETE /fhir/R4/Patient/*': (req) => {
        remaining = remaining.filter((p) => !req.url.pathname.endsWith(`/${p.id}`));
        return undefined;
      },
    });
    renderWithHearth(<SearchControl search={{ resourceType: 'Patient' }} onChange={() => undefined} />, client);
    await screen.findByText('Ada Lovelace');
    await user.click(screen.getByRole('checkbox', { name: 'Select p1' }));
    await user.click(screen.getByRole('button', { name: 'Delete 1 selected' }));
    // Nothing is deleted until confirmed.
    const dialog = await screen.findByRole('dialog', { name: 'Delete 1 Patient?' });
    expect(requests.some((r) => r.method === 'DELETE')).toBe(false);
    await user.click(within(dialog).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(screen.queryByText('Ada Lovelace')).toBeNull());
    expect(requests.filter((r) => r.method === 'DELETE').map((r) => r.url.pathname)).toEqual(['/fhir/R4/Patient/p1']);
  });

  it('keeps the rows it could not delete selected, and shows why', async () => {
    const user = userEvent.setup({ delay: null });
    const { client } = mockClient({
      'GET /fhir/R4/Patient': () => bundle(patients),
      'DELETE /fhir/R4/Patient/p1': () => undefined,
      'DELETE /fhir/R4/Patient/p2': () =>
        new Reply(403, {
          resourceType: 'OperationOutcome',
          issue: [{ severity: 'error', code: 'forbidden', details: { text: 'Forbidden by access policy' } }],
        }),
    });
    renderWithHearth(<SearchControl search={{ resourceType: 'Patient' }} onChange={() => undefined} />, client);
    await screen.findByText('Ada Lovelace');
    await user.click(screen.getByRole('checkbox', { name: 'Select all' }));
    await user.click(screen.getByRole('button', { name: 'Delete 2 selected' }));
    await user.click(
      within(await screen.findByRole('dialog', { name: 'Delete 2 Patient?' })).getByRole('button', { name: 'Delete' }),
    );
    expect((await screen.findByRole('alert')).textContent).toContain('Forbidden by access policy');
    expect(screen.getByRole('button', { name: 'Delete 1 selected' })).toBeTruthy();
    expect((screen.getByRole('checkbox', { name: 'Select p2' }) as HTMLInputElement).checked).toBe(true);
  });

  it('keeps filters, sort and paging in the search it reports (for the URL)', async () => {
    const user = userEvent.setup({ delay: null });
    const { client, requests } = mockClient({ 'GET /fhir/R4/Patient': () => bundle(patients, 45) });
    const onChange = vi.fn();
    const search: SearchRequest = {
      resourceType: 'Patient',
      filters: [{ code: 'gender', operator: Operator.EQUALS, value: 'female' }],
      sortRules: [{ code: 'birthdate', descending: true }],
      count: 10,
      offset: 10,
    };
    renderWithHearth(<SearchControl search={search} columns={['name', 'gender']} onChange={onChange} />, client);
    await screen.findByText('Ada Lovelace');
    const sent = requests.find((r) => r.url.pathname === '/fhir/R4/Patient')!.url.searchParams;
    expect(sent.get('gender')).toBe('female');
    expect(sent.get('_sort')).toBe('-birthdate');
    expect(sent.get('_offset')).toBe('10');
    expect(screen.getByText('11–12 of 45')).toBeTruthy();
    // Only the chosen columns, the sort shown on its header.
    expect(screen.getAllByRole('button', { name: /^Column / }).map((b) => b.textContent)).toEqual(['name', 'gender']);
    // Removing the filter keeps the sort and the columns, and goes back to the first page.
    await user.click(screen.getByRole('button', { name: 'Remove filter gender' }));
    const [next, columns] = onChange.mock.calls[0] as [SearchRequest, string[]];
    expect(next).toMatchObject({
      filters: [],
      sortRules: [{ code: 'birthdate', descending: true }],
      offset: undefined,
    });
    expect(columns).toEqual(['name', 'gender']);
    // The page size resets paging too.
    await user.click(screen.getByRole('textbox', { name: 'Page size' }));
    await user.click(await screen.findByRole('option', { name: '50' }));
    expect(onChange.mock.calls[1][0]).toMatchObject({ count: 50, offset: undefined });
  });

  it("shows the server's OperationOutcome when the search fails", async () => {
    const { client } = mockClient({
      'GET /fhir/R4/Patient': () =>
        new Reply(400, {
          resourceType: 'OperationOutcome',
          issue: [{ severity: 'error', code: 'invalid', details: { text: 'Unknown search parameter: foo' } }],
        }),
    });
    renderWithHearth(
      <SearchControl
        search={{ resourceType: 'Patient', filters: [{ code: 'foo', operator: Operator.EQUALS, value: 'x' }] }}
        onChange={() => undefined}
      />,
      client,
    );
    expect((await screen.findByRole('alert')).textContent).toContain('Unknown search parameter: foo');
  });

  it('adds a column chosen from the search parameters', async () => {
    const user = userEvent.setup({ delay: null });
    const { client } = mockClient({ 'GET /fhir/R4/Patient': () => bundle(patients) });
    const onChange = vi.fn();
    renderWithHearth(
      <SearchControl search={{ resourceType: 'Patient' }} columns={['name']} onChange={onChange} />,
      client,
    );
    await screen.findByText('Ada Lovelace');
    await user.click(screen.getByRole('button', { name: 'Columns' }));
    await user.type(await screen.findByRole('textbox', { name: 'Columns' }), 'address-ci');
    await user.click(await screen.findByRole('option', { name: 'address-city' }));
    expect(onChange.mock.calls.at(-1)?.[1]).toEqual(['name', 'address-city']);
  });

  it('filters a date range with date inputs, and a reference with a resource picker', async () => {
    const user = userEvent.setup({ delay: null });
    const { client } = mockClient({
      'GET /fhir/R4/Observation': () => bundle([]),
      'GET /fhir/R4/Patient': () => bundle(patients),
    });
    const onChange = vi.fn();
    renderWithHearth(<SearchControl search={{ resourceType: 'Observation' }} onChange={onChange} />, client);
    await user.click(screen.getByRole('button', { name: 'Filters' }));
    await user.click(await screen.findByRole('button', { name: 'Add date range' }));
    const from = screen.getByLabelText('Filter 1 value') as HTMLInputElement;
    const to = screen.getByLabelText('Filter 2 value') as HTMLInputElement;
    expect([from.type, to.type]).toEqual(['date', 'date']);
    fireEvent.change(from, { target: { value: '2024-01-01' } });
    fireEvent.change(to, { target: { value: '2024-03-31' } });
    await user.click(screen.getByRole('button', { name: 'Add filter' }));
    await user.click(screen.getByRole('textbox', { name: 'Filter 3 parameter' }));
    await user.click(await screen.findByRole('option', { name: 'subject' }));
    // A reference parameter: a resource picker, its type among the allowed ones (Patient first).
    expect((screen.getByRole('textbox', { name: 'Value type' }) as HTMLInputElement).value).toBe('Patient');
    await user.click(screen.getByRole('textbox', { name: 'Value' }));
    await user.click(await screen.findByRole('option', { name: 'Ada Lovelace' }));
    await user.click(screen.getByRole('button', { name: 'Apply' }));
    expect(onChange.mock.calls[0][0].filters).toEqual([
      { code: 'date', operator: Operator.GREATER_THAN_OR_EQUALS, value: '2024-01-01' },
      { code: 'date', operator: Operator.LESS_THAN_OR_EQUALS, value: '2024-03-31' },
      { code: 'subject', operator: Operator.EQUALS, value: 'Patient/p1' },
    ]);
  });

  it('chooses default columns that suit the type', () => {
    expect(defaultColumns([{ code: 'name' }, { code: 'gender' }, { code: 'birthdate' }, { code: 'phone' }])).toEqual([
      '_id',
      'name',
      'birthdate',
      'gender',
      '_lastUpdated',
    ]);
  });
});
