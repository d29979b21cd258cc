// @vitest-environment jsdom
import type { Bundle, Condition, Encounter } from '@hearth/core';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useState } from 'react';
import { describe, expect, it, vi } from 'vitest';
import { bundle, mockClient, Reply, renderWithHearth } from '../test/render.js';
import { diagnosisTransaction } from './diagnosis.js';
import { EncounterDiagnoses } from './EncounterDiagnoses.js';

const encounter: Encounter = {
  resourceType: 'Encounter',
  id: 'e1',
  meta: { versionId: '3' },
  status: 'in-progress',
  class: { system: 'http://terminology.hl7.org/CodeSystem/v3-ActCode', code: 'AMB' },
  subject: { reference: 'Patient/p1' },
};
const asthma = { coding: [{ system: 'http://snomed.info/sct', code: '195967001', display: 'Asthma' }], text: 'Asthma' };

describe('diagnosisTransaction', () => {
  it('creates an encounter-diagnosis Condition and links it from the Encounter, if it is unchanged', () => {
    const bundle = diagnosisTransaction(
      encounter,
      asthma,
      { reference: 'Practitioner/d1' },
      '2024-01-01T10:00:00Z',
      () => 'u1',
    );
    const condition = bundle.entry?.[0].resource as Condition;
    expect(condition.category?.[0].coding?.[0]).toMatchObject({
      system: 'http://terminology.hl7.org/CodeSystem/condition-category',
      code: 'encounter-diagnosis',
    });
    expect(condition).toMatchObject({
      code: asthma,
      subject: encounter.subject,
      encounter: { reference: 'Encounter/e1' },
    });
    expect(bundle.entry?.[1].request).toEqual({ method: 'PUT', url: 'Encounter/e1', ifMatch: 'W/"3"' });
    expect((bundle.entry?.[1].resource as Encounter).diagnosis).toEqual([
      { condition: { reference: 'urn:uuid:u1' }, rank: 1 },
    ]);
  });
});

describe('EncounterDiagnoses', () => {
  it('adds a diagnosis typed in when the value set cannot be expanded, and lists it', async () => {
    const user = userEvent.setup({ delay: null });
    const stored: Condition[] = [];
    const onAdded = vi.fn();
    const { client } = mockClient({
      'GET /fhir/R4/Condition': () => bundle(stored),
      'GET /fhir/R4/ValueSet/$expand': () =>
        new Reply(400, { resourceType: 'OperationOutcome', issue: [{ severity: 'error', code: 'not-supported' }] }),
      'POST /fhir/R4/': (req) => {
        const sent = req.body as Bundle;
        stored.push({ ...(sent.entry?.[0].resource as Condition), id: 'c1' });
        return {
          resourceType: 'Bundle',
          type: 'transaction-response',
          entry: [
            { response: { status: '201 Created' }, resource: stored[0] },
            { response: { status: '200 OK' }, resource: { ...encounter, meta: { versionId: '4' } } },
          ],
        };
      },
    });
    // The page keeps the encounter's newest version, as the app's encounter page does.
    function Page() {
      const [current, setCurrent] = useState(encounter);
      return (
        <EncounterDiagnoses
          encounter={current}
          onAdded={(next) => {
            onAdded(next);
            setCurrent(next);
          }}
        />
      );
    }
    renderWithHearth(<Page />, client);
    await screen.findByText('No diagnosis yet');
    await user.type(await screen.findByLabelText('Diagnosis text'), 'Viral pharyngitis');
    await user.click(screen.getByRole('button', { name: 'Add diagnosis' }));
    await waitFor(() => expect(onAdded).toHaveBeenCalled());
    expect((onAdded.mock.calls[0][0] as Encounter).meta?.versionId).toBe('4');
    expect(stored[0].code?.text).toBe('Viral pharyngitis');
    const list = await screen.findByRole('list', { name: 'Diagnoses' });
    expect(within(list).getByText('Viral pharyngitis')).toBeTruthy();
  });
});
