// @vitest-environment jsdom
import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { OperationOutcomeAlert } from '../OperationOutcomeAlert/OperationOutcomeAlert.js';
import { ResourceBadge } from '../ResourceBadge/ResourceBadge.js';
import { bundle, mockClient, renderWithHearth } from '../test/render.js';
import { Timeline } from '../Timeline/Timeline.js';
import { ResourceTable } from './ResourceTable.js';

describe('ResourceTable and display components', () => {
  it('shows each element with a value, choice types under their base name, references as links', async () => {
    const { client } = mockClient({
      'GET /fhir/R4/Patient': () =>
        bundle([{ resourceType: 'Patient', id: 'p1', name: [{ given: ['Ada'], family: 'Lovelace' }] }]),
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
    // The id stays visible as a secondary detail.
    expect(row('Subject').textContent).toContain('Patient/p1');
    expect(within(table).queryByRole('row', { name: /^Issued/ })).toBeNull();
  });

  it('resolves the references of a page in one search per type, and keeps the answers', async () => {
    const { client, requests } = mockClient({
      'GET /fhir/R4/Practitioner': (req) =>
        bundle(
          (req.url.searchParams.get('_id') ?? '')
            .split(',')
            .filter((id) => id !== 'gone')
            .map((id) => ({ resourceType: 'Practitioner', id, name: [{ family: `Doctor ${id}` }] })),
        ),
      'GET /fhir/R4/Organization': () => bundle([{ resourceType: 'Organization', id: 'o1', name: 'Acme Clinic' }]),
    });
    const references = [
      'Practitioner/d1',
      'Practitioner/d2',
      'Practitioner/d1',
      'Organization/o1',
      'Practitioner/gone',
    ];
    const view = renderWithHearth(
      <>
        {references.map((reference, i) => (
          <ResourceBadge key={i} value={{ reference }} avatar={false} />
        ))}
        <ResourceBadge value={{ reference: 'Practitioner/d3', display: 'Dr Given Display' }} avatar={false} />
      </>,
      client,
    );
    expect(await screen.findAllByRole('link', { name: 'Doctor d1' })).toHaveLength(2);
    expect(screen.getByRole('link', { name: 'Doctor d2' })).toBeTruthy();
    expect(screen.getByRole('link', { name: 'Acme Clinic' })).toBeTruthy();
    expect(await screen.findByRole('link', { name: 'Practitioner/gone (unavailable)' })).toBeTruthy();
    const searches = requests.map((r) => `${r.url.pathname}?${r.url.searchParams.get('_id')}`);
    expect(searches.sort()).toEqual(['/fhir/R4/Organization?o1', '/fhir/R4/Practitioner?d1,d2,gone,d3']);
    // Shown again (another render of the same references): answered from what was kept.
    view.rerender(<div />);
    renderWithHearth(<ResourceBadge value={{ reference: 'Practitioner/d1' }} avatar={false} />, client);
    expect(requests).toHaveLength(2);
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
