// @vitest-environment jsdom
import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { OperationOutcomeAlert } from '../OperationOutcomeAlert/OperationOutcomeAlert.js';
import { ResourceBadge } from '../ResourceBadge/ResourceBadge.js';
import { mockClient, renderWithHearth } from '../test/render.js';
import { Timeline } from '../Timeline/Timeline.js';
import { ResourceTable } from './ResourceTable.js';

describe('ResourceTable and display components', () => {
  it('shows each element with a value, choice types under their base name, references as links', async () => {
    const { client } = mockClient({
      'GET /fhir/R4/Patient/p1': () => ({
        resourceType: 'Patient',
        id: 'p1',
        name: [{ given: ['Ada'], family: 'Lovelace' }],
      }),
    });
    renderWithHearth(
      <ResourceTable
        value={{
          resourceType: 'Observation',
          id: 'o1',
          status: 'final',
          code: { text: 'Heart rate' },
          subject: { reference: 'Patient/p1' },
          valueQuantity: { value: 72, unit: 'beats/min' },
        }}
      />,
      client,
    );
    const table = screen.getByRole('table', { name: 'Observation details' });
    const row = (label: string) => within(table).getByRole('row', { name: new RegExp(`^${label}`) });
    expect(row('Status').textContent).toContain('final');
    expect(row('Value').textContent).toContain('72 beats/min');
    expect(row('Code').textContent).toContain('Heart rate');
    expect((await within(row('Subject')).findByRole('link', { name: 'Ada Lovelace' })).getAttribute('href')).toBe(
      '/Patient/p1',
    );
    expect(within(table).queryByRole('row', { name: /^Issued/ })).toBeNull();
  });

  it('shows an OperationOutcome message, and a badge with initials', async () => {
    const { client } = mockClient({});
    renderWithHearth(
      <>
        <OperationOutcomeAlert
          outcome={{
            resourceType: 'OperationOutcome',
            issue: [{ severity: 'error', code: 'not-found', details: { text: 'Patient/x not found' } }],
          }}
        />
        <ResourceBadge
          value={{ resourceType: 'Practitioner', id: 'd1', name: [{ given: ['Grace'], family: 'Hopper' }] } as never}
        />
      </>,
      client,
    );
    expect(screen.getByRole('alert').textContent).toContain('Patient/x not found');
    expect(screen.getByRole('link', { name: 'Grace Hopper' })).toBeTruthy();
    expect(screen.getByText('GH')).toBeTruthy();
  });

  it('orders a timeline newest first', () => {
    const { client } = mockClient({});
    renderWithHearth(
      <Timeline
        items={[
          { date: '2024-01-01T00:00:00Z', title: 'First visit' },
          { date: '2024-06-01T00:00:00Z', title: 'Second visit' },
        ]}
      />,
      client,
    );
    const titles = screen.getAllByText(/visit/).map((e) => e.textContent);
    expect(titles).toEqual(['Second visit', 'First visit']);
  });

  it('opens timeline items with the keyboard', async () => {
    const user = userEvent.setup({ delay: null });
    const { client } = mockClient({});
    const onClick = vi.fn();
    renderWithHearth(
      <Timeline
        items={[
          { date: '2024-01-01T00:00:00Z', title: 'First visit' },
          { date: '2024-06-01T00:00:00Z', title: 'Second visit' },
        ]}
        onClick={onClick}
      />,
      client,
    );
    await user.tab();
    expect(document.activeElement).toBe(screen.getByRole('button', { name: /Second visit/ }));
    await user.keyboard('{Enter}');
    await user.tab();
    await user.keyboard(' ');
    expect(onClick.mock.calls.map(([item]) => item.title)).toEqual(['Second visit', 'First visit']);
  });
});
