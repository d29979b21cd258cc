import type { Dosage } from '@hearth/fhir-types';
import { describe, expect, it } from 'vitest';
import { formatSig } from './sig.js';

const oral = { coding: [{ system: 'http://snomed.info/sct', code: '26643006', display: 'Oral route' }] };
const inhaled = {
  coding: [{ system: 'http://snomed.info/sct', code: '447694001', display: 'Respiratory tract route' }],
};
const dose = (value: number, unit: string) => [
  { doseQuantity: { value, unit, system: 'http://terminology.hl7.org/CodeSystem/v3-orderableDrugForm' } },
];
const tid = (days?: number): Dosage['timing'] => ({
  repeat: {
    frequency: 3,
    period: 1,
    periodUnit: 'd',
    ...(days ? { boundsDuration: { value: days, unit: 'days', system: 'http://unitsofmeasure.org', code: 'd' } } : {}),
  },
});

describe('formatSig', () => {
  it('reads a course of antibiotics as a prescriber would write it', () => {
    expect(formatSig({ doseAndRate: dose(1, 'capsule'), route: oral, timing: tid(10) })).toBe(
      'Take 1 capsule by mouth 3 times a day for 10 days',
    );
  });

  it('pluralizes the dose form, not UCUM units', () => {
    expect(formatSig({ doseAndRate: dose(2, 'tablet'), route: oral, timing: tid() })).toBe(
      'Take 2 tablets by mouth 3 times a day',
    );
    expect(formatSig({ doseAndRate: dose(500, 'mg'), route: oral, timing: tid() })).toBe(
      'Take 500 mg by mouth 3 times a day',
    );
    expect(formatSig({ doseAndRate: dose(5, 'mL'), route: oral, timing: tid() })).toBe(
      'Take 5 mL by mouth 3 times a day',
    );
    expect(formatSig({ doseAndRate: dose(0.5, 'tablet'), route: oral })).toBe('Take 0.5 tablets by mouth');
  });

  it('says once and twice, and an interval in hours', () => {
    const daily = { frequency: 1, period: 1, periodUnit: 'd' as const };
    expect(formatSig({ doseAndRate: dose(1, 'tablet'), route: oral, timing: { repeat: daily } })).toBe(
      'Take 1 tablet by mouth once a day',
    );
    expect(
      formatSig({ doseAndRate: dose(1, 'tablet'), route: oral, timing: { repeat: { ...daily, frequency: 2 } } }),
    ).toBe('Take 1 tablet by mouth twice a day');
    expect(
      formatSig({
        doseAndRate: dose(1, 'tablet'),
        route: oral,
        timing: { repeat: { frequency: 1, period: 8, periodUnit: 'h' } },
      }),
    ).toBe('Take 1 tablet by mouth every 8 hours');
    expect(
      formatSig({
        doseAndRate: dose(1, 'tablet'),
        route: oral,
        timing: { repeat: { frequency: 1, period: 4, periodMax: 6, periodUnit: 'h' } },
      }),
    ).toBe('Take 1 tablet by mouth every 4 to 6 hours');
    expect(
      formatSig({
        doseAndRate: dose(1, 'tablet'),
        route: oral,
        timing: { repeat: { frequency: 1, period: 1, periodUnit: 'wk' } },
      }),
    ).toBe('Take 1 tablet by mouth once a week');
  });

  it('inhales an inhaler, as needed and for a reason', () => {
    expect(
      formatSig({
        doseAndRate: dose(2, 'puff'),
        route: inhaled,
        timing: { repeat: { frequency: 1, period: 4, periodUnit: 'h' } },
        asNeededBoolean: true,
      }),
    ).toBe('Inhale 2 puffs by inhalation every 4 hours as needed');
    expect(
      formatSig({
        doseAndRate: dose(1, 'tablet'),
        route: oral,
        asNeededCodeableConcept: { text: 'Pain' },
      }),
    ).toBe('Take 1 tablet by mouth as needed for pain');
  });

  it('reads a dose range, a one-day course and extra instructions', () => {
    expect(
      formatSig({
        doseAndRate: [{ doseRange: { low: { value: 1, unit: 'tablet' }, high: { value: 2, unit: 'tablet' } } }],
        route: oral,
        timing: { repeat: { frequency: 1, period: 1, periodUnit: 'd', boundsDuration: { value: 1, code: 'd' } } },
        additionalInstruction: [{ text: 'With food.' }],
      }),
    ).toBe('Take 1 to 2 tablets by mouth once a day for 1 day. With food');
  });

  it('falls back to the free text, and to nothing', () => {
    expect(formatSig({ text: 'Use as directed' })).toBe('Use as directed');
    expect(formatSig({})).toBe('');
    expect(formatSig(undefined)).toBe('');
    expect(formatSig({ route: { text: 'Topical' } })).toBe('Take topical');
  });
});
