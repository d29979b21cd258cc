// @vitest-environment jsdom
import { Operator, type SearchRequest } from '@hearth/core';
import { screen, waitFor, within } from '@testing-library/react';
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
    await waitFor(() => expect(screen.queryByText('Ada Lovelace')).toBeNull());
    expect(requests.filter((r) => r.method === 'DELETE').map((r) => r.url.pathname)).toEqual(['/fhir/R4/Patient/p1']);
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
