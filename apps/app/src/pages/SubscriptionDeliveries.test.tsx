// @vitest-environment jsdom
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import type { Subscription } from '@hearth/core';
import { MemoryRouter } from 'react-router';
import { describe, expect, it } from 'vitest';
import { bundle, mockClient, renderWithHearth, Reply } from '../../../../packages/react/src/test/render.js';
import { SubscriptionDeliveries } from './SubscriptionDeliveries.js';

const HOOK: Subscription = {
  resourceType: 'Subscription',
  id: 's1',
  status: 'active',
  reason: 'lab results',
  criteria: 'Observation?code=8867-4',
  channel: { type: 'rest-hook', endpoint: 'https://receiver.example.org/hook' },
};

function attempt(id: string, ok: boolean, about: string, text: string, recorded: string) {
  return {
    resourceType: 'AuditEvent',
    id,
    recorded,
    outcome: ok ? '0' : '4',
    outcomeDesc: text,
    entity: [{ what: { reference: 'Subscription/s1' } }, { what: { reference: about } }],
  };
}

const ATTEMPTS = bundle([
  attempt(
    'a3',
    true,
    'Observation/o2',
    'POST https://receiver.example.org/hook answered 200 (attempt 1 of 5)',
    '2026-11-26T10:02:00Z',
  ),
  attempt(
    'a2',
    false,
    'Observation/o1',
    'POST https://receiver.example.org/hook answered 500 (attempt 2 of 5)',
    '2026-11-26T10:01:00Z',
  ),
  attempt(
    'a1',
    false,
    'Observation/o1',
    'POST https://receiver.example.org/hook answered 500 (attempt 1 of 5)',
    '2026-11-26T10:00:00Z',
  ),
]);

function setup(subscription: Subscription, routes: Parameters<typeof mockClient>[0]) {
  const { client, requests } = mockClient(routes);
  renderWithHearth(
    <MemoryRouter>
      <SubscriptionDeliveries subscription={subscription} />
    </MemoryRouter>,
    client,
  );
  return { requests, user: userEvent.setup({ delay: null }) };
}

describe('SubscriptionDeliveries', () => {
  it("lists the subscription's attempts newest first, with outcome, resource and answer, and sums them up", async () => {
    const { requests } = setup(HOOK, { 'GET /fhir/R4/AuditEvent': () => ATTEMPTS });
    const table = await screen.findByRole('table', { name: 'Subscription deliveries' });
    await waitFor(() => expect(within(table).getAllByRole('row')).toHaveLength(4));
    const [, newest, , oldest] = within(table).getAllByRole('row');
    expect(within(newest).getByText('delivered')).toBeTruthy();
    expect(within(newest).getByRole('link', { name: 'Observation/o2' }).getAttribute('href')).toBe('/Observation/o2');
    expect(newest.textContent).toContain('answered 200 (attempt 1 of 5)');
    expect(within(oldest).getByText('failed')).toBeTruthy();
    expect(screen.getByLabelText('Delivery summary').textContent).toBe('Last 3 attempts: 1 delivered, 2 failed');
    const search = requests.find((r) => r.url.pathname === '/fhir/R4/AuditEvent');
    expect(search?.url.searchParams.get('entity')).toBe('Subscription/s1');
    expect(search?.url.searchParams.get('_sort')).toBe('-date');
  });

  it('resends a resource to this subscription alone, and shows what the server refuses', async () => {
    let answer: unknown = {
      resourceType: 'OperationOutcome',
      issue: [{ severity: 'information', code: 'informational' }],
    };
    const { requests, user } = setup(HOOK, {
      'GET /fhir/R4/AuditEvent': () => ATTEMPTS,
      'POST /fhir/R4/Observation/o2/$resend': () => answer,
    });
    await user.click(await screen.findByRole('button', { name: 'Resend Observation/o2' }));
    expect((await screen.findByRole('status')).textContent).toContain('Observation/o2 sent again.');
    const resend = requests.find((r) => r.method === 'POST');
    expect(resend?.body).toEqual({
      resourceType: 'Parameters',
      parameter: [{ name: 'subscription', valueString: 'Subscription/s1' }],
    });

    answer = new Reply(403, {
      resourceType: 'OperationOutcome',
      issue: [{ severity: 'error', code: 'forbidden', details: { text: 'Forbidden: $resend on Observation' } }],
    });
    await user.click(screen.getByRole('button', { name: 'Resend Observation/o2' }));
    expect(await screen.findByText('Forbidden: $resend on Observation')).toBeTruthy();
  });

  it('says when nothing was attempted yet', async () => {
    setup(HOOK, { 'GET /fhir/R4/AuditEvent': () => bundle([]) });
    expect(await screen.findByText(/No delivery attempts yet/)).toBeTruthy();
  });

  it('explains websocket subscriptions instead of listing attempts', () => {
    const { requests } = setup({ ...HOOK, channel: { type: 'websocket' } }, {});
    expect(screen.getByText(/Websocket notifications go to the sockets bound/)).toBeTruthy();
    expect(screen.queryByRole('table')).toBeNull();
    expect(requests.filter((r) => r.url.pathname === '/fhir/R4/AuditEvent')).toHaveLength(0);
  });
});
