// @vitest-environment jsdom
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import type { Resource } from '@hearth/core';
import { OperationOutcomeError } from '@hearth/core';
import { bundle, mockClient, renderWithHearth } from '../test/render.js';
import { ResourceForm } from './ResourceForm.js';

describe('ResourceForm', () => {
  it('builds a Patient from generated fields: the name open first, nested names, codes and choice types', async () => {
    const user = userEvent.setup({ delay: null });
    const { client } = mockClient({});
    const onSubmit = vi.fn();
    renderWithHearth(<ResourceForm defaultValue={{ resourceType: 'Patient' }} onSubmit={onSubmit} />, client);

    // The name opens with one empty entry, given names first.
    const name = screen.getAllByRole('group', { name: 'Name' })[0];
    await user.type(within(name).getByRole('textbox', { name: 'Given' }), 'Alice');
    await user.type(within(name).getByLabelText('Family'), 'Smith');
    await user.type(screen.getByLabelText('Birth date'), '1980-02-03');
    await user.click(screen.getByLabelText('Active'));
    await user.click(screen.getByRole('textbox', { name: 'Gender' }));
    await user.click(await screen.findByRole('option', { name: 'female' }));
    await user.click(screen.getByRole('button', { name: 'Save' }));

    await waitFor(() => expect(onSubmit).toHaveBeenCalled());
    expect(onSubmit.mock.calls[0][0]).toEqual({
      resourceType: 'Patient',
      active: true,
      name: [{ family: 'Smith', given: ['Alice'] }],
      gender: 'female',
      birthDate: '1980-02-03',
    });
  });

  it('orders a Patient form for people: name, birth date, gender, identifier first; technical elements under More', async () => {
    const user = userEvent.setup({ delay: null });
    const { client } = mockClient({});
    renderWithHearth(<ResourceForm defaultValue={{ resourceType: 'Patient' }} onSubmit={vi.fn()} />, client);
    const form = screen.getByRole('form', { name: 'Patient form' });
    // The order of the first labelled controls (a repeating element is a group named by it).
    const labels = [...form.querySelectorAll('[role=group][aria-label], label')]
      .map((e) => e.getAttribute('aria-label') ?? e.textContent?.replace(/\s*\*$/, ''))
      .filter((l): l is string => !!l);
    const firstOf = (l: string) => labels.indexOf(l);
    expect(firstOf('Name')).toBeGreaterThanOrEqual(0);
    expect(firstOf('Name')).toBeLessThan(firstOf('Birth date'));
    expect(firstOf('Birth date')).toBeLessThan(firstOf('Gender'));
    expect(firstOf('Gender')).toBeLessThan(firstOf('Identifier'));
    expect(firstOf('Identifier')).toBeLessThan(firstOf('Telecom'));
    expect(firstOf('Telecom')).toBeLessThan(firstOf('Address'));
    // Language, contained resources and extensions wait behind "More".
    expect(screen.queryByLabelText('Language')).toBeNull();
    const more = screen.getByRole('button', { name: 'More elements' });
    expect(more.getAttribute('aria-describedby')).toBeTruthy();
    expect(more.getAttribute('aria-expanded')).toBe('false');
    await user.click(more);
    const group = screen.getByRole('group', { name: 'More elements' });
    expect(within(group).getByRole('textbox', { name: 'Language' })).toBeTruthy();
    expect(within(group).getByRole('group', { name: 'Extension' })).toBeTruthy();
  });

  it('puts required elements, then summary elements, first on a form without a curated order', async () => {
    const { client } = mockClient({});
    // Account: 'status' is required (1..1); 'identifier' .. 'description' are in the summary set; 'guarantor' is not.
    renderWithHearth(<ResourceForm defaultValue={{ resourceType: 'Account' }} onSubmit={vi.fn()} />, client);
    const form = screen.getByRole('form', { name: 'Account form' });
    const text = (form.textContent ?? '').toLowerCase();
    const at = (label: string) => {
      const i = text.indexOf(label);
      expect(i, label).toBeGreaterThanOrEqual(0);
      return i;
    };
    expect(at('status')).toBeLessThan(at('identifier'));
    expect(at('description')).toBeLessThan(at('guarantor'));
    expect(at('guarantor')).toBeLessThan(at('part of'));
  });

  it('edits a choice element under the property of the chosen type', async () => {
    const user = userEvent.setup({ delay: null });
    const { client } = mockClient({});
    const onSubmit = vi.fn();
    renderWithHearth(
      <ResourceForm defaultValue={{ resourceType: 'Observation', status: 'final' }} onSubmit={onSubmit} />,
      client,
    );
    await user.click(screen.getByRole('textbox', { name: 'Value type' }));
    await user.click(await screen.findByRole('option', { name: 'string' }));
    await user.type(screen.getByLabelText('Value'), 'positive');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(onSubmit).toHaveBeenCalled());
    expect(onSubmit.mock.calls[0][0]).toMatchObject({
      resourceType: 'Observation',
      status: 'final',
      valueString: 'positive',
    });
  });

  it('shows the server OperationOutcome at the field its expression names', async () => {
    const user = userEvent.setup({ delay: null });
    const { client } = mockClient({});
    const onSubmit = vi.fn(async () => {
      throw new OperationOutcomeError({
        resourceType: 'OperationOutcome',
        issue: [
          {
            severity: 'error',
            code: 'value',
            details: { text: 'Invalid date: 1980-13-45' },
            expression: ['Patient.birthDate'],
          },
        ],
      });
    });
    const existing: Resource = { resourceType: 'Patient', id: 'p1', birthDate: '1980-01-01' };
    renderWithHearth(<ResourceForm defaultValue={existing} onSubmit={onSubmit} />, client);
    await user.click(screen.getByRole('button', { name: 'Save' }));
    const field = await screen.findByLabelText('Birth date');
    await waitFor(() => expect(field.getAttribute('aria-invalid')).toBe('true'));
    expect(screen.getAllByText('Invalid date: 1980-13-45').length).toBeGreaterThan(0);
    expect(onSubmit.mock.calls[0]).toEqual([{ resourceType: 'Patient', id: 'p1', birthDate: '1980-01-01' }]);
  });

  it('finds reference targets as you type', async () => {
    const user = userEvent.setup({ delay: null });
    const { client, requests } = mockClient({
      'GET /fhir/R4/Organization': (req) =>
        bundle(
          req.url.searchParams.get('name') === 'Acme'
            ? [{ resourceType: 'Organization', id: 'o1', name: 'Acme Hospital' }]
            : [],
        ),
    });
    const onSubmit = vi.fn();
    renderWithHearth(<ResourceForm defaultValue={{ resourceType: 'Patient' }} onSubmit={onSubmit} />, client);
    await user.type(screen.getByRole('textbox', { name: 'Managing organization' }), 'Acme');
    await user.click(await screen.findByRole('option', { name: 'Acme Hospital' }));
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(onSubmit).toHaveBeenCalled());
    expect(onSubmit.mock.calls[0][0]).toEqual({
      resourceType: 'Patient',
      managingOrganization: { reference: 'Organization/o1', display: 'Acme Hospital' },
    });
    expect(requests.some((r) => r.url.searchParams.get('name') === 'Acme')).toBe(true);
  });

  it('looks CodeableConcept codes up with ValueSet/$expand', async () => {
    const user = userEvent.setup({ delay: null });
    const { client, requests } = mockClient({
      'GET /fhir/R4/ValueSet/$expand': () => ({
        resourceType: 'ValueSet',
        status: 'active',
        expansion: {
          timestamp: '2024-01-01T00:00:00Z',
          contains: [
            { system: 'http://terminology.hl7.org/CodeSystem/v3-MaritalStatus', code: 'M', display: 'Married' },
          ],
        },
      }),
    });
    const onSubmit = vi.fn();
    renderWithHearth(<ResourceForm defaultValue={{ resourceType: 'Patient' }} onSubmit={onSubmit} />, client);
    await user.click(screen.getByRole('textbox', { name: 'Marital status' }));
    await user.click(await screen.findByRole('option', { name: 'Married (M)' }));
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(onSubmit).toHaveBeenCalled());
    expect(onSubmit.mock.calls[0][0].maritalStatus.coding).toEqual([
      { system: 'http://terminology.hl7.org/CodeSystem/v3-MaritalStatus', code: 'M', display: 'Married' },
    ]);
    expect(requests.find((r) => r.url.pathname.endsWith('$expand'))?.url.searchParams.get('url')).toBe(
      'http://hl7.org/fhir/ValueSet/marital-status',
    );
  });
});
