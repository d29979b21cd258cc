// @vitest-environment jsdom
import type { CarePlan } from '@hearth/core';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { bundle, mockClient, Reply, renderWithHearth, type Recorded } from '../test/render.js';
import { ApplyPlanForm, CarePlanList } from './CarePlanList.js';

describe('CarePlanList', () => {
  it("lists the patient's plans with the progress of their tasks", async () => {
    const user = userEvent.setup({ delay: null });
    const onOpen = vi.fn();
    const { client, requests } = mockClient({
      'GET /fhir/R4/CarePlan': () => ({
        resourceType: 'Bundle',
        type: 'searchset',
        entry: [
          {
            resource: {
              resourceType: 'CarePlan',
              id: 'cp1',
              status: 'active',
              intent: 'plan',
              title: 'Diabetes follow-up',
            },
            search: { mode: 'match' },
          },
          ...['completed', 'requested', 'in-progress', 'completed'].map((status, i) => ({
            resource: {
              resourceType: 'Task',
              id: `t${i}`,
              status,
              intent: 'order',
              basedOn: [{ reference: 'CarePlan/cp1' }],
            },
            search: { mode: 'include' },
          })),
        ],
      }),
    });
    renderWithHearth(<CarePlanList patientId="p1" onOpen={onOpen} />, client);
    const item = await screen.findByRole('listitem', { name: 'Diabetes follow-up' });
    expect(within(item).getByText('2 of 4 activities done')).toBeTruthy();
    expect(within(item).getByRole('progressbar', { name: 'Diabetes follow-up progress 50%' })).toBeTruthy();
    expect(requests[0].url.searchParams.get('subject')).toBe('Patient/p1');
    expect(requests[0].url.searchParams.get('_revinclude')).toBe('Task:based-on');
    await user.click(within(item).getByRole('button', { name: 'Diabetes follow-up' }));
    expect(onOpen).toHaveBeenCalledWith('cp1');
  });
});

describe('ApplyPlanForm', () => {
  it('finds a PlanDefinition as one types and applies it to the patient', async () => {
    const user = userEvent.setup({ delay: null });
    const onApplied = vi.fn();
    const created: CarePlan = { resourceType: 'CarePlan', id: 'new', status: 'active', intent: 'plan', subject: {} };
    const { client, requests } = mockClient({
      'GET /fhir/R4/PlanDefinition': (req: Recorded) =>
        bundle(
          req.url.searchParams.get('title:contains') === 'diab'
            ? [
                {
                  resourceType: 'PlanDefinition',
                  id: 'pd1',
                  status: 'active',
                  title: 'Diabetes follow-up',
                  version: '2',
                },
              ]
            : [],
        ),
      'POST /fhir/R4/PlanDefinition/pd1/$apply': () => created,
    });
    renderWithHearth(
      <ApplyPlanForm patientId="p1" practitioner={{ reference: 'Practitioner/dr' }} onApplied={onApplied} />,
      client,
    );
    const form = screen.getByRole('form', { name: 'Apply a plan' });
    await user.click(within(form).getByRole('button', { name: 'Apply plan' }));
    expect(await within(form).findByText('Choose a plan definition to apply')).toBeTruthy();
    await user.type(within(form).getByRole('textbox', { name: 'Plan definition' }), 'diab');
    await user.click(await screen.findByRole('option', { name: 'Diabetes follow-up (v2)' }));
    await user.click(within(form).getByRole('button', { name: 'Apply plan' }));
    await waitFor(() => expect(onApplied).toHaveBeenCalledWith(created));
    const post = requests.find((r) => r.method === 'POST');
    expect(post?.body).toEqual({
      resourceType: 'Parameters',
      parameter: [
        { name: 'subject', valueReference: { reference: 'Patient/p1' } },
        { name: 'practitioner', valueReference: { reference: 'Practitioner/dr' } },
      ],
    });
  });

  it("shows the server's OperationOutcome when $apply refuses", async () => {
    const user = userEvent.setup({ delay: null });
    const { client } = mockClient({
      'GET /fhir/R4/PlanDefinition': () =>
        bundle([{ resourceType: 'PlanDefinition', id: 'pd1', status: 'active', title: 'Old plan' }]),
      'POST /fhir/R4/PlanDefinition/pd1/$apply': () =>
        new Reply(422, {
          resourceType: 'OperationOutcome',
          issue: [
            {
              severity: 'error',
              code: 'processing',
              details: { text: 'PlanDefinition.action[0].dynamicValue is not supported' },
              expression: ['PlanDefinition.action[0].dynamicValue'],
            },
          ],
        }),
    });
    renderWithHearth(<ApplyPlanForm patientId="p1" onApplied={() => undefined} />, client);
    await user.click(screen.getByRole('textbox', { name: 'Plan definition' }));
    await user.click(await screen.findByRole('option', { name: 'Old plan' }));
    await user.click(screen.getByRole('button', { name: 'Apply plan' }));
    expect((await screen.findByRole('alert')).textContent).toContain(
      'PlanDefinition.action[0].dynamicValue is not supported (PlanDefinition.action[0].dynamicValue)',
    );
  });
});
