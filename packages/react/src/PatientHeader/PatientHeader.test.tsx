// @vitest-environment jsdom
import type { Patient } from '@hearth/core';
import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { bundle, mockClient, renderWithHearth } from '../test/render.js';
import { ageText, identifierText, PatientHeader } from './PatientHeader.js';

const patient: Patient = {
  resourceType: 'Patient',
  id: 'p1',
  name: [{ given: ['Ada'], family: 'Lovelace' }],
  gender: 'female',
  birthDate: '1990-05-06',
  identifier: [
    {
      type: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v2-0203', code: 'MR' }] },
      system: 'http://hospital.example/mrn',
      value: 'MRN-001',
    },
    { system: 'https://github.com/synthetichealth/synthea', value: 'abc' },
  ],
};

describe('PatientHeader', () => {
  it('shows name, age, sex, identifiers, the active problem count and the allergy banner', async () => {
    const { client, requests } = mockClient({
      'GET /fhir/R4/AllergyIntolerance': () =>
        bundle([
          { resourceType: 'AllergyIntolerance', id: 'a1', code: { text: 'Peanuts' }, criticality: 'high' },
          { resourceType: 'AllergyIntolerance', id: 'a2', code: { text: 'Penicillin' } },
        ]),
      'GET /fhir/R4/Condition': () => ({ resourceType: 'Bundle', type: 'searchset', total: 3 }),
    });
    renderWithHearth(<PatientHeader patient={patient} />, client);
    const header = screen.getByRole('region', { name: 'Patient header' });
    expect(within(header).getByRole('heading', { name: 'Ada Lovelace' })).toBeTruthy();
    expect(header.textContent).toContain('Female');
    expect(header.textContent).toContain(ageText('1990-05-06'));
    expect(within(header).getByText('MR MRN-001')).toBeTruthy();
    expect(within(header).getByText('synthea abc')).toBeTruthy();
    await within(header).findByText('3 active problems');
    const allergies = await screen.findByRole('note', { name: 'Allergy banner' });
    expect(allergies.textContent).toBe('Allergies (2): Peanuts (high criticality), Penicillin');
    const searched = requests.map((r) => `${r.url.pathname}?${r.url.searchParams.toString()}`);
    expect(searched).toContain('/fhir/R4/Condition?patient=Patient%2Fp1&clinical-status=active&_summary=count');
    expect(searched).toContain('/fhir/R4/AllergyIntolerance?patient=Patient%2Fp1&clinical-status=active&_count=50');
  });

  it('says when no allergy is recorded', async () => {
    const { client } = mockClient({
      'GET /fhir/R4/AllergyIntolerance': () => bundle([]),
      'GET /fhir/R4/Condition': () => ({ resourceType: 'Bundle', type: 'searchset', total: 1 }),
      'GET /fhir/R4/Coverage': () => bundle([]),
    });
    renderWithHearth(<PatientHeader patient={patient} />, client);
    expect((await screen.findByRole('note', { name: 'Allergy banner' })).textContent).toBe(
      'No active allergies recorded',
    );
    await screen.findByText('1 active problem');
    expect((await screen.findByRole('note', { name: 'Coverage' })).textContent).toBe('No active coverage');
  });

  it('tells ages in years, months or days', () => {
    const at = new Date('2024-06-15T12:00:00Z');
    expect(ageText('1990-06-16', at)).toBe('33 years');
    expect(ageText('2023-01-10', at)).toBe('17 months');
    expect(ageText('2024-06-01', at)).toBe('14 days');
    expect(identifierText({ value: 'x' })).toBe('x');
  });
});
