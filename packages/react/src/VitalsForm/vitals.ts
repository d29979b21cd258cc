/**
 * Vital signs as the R4 vital signs profile records them (hl7.org/fhir/R4/observation-vitalsigns.html):
 * one Observation per sign, category vital-signs, a LOINC code from the profile's value set
 * (hl7.org/fhir/R4/valueset-observation-vitalsignresult.html) and a UCUM unit; blood pressure as
 * one panel with systolic and diastolic components; BMI computed from height and weight, derived
 * from them.
 */
import type { Bundle, Observation, Reference } from '@hearth/core';

const LOINC = 'http://loinc.org';
const UCUM = 'http://unitsofmeasure.org';

export type VitalKey =
  'height' | 'weight' | 'systolic' | 'diastolic' | 'heartRate' | 'respiratoryRate' | 'temperature' | 'oxygen';

export interface VitalSign {
  key: VitalKey;
  label: string;
  loinc: string;
  display: string;
  /** UCUM code, and the unit as shown. */
  ucum: string;
  unit: string;
  /** Plausible values: anything outside is taken for a typing error. */
  min: number;
  max: number;
}

export const VITAL_SIGNS: VitalSign[] = [
  {
    key: 'height',
    label: 'Height',
    loinc: '8302-2',
    display: 'Body height',
    ucum: 'cm',
    unit: 'cm',
    min: 20,
    max: 260,
  },
  {
    key: 'weight',
    label: 'Weight',
    loinc: '29463-7',
    display: 'Body weight',
    ucum: 'kg',
    unit: 'kg',
    min: 0.3,
    max: 500,
  },
  {
    key: 'systolic',
    label: 'Systolic',
    loinc: '8480-6',
    display: 'Systolic blood pressure',
    ucum: 'mm[Hg]',
    unit: 'mmHg',
    min: 40,
    max: 300,
  },
  {
    key: 'diastolic',
    label: 'Diastolic',
    loinc: '8462-4',
    display: 'Diastolic blood pressure',
    ucum: 'mm[Hg]',
    unit: 'mmHg',
    min: 20,
    max: 200,
  },
  {
    key: 'heartRate',
    label: 'Heart rate',
    loinc: '8867-4',
    display: 'Heart rate',
    ucum: '/min',
    unit: '/min',
    min: 20,
    max: 300,
  },
  {
    key: 'respiratoryRate',
    label: 'Respiratory rate',
    loinc: '9279-1',
    display: 'Respiratory rate',
    ucum: '/min',
    unit: '/min',
    min: 4,
    max: 80,
  },
  {
    key: 'temperature',
    label: 'Temperature',
    loinc: '8310-5',
    display: 'Body temperature',
    ucum: 'Cel',
    unit: '°C',
    min: 30,
    max: 45,
  },
  {
    key: 'oxygen',
    label: 'Oxygen saturation',
    loinc: '2708-6',
    display: 'Oxygen saturation in Arterial blood',
    ucum: '%',
    unit: '%',
    min: 50,
    max: 100,
  },
];

export const BMI = { loinc: '39156-5', display: 'Body mass index (BMI) [Ratio]', ucum: 'kg/m2', unit: 'kg/m2' };
export const BLOOD_PRESSURE = { loinc: '85354-9', display: 'Blood pressure panel with all children optional' };

export type VitalValues = Partial<Record<VitalKey, number>>;

/** Body mass index, kg/m², to one decimal: weight over height squared. */
export function computeBmi(heightCm: number | undefined, weightKg: number | undefined): number | undefined {
  if (!heightCm || !weightKg) return undefined;
  const metres = heightCm / 100;
  return Math.round((weightKg / (metres * metres)) * 10) / 10;
}

/** What is wrong with the values, by key: out of plausible range, or half a blood pressure. */
export function vitalErrors(values: VitalValues): Partial<Record<VitalKey, string>> {
  const errors: Partial<Record<VitalKey, string>> = {};
  for (const sign of VITAL_SIGNS) {
    const v = values[sign.key];
    if (v !== undefined && (v < sign.min || v > sign.max)) {
      errors[sign.key] = `${sign.label} must be between ${sign.min} and ${sign.max} ${sign.unit}`;
    }
  }
  if ((values.systolic === undefined) !== (values.diastolic === undefined)) {
    errors[values.systolic === undefined ? 'systolic' : 'diastolic'] = 'Enter both blood pressure values';
  }
  return errors;
}

const category = [
  {
    coding: [
      {
        system: 'http://terminology.hl7.org/CodeSystem/observation-category',
        code: 'vital-signs',
        display: 'Vital Signs',
      },
    ],
    text: 'Vital Signs',
  },
];
const code = (loinc: string, display: string) => ({ coding: [{ system: LOINC, code: loinc, display }], text: display });
const quantity = (value: number, unit: string, ucum: string) => ({ value, unit, system: UCUM, code: ucum });

export interface VitalsContext {
  subject: Reference;
  encounter?: Reference;
  performer?: Reference;
  /** When they were measured (a FHIR dateTime). */
  effective: string;
}

/**
 * The values as a transaction Bundle of Observations (hl7.org/fhir/R4/http.html#transaction): one
 * per sign given, blood pressure as a panel, BMI when height and weight are both given, with
 * derivedFrom pointing at them through their urn:uuid full URLs.
 */
export function vitalsTransaction(values: VitalValues, context: VitalsContext, newId: () => string): Bundle {
  const base = {
    resourceType: 'Observation' as const,
    status: 'final' as const,
    category,
    subject: context.subject,
    ...(context.encounter ? { encounter: context.encounter } : {}),
    ...(context.performer ? { performer: [context.performer] } : {}),
    effectiveDateTime: context.effective,
  };
  const entries: { fullUrl: string; resource: Observation }[] = [];
  const add = (resource: Observation) => {
    const fullUrl = `urn:uuid:${newId()}`;
    entries.push({ fullUrl, resource });
    return fullUrl;
  };
  const urls: Partial<Record<VitalKey, string>> = {};
  for (const sign of VITAL_SIGNS) {
    const v = values[sign.key];
    if (v === undefined || sign.key === 'systolic' || sign.key === 'diastolic') continue;
    urls[sign.key] = add({
      ...base,
      code: code(sign.loinc, sign.display),
      valueQuantity: quantity(v, sign.unit, sign.ucum),
    });
  }
  if (values.systolic !== undefined && values.diastolic !== undefined) {
    const component = (['systolic', 'diastolic'] as const).map((key) => {
      const sign = VITAL_SIGNS.find((s) => s.key === key) as VitalSign;
      return {
        code: code(sign.loinc, sign.display),
        valueQuantity: quantity(values[key] as number, sign.unit, sign.ucum),
      };
    });
    add({ ...base, code: code(BLOOD_PRESSURE.loinc, BLOOD_PRESSURE.display), component });
  }
  const bmi = computeBmi(values.height, values.weight);
  if (bmi !== undefined) {
    add({
      ...base,
      code: code(BMI.loinc, BMI.display),
      valueQuantity: quantity(bmi, BMI.unit, BMI.ucum),
      derivedFrom: [{ reference: urls.height }, { reference: urls.weight }],
    });
  }
  return {
    resourceType: 'Bundle',
    type: 'transaction',
    entry: entries.map(({ fullUrl, resource }) => ({
      fullUrl,
      resource,
      request: { method: 'POST', url: 'Observation' },
    })),
  };
}
