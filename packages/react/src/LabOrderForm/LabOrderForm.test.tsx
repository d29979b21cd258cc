// @vitest-environment jsdom
import type { Bundle, ServiceRequest } from '@hearth/core';
import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { bundle, mockClient, renderWithHearth } from '../test/render.js';
import { LabOrderActions, LabOrderForm } from './LabOrderForm.js';
import { allowedTransitions, labOrderTransaction, requisitionNumber, transitionOrder } from './order.js';

const LIPID = { system: 'http://loinc.org', code: '57698-3', display: 'Lipid panel with direct LDL - Serum or Plasma' };
const TSH = { system: 'http://loinc.org', code: '3016-3', display: 'Thyrotropin [Units/volume] in Serum or Plasma' };

describe('lab order workflow', () => {
  it('allows draft → active → completed, and revoking a draft or active order, nothing from a final state', () => {
    expect(allowedTransitions('draft').map((t) => t.to)).toEqual(['active', 'revoked']);
    expect(allowedTransitions('active').map((t) => t.to)).toEqual(['completed', 'revoked']);
    expect(allowedTransitions('completed')).toEqual([]);
    expect(allowedTransitions('revoked')).toEqual([]);
    const order = { resourceType: 'ServiceRequest', status: 'draft', intent: 'order', subject: {} } as ServiceRequest;
    expect(transitionOrder(order, 'active').status).toBe('active');
    expect(() => transitionOrder(order, 'completed')).toThrow('A draft order cannot become completed');
  });

  it('numbers requisitions by date without look-alike characters', () => {
    let i = 0;
    const values = [0, 0.99, 0.5, 0.1, 0.3, 0.7];
    expect(requisitionNumber(new Date('2026-03-04T10:00:00Z'), () => values[i++])).toBe('L260304-2ZH5BQ');
    for (let n = 0; n < 200; n++) expect(requisitionNumber(new Date()).slice(8)).toMatch(/^[2-9A-HJKMNP-Z]{6}$/);
  });

  it('builds one ServiceRequest per test under one requisition, with the specimen and the catalogue instruction', () => {
    const tx = labOrderTransaction({
      tests: [LIPID, TSH],
      status: 'active',
      priority: 'stat',
      subject: { reference: 'Patient/p1' },
      requester: { reference: 'Practitioner/dr' },
      reasonReference: { reference: 'Condition/c1', display: 'Hyperlipidemia' },
      specimen: { '3016-3': 'Serum, red top' },
      authoredOn: '2026-03-04T10:00:00Z',
      requisition: 'L260304-ABCDEF',
    });
    const orders = (tx.entry ?? []).map((e) => e.resource as ServiceRequest);
    expect(tx.type).toBe('transaction');
    expect(orders.map((o) => [o.code?.coding?.[0]?.code, o.status, o.priority, o.requisition?.value])).toEqual([
      ['57698-3', 'active', 'stat', 'L260304-ABCDEF'],
      ['3016-3', 'active', 'stat', 'L260304-ABCDEF'],
    ]);
    expect(orders.map((o) => o.identifier?.[0]?.value)).toEqual(['L260304-ABCDEF-1', 'L260304-ABCDEF-2']);
    expect(orders[0].orderDetail).toEqual([{ text: 'Specimen: Serum, gold or red top (SST)' }]);
    expect(orders[1].orderDetail).toEqual([{ text: 'Specimen: Serum, red top' }]);
    expect(orders[0].patientInstruction).toMatch(/^Fast for 9–12 hours/);
    expect(orders[1].patientInstruction).toBeUndefined();
    expect(orders[0].reasonReference).toEqual([{ reference: 'Condition/c1', display: 'Hyperlipidemia' }]);
    expect(orders[0].requester).toEqual({ reference: 'Practitioner/dr' });
  });
});

describe('LabOrderForm', () => {
  it('finds a test by type-ahead and places the order in one transaction', async () => {
    const user = userEvent.setup({ delay: null });
    const onSaved = vi.fn();
    const { client, requests } = mockClient({
      'GET /fhir/R4/ValueSet/$expand': (req) => ({
        resourceType: 'ValueSet',
        status: 'active',
        expansion: { contains: req.url.searchParams.get('filter') === 'lipid' ? [LIPID] : [] },
      }),
      'GET /fhir/R4/Condition': () =>
        bundle([
          {
            resourceType: 'Condition',
            id: 'c1',
            subject: { reference: 'Patient/p1' },
            code: { text: 'Hyperlipidemia' },
          },
        ]),
      'POST /fhir/R4/': (req) => ({
        resourceType: 'Bundle',
        type: 'transaction-response',
        entry: ((req.body as Bundle).entry ?? []).map((e, i) => ({
          resource: { ...(e.resource as object), id: `s${i}` },
        })),
      }),
    });
    renderWithHearth(
      <LabOrderForm
        subject={{ reference: 'Patient/p1' }}
        requester={{ reference: 'Practitioner/dr' }}
        onSaved={onSaved}
      />,
      client,
    );
    await user.click(screen.getByRole('button', { name: 'Place order' }));
    expect(screen.getByText('Choose at least one test')).toBeTruthy();
    expect(requests.filter((r) => r.method === 'POST')).toHaveLength(0);
    await user.type(screen.getByRole('textbox', { name: 'Tests' }), 'lipid');
    await user.click(await screen.findByRole('option', { name: /Lipid panel with direct LDL/ }));
    expect(
      (screen.getByLabelText('Specimen for Lipid panel with direct LDL - Serum or Plasma') as HTMLInputElement).value,
    ).toBe('Serum, gold or red top (SST)');
    await user.click(screen.getByRole('textbox', { name: "Reason: one of the patient's conditions" }));
    await user.click(await screen.findByRole('option', { name: 'Hyperlipidemia' }));
    await user.click(screen.getByRole('button', { name: 'Place order' }));
    await waitFor(() => expect(onSaved).toHaveBeenCalled());
    const sent = requests.find((r) => r.method === 'POST')?.body as Bundle;
    const order = sent.entry?.[0].resource as ServiceRequest;
    expect(order).toMatchObject({
      status: 'active',
      priority: 'routine',
      code: { coding: [LIPID] },
      reasonReference: [{ reference: 'Condition/c1', display: 'Hyperlipidemia' }],
      requester: { reference: 'Practitioner/dr' },
    });
    expect((onSaved.mock.calls[0][0] as ServiceRequest[]).map((o) => o.id)).toEqual(['s0']);
  });
});

describe('LabOrderActions', () => {
  const order = (status: ServiceRequest['status']): ServiceRequest => ({
    resourceType: 'ServiceRequest',
    id: 's1',
    meta: { versionId: '3' },
    status,
    intent: 'order',
    subject: { reference: 'Patient/p1' },
  });

  it('offers only the allowed transitions and applies one conditionally on the version', async () => {
    const user = userEvent.setup({ delay: null });
    const onChange = vi.fn();
    const { client, requests } = mockClient({
      'PUT /fhir/R4/ServiceRequest/s1': (req) => ({ ...(req.body as object), meta: { versionId: '4' } }),
    });
    renderWithHearth(<LabOrderActions order={order('draft')} onChange={onChange} />, client);
    expect(screen.getAllByRole('button').map((b) => b.textContent)).toEqual(['Place order', 'Cancel order']);
    await user.click(screen.getByRole('button', { name: 'Cancel order' }));
    await waitFor(() => expect(onChange).toHaveBeenCalled());
    expect((requests[0].body as ServiceRequest).status).toBe('revoked');
    expect(onChange.mock.calls[0][0]).toMatchObject({ status: 'revoked', meta: { versionId: '4' } });
  });

  it('offers nothing for a completed order', () => {
    const { client } = mockClient({});
    renderWithHearth(<LabOrderActions order={order('completed')} />, client);
    expect(screen.queryAllByRole('button')).toEqual([]);
    expect(screen.getByText('This order is completed: it can no longer change.')).toBeTruthy();
  });
});
