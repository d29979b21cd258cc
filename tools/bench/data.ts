/** Reproducible synthetic FHIR data for the benchmark (seeded PRNG: the same seed gives the same data). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FAMILY = [
  'Smith',
  'Johnson',
  'Williams',
  'Brown',
  'Jones',
  'Garcia',
  'Miller',
  'Davis',
  'Rodriguez',
  'Martinez',
  'Hernández',
  'Lopez',
  'Gonzalez',
  'Wilson',
  'Anderson',
  'Thomas',
  'Taylor',
  'Moore',
  'Jackson',
  'Martin',
  'Lee',
  'Perez',
  'Thompson',
  'White',
  'Harris',
  'Sánchez',
  'Clark',
  'Ramirez',
  'Lewis',
  'Robinson',
];
const GIVEN = [
  'James',
  'Mary',
  'Robert',
  'Patricia',
  'John',
  'Jennifer',
  'Michael',
  'Linda',
  'David',
  'Elizabeth',
  'William',
  'Barbara',
  'Richard',
  'Susan',
  'José',
  'Jessica',
  'Thomas',
  'Sarah',
  'Chloé',
  'Karen',
];
export const OBSERVATION_CODES = [
  { code: '8867-4', display: 'Heart rate', unit: '/min', low: 50, high: 110 },
  { code: '8310-5', display: 'Body temperature', unit: 'Cel', low: 36, high: 39 },
  { code: '29463-7', display: 'Body weight', unit: 'kg', low: 40, high: 120 },
  { code: '8302-2', display: 'Body height', unit: 'cm', low: 140, high: 200 },
  { code: '9279-1', display: 'Respiratory rate', unit: '/min', low: 10, high: 25 },
  { code: '2339-0', display: 'Glucose', unit: 'mg/dL', low: 70, high: 200 },
  { code: '2093-3', display: 'Cholesterol', unit: 'mg/dL', low: 120, high: 280 },
  { code: '718-7', display: 'Hemoglobin', unit: 'g/dL', low: 10, high: 18 },
];
const CONDITIONS = [
  { code: '44054006', display: 'Diabetes mellitus type 2' },
  { code: '38341003', display: 'Hypertensive disorder' },
  { code: '195967001', display: 'Asthma' },
  { code: '40055000', display: 'Chronic sinusitis' },
];

export const IDENTIFIER_SYSTEM = 'http://hearth.example/mrn';

function pick<T>(rand: () => number, list: T[]): T {
  return list[Math.floor(rand() * list.length)];
}

function isoDate(rand: () => number, fromYear: number, toYear: number): string {
  const t = Date.UTC(fromYear, 0, 1) + rand() * (Date.UTC(toYear, 0, 1) - Date.UTC(fromYear, 0, 1));
  return new Date(t).toISOString();
}

/** A Patient of about 1 KB. */
export function makePatient(rand: () => number, n: number): Record<string, unknown> {
  const family = pick(rand, FAMILY);
  const given = pick(rand, GIVEN);
  return {
    resourceType: 'Patient',
    identifier: [{ system: IDENTIFIER_SYSTEM, value: `MRN-${n}` }],
    active: true,
    name: [{ use: 'official', family, given: [given, pick(rand, GIVEN)] }],
    telecom: [
      { system: 'phone', value: `555-${String(n).padStart(7, '0')}`, use: 'home' },
      { system: 'email', value: `${given.toLowerCase()}.${n}@example.org` },
    ],
    gender: rand() < 0.5 ? 'female' : 'male',
    birthDate: isoDate(rand, 1930, 2020).slice(0, 10),
    address: [
      {
        use: 'home',
        line: [`${Math.floor(rand() * 9999)} Main Street`, `Apt ${Math.floor(rand() * 99)}`],
        city: 'Springfield',
        state: 'MA',
        postalCode: String(10000 + Math.floor(rand() * 89999)),
        country: 'US',
      },
    ],
    maritalStatus: {
      coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v3-MaritalStatus', code: 'M', display: 'Married' }],
    },
    communication: [{ language: { coding: [{ system: 'urn:ietf:bcp:47', code: 'en-US' }] } }],
  };
}

export function makeObservation(rand: () => number, subject: string, encounter?: string): Record<string, unknown> {
  const c = pick(rand, OBSERVATION_CODES);
  const value = Math.round((c.low + rand() * (c.high - c.low)) * 10) / 10;
  return {
    resourceType: 'Observation',
    status: 'final',
    category: [
      {
        coding: [{ system: 'http://terminology.hl7.org/CodeSystem/observation-category', code: 'vital-signs' }],
      },
    ],
    code: { coding: [{ system: 'http://loinc.org', code: c.code, display: c.display }], text: c.display },
    subject: { reference: subject },
    ...(encounter ? { encounter: { reference: encounter } } : {}),
    effectiveDateTime: isoDate(rand, 2015, 2025),
    valueQuantity: { value, unit: c.unit, system: 'http://unitsofmeasure.org', code: c.unit },
  };
}

/**
 * A transaction Bundle of `size` entries: one patient, then encounters, conditions and
 * observations that point at it (and at the encounters) by urn:uuid.
 */
export function makePatientTransaction(
  rand: () => number,
  n: number,
  size = 150,
  observations?: number,
): Record<string, unknown> {
  const uuid = () => globalThis.crypto.randomUUID();
  const patientUrl = `urn:uuid:${uuid()}`;
  const entries: Record<string, unknown>[] = [
    { fullUrl: patientUrl, resource: makePatient(rand, n), request: { method: 'POST', url: 'Patient' } },
  ];
  const obsCount = observations ?? Math.round((size - 1) * 0.73);
  const encounterCount = Math.max(1, Math.round((size - 1 - obsCount) * 0.55));
  const conditionCount = size - 1 - obsCount - encounterCount;
  const encounters: string[] = [];
  for (let i = 0; i < encounterCount; i++) {
    const url = `urn:uuid:${uuid()}`;
    encounters.push(url);
    const start = isoDate(rand, 2015, 2025);
    entries.push({
      fullUrl: url,
      resource: {
        resourceType: 'Encounter',
        status: 'finished',
        class: { system: 'http://terminology.hl7.org/CodeSystem/v3-ActCode', code: 'AMB' },
        subject: { reference: patientUrl },
        period: { start, end: new Date(Date.parse(start) + 3600_000).toISOString() },
      },
      request: { method: 'POST', url: 'Encounter' },
    });
  }
  for (let i = 0; i < conditionCount; i++) {
    const c = pick(rand, CONDITIONS);
    entries.push({
      fullUrl: `urn:uuid:${uuid()}`,
      resource: {
        resourceType: 'Condition',
        clinicalStatus: {
          coding: [{ system: 'http://terminology.hl7.org/CodeSystem/condition-clinical', code: 'active' }],
        },
        code: { coding: [{ system: 'http://snomed.info/sct', code: c.code, display: c.display }] },
        subject: { reference: patientUrl },
        encounter: { reference: pick(rand, encounters) },
        onsetDateTime: isoDate(rand, 2000, 2025),
      },
      request: { method: 'POST', url: 'Condition' },
    });
  }
  for (let i = 0; i < obsCount; i++) {
    entries.push({
      fullUrl: `urn:uuid:${uuid()}`,
      resource: makeObservation(rand, patientUrl, pick(rand, encounters)),
      request: { method: 'POST', url: 'Observation' },
    });
  }
  return { resourceType: 'Bundle', type: 'transaction', entry: entries };
}
