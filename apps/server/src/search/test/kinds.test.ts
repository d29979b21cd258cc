import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/app.js';
import { createAll, names, search, status } from './helpers.js';

let t: TestApp;
const byId = new Map<string, string>();

/** Creates resources named by a tag (meta.tag code is not used for names; the map keeps them). */
async function make(list: [string, Record<string, unknown>][]): Promise<void> {
  const created = await createAll(
    t,
    list.map(([, r]) => r as { resourceType: string }),
  );
  created.forEach((c, i) => byId.set(c.id, list[i][0]));
}

async function find(url: string): Promise<string[]> {
  return names(await search(t, url), byId);
}

beforeAll(async () => {
  t = await createTestApp();
  await make([
    [
      'smith',
      {
        resourceType: 'Patient',
        name: [{ family: 'Smith', given: ['John', 'Paul'] }],
        gender: 'male',
        birthDate: '1980-05-12',
        active: true,
      },
    ],
    [
      'smythe',
      {
        resourceType: 'Patient',
        name: [{ family: 'Smythe', given: ['Jane'] }],
        gender: 'female',
        birthDate: '1980-06',
        active: false,
      },
    ],
    [
      'muller',
      {
        resourceType: 'Patient',
        name: [{ family: 'Müller', given: ['Chloé'] }],
        gender: 'female',
        birthDate: '1975',
        address: [{ city: 'Zürich', postalCode: '8001' }],
      },
    ],
    [
      'garcia',
      {
        resourceType: 'Patient',
        name: [{ family: 'García Márquez', given: ['José'] }],
        gender: 'male',
        birthDate: '2001-01-01',
        identifier: [
          {
            system: 'http://hospital/mrn',
            value: 'MRN-1',
            type: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v2-0203', code: 'MR' }] },
          },
        ],
        telecom: [
          { system: 'email', value: 'jose@example.org' },
          { system: 'phone', value: '555-1234' },
        ],
      },
    ],
    [
      'nameless',
      {
        resourceType: 'Patient',
        gender: 'unknown',
        identifier: [{ system: 'http://other/ids', value: 'MRN-1' }, { value: 'X,Y|Z' }],
      },
    ],
  ]);
  await make([
    [
      'obs-weight-5g',
      {
        resourceType: 'Observation',
        status: 'final',
        code: { coding: [{ system: 'http://loinc.org', code: '29463-7', display: 'Body weight' }], text: 'Weight' },
        effectiveDateTime: '2020-03-15T10:30:00+02:00',
        valueQuantity: { value: 5, unit: 'g', system: 'http://unitsofmeasure.org', code: 'g' },
      },
    ],
    [
      'obs-weight-4000mg',
      {
        resourceType: 'Observation',
        status: 'final',
        code: { coding: [{ system: 'http://loinc.org', code: '29463-7' }] },
        effectiveDateTime: '2020-03-16',
        valueQuantity: { value: 4000, unit: 'mg', system: 'http://unitsofmeasure.org', code: 'mg' },
      },
    ],
    [
      'obs-hr-72',
      {
        resourceType: 'Observation',
        status: 'amended',
        code: { coding: [{ system: 'http://loinc.org', code: '8867-4', display: 'Heart rate' }] },
        effectivePeriod: { start: '2019-12-31T23:00:00Z', end: '2020-01-01T01:00:00Z' },
        valueQuantity: { value: 72.0, unit: '/min', system: 'http://unitsofmeasure.org', code: '/min' },
        component: [
          {
            code: { coding: [{ system: 'http://loinc.org', code: '8480-6' }] },
            valueQuantity: { value: 120, system: 'http://unitsofmeasure.org', code: 'mm[Hg]' },
          },
        ],
      },
    ],
    [
      'obs-bp',
      {
        resourceType: 'Observation',
        status: 'final',
        code: { coding: [{ system: 'http://loinc.org', code: '85354-9' }] },
        effectiveDateTime: '2021',
        component: [
          {
            code: { coding: [{ system: 'http://loinc.org', code: '8480-6' }] },
            valueQuantity: { value: 140, system: 'http://unitsofmeasure.org', code: 'mm[Hg]' },
          },
          {
            code: { coding: [{ system: 'http://loinc.org', code: '8462-4' }] },
            valueQuantity: { value: 90, system: 'http://unitsofmeasure.org', code: 'mm[Hg]' },
          },
        ],
      },
    ],
    [
      'obs-open-period',
      {
        resourceType: 'Observation',
        status: 'preliminary',
        code: { text: 'Free text only' },
        effectivePeriod: { start: '2022-06-01' },
      },
    ],
  ]);
  await make([
    [
      'risk-low',
      {
        resourceType: 'RiskAssessment',
        status: 'final',
        subject: { reference: 'Patient/x' },
        prediction: [{ probabilityDecimal: 0.02 }],
      },
    ],
    [
      'risk-100',
      {
        resourceType: 'RiskAssessment',
        status: 'final',
        subject: { reference: 'Patient/x' },
        prediction: [{ probabilityDecimal: 100 }],
      },
    ],
    [
      'risk-99.7',
      {
        resourceType: 'RiskAssessment',
        status: 'final',
        subject: { reference: 'Patient/x' },
        prediction: [{ probabilityDecimal: 99.7 }],
      },
    ],
  ]);
  await make([
    ['vs-acme', { resourceType: 'ValueSet', status: 'active', url: 'http://acme.org/fhir/ValueSet/123', name: 'Acme' }],
    ['vs-other', { resourceType: 'ValueSet', status: 'draft', url: 'http://other.org/ValueSet/1' }],
    ['loc-paris', { resourceType: 'Location', name: 'Paris', position: { latitude: 48.8566, longitude: 2.3522 } }],
    [
      'loc-versailles',
      { resourceType: 'Location', name: 'Versailles', position: { latitude: 48.8049, longitude: 2.1204 } },
    ],
    ['loc-london', { resourceType: 'Location', name: 'London', position: { latitude: 51.5074, longitude: -0.1278 } }],
  ]);
});
afterAll(async () => {
  await t?.close();
});

describe('string', () => {
  it('matches the start of any name part, ignoring case and accents', async () => {
    expect(await find('Patient?name=smi')).toEqual(['smith']);
    expect(await find('Patient?name=SM')).toEqual(['smith', 'smythe']);
    expect(await find('Patient?name=muller')).toEqual(['muller']);
    expect(await find('Patient?name=chloe')).toEqual(['muller']);
    expect(await find('Patient?family=garcia')).toEqual(['garcia']);
    expect(await find('Patient?given=paul')).toEqual(['smith']);
    expect(await find('Patient?address-city=zur')).toEqual(['muller']);
  });
  it('matches names by sound with phonetic', async () => {
    expect(await find('Patient?phonetic=smyth')).toEqual(['smith', 'smythe']);
    expect(await find('Patient?phonetic=pol')).toEqual(['smith']);
    expect(await find('Patient?phonetic=mueler')).toEqual(['muller']);
  });
  it('supports :exact, :contains and OR', async () => {
    expect(await find('Patient?family:exact=Smith')).toEqual(['smith']);
    expect(await find('Patient?family:exact=smith')).toEqual([]);
    expect(await find('Patient?family:exact=Müller')).toEqual(['muller']);
    expect(await find('Patient?name:contains=yth')).toEqual(['smythe']);
    expect(await find('Patient?name:contains=marq')).toEqual(['garcia']);
    expect(await find('Patient?name=smythe,muller')).toEqual(['muller', 'smythe']);
  });
  it('ANDs repeated parameters', async () => {
    expect(await find('Patient?name=sm&name=jane')).toEqual(['smythe']);
  });
});

describe('token', () => {
  it('matches code, system|code, |code and system|', async () => {
    expect(await find('Patient?gender=female')).toEqual(['muller', 'smythe']);
    expect(await find('Patient?identifier=http://hospital/mrn|MRN-1')).toEqual(['garcia']);
    expect(await find('Patient?identifier=MRN-1')).toEqual(['garcia', 'nameless']);
    expect(await find('Patient?identifier=http://other/ids|')).toEqual(['nameless']);
    expect(await find('Patient?identifier=|X,Y|Z'.replace('X,Y|Z', 'X\\,Y\\|Z'))).toEqual(['nameless']);
    expect(await find('Observation?code=http://loinc.org|29463-7')).toEqual(['obs-weight-4000mg', 'obs-weight-5g']);
    expect(await find('Observation?code=http://snomed.info/sct|29463-7')).toEqual([]);
  });
  it('matches booleans, :not, :text and :of-type', async () => {
    expect(await find('Patient?active=true')).toEqual(['smith']);
    expect(await find('Patient?gender:not=male')).toEqual(['muller', 'nameless', 'smythe']);
    expect(await find('Observation?code:text=body')).toEqual(['obs-weight-5g']);
    expect(await find('Observation?code:text=weight')).toEqual(['obs-weight-5g']);
    expect(await find('Observation?code:text=free')).toEqual(['obs-open-period']);
    expect(await find('Patient?identifier:of-type=http://terminology.hl7.org/CodeSystem/v2-0203|MR|MRN-1')).toEqual([
      'garcia',
    ]);
    expect(await find('Patient?email=jose@example.org')).toEqual(['garcia']);
    expect(await find('Patient?phone=555-1234')).toEqual(['garcia']);
  });
  it('finds by :missing', async () => {
    expect(await find('Patient?name:missing=true')).toEqual(['nameless']);
    expect(await find('Patient?birthdate:missing=true')).toEqual(['nameless']);
    expect((await find('Patient?birthdate:missing=false')).length).toBe(4);
  });
});

describe('date', () => {
  it('treats partial dates as ranges', async () => {
    expect(await find('Patient?birthdate=1980')).toEqual(['smith', 'smythe']);
    expect(await find('Patient?birthdate=1980-05')).toEqual(['smith']);
    expect(await find('Patient?birthdate=1980-06-15')).toEqual([]);
    expect(await find('Patient?birthdate=eq1980-06')).toEqual(['smythe']);
  });
  it('applies prefixes to ranges', async () => {
    expect(await find('Patient?birthdate=lt1980')).toEqual(['muller']);
    expect(await find('Patient?birthdate=gt1980-05-12')).toEqual(['garcia', 'smythe']);
    expect(await find('Patient?birthdate=ge1980-05-12')).toEqual(['garcia', 'smith', 'smythe']);
    expect(await find('Patient?birthdate=le1980-05-12')).toEqual(['muller', 'smith']);
    expect(await find('Patient?birthdate=sa1980')).toEqual(['garcia']);
    expect(await find('Patient?birthdate=eb1980')).toEqual(['muller']);
    expect(await find('Patient?birthdate=ne1980')).toEqual(['garcia', 'muller']);
    expect(await find('Patient?birthdate=ge1976&birthdate=le1990')).toEqual(['smith', 'smythe']);
    expect(await find('Patient?birthdate=lt1976,gt2000')).toEqual(['garcia', 'muller']);
  });
  it('compares instants across time zones', async () => {
    // 10:30 at +02:00 is 08:30 UTC.
    expect(await find('Observation?date=2020-03-15T08:30:00Z')).toEqual(['obs-weight-5g']);
    expect(await find('Observation?date=gt2020-03-15T08:31:00Z&date=lt2020-03-16')).toEqual([]);
    expect(await find('Observation?date=2020-03-15')).toEqual(['obs-weight-5g']);
    expect(await find('Observation?date=lt2020-03-15T08:30:00%2B01:00')).toEqual(['obs-hr-72']);
  });
  it('searches Periods, including open ones', async () => {
    expect(await find('Observation?date=2020-01-01')).toEqual([]);
    // The period overlaps 2020-01-01 but neither lies within it nor extends past it: not ge (spec ranges).
    expect(await find('Observation?date=ge2020-01-01&date=lt2020-01-02')).toEqual([]);
    expect(await find('Observation?date=ge2019-12-31&date=lt2020-01-02')).toEqual(['obs-hr-72']);
    expect(await find('Observation?date=ap2020-01-01')).toContain('obs-hr-72');
    expect(await find('Observation?date=sa2023')).toEqual([]);
    expect(await find('Observation?date=gt2030')).toEqual(['obs-open-period']);
  });
  it('rejects a malformed date with a 400 naming the parameter', async () => {
    const res = await status(t, 'Patient?birthdate=1980-13');
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain('birthdate');
  });
});

describe('number and quantity', () => {
  it('uses the implicit precision of the search value', async () => {
    // 100 means [99.5, 100.5); 100.0 means [99.95, 100.05) (hl7.org/fhir/R4/search.html#number).
    expect(await find('RiskAssessment?probability=100')).toEqual(['risk-100', 'risk-99.7']);
    expect(await find('RiskAssessment?probability=100.0')).toEqual(['risk-100']);
    expect(await find('RiskAssessment?probability=1e2')).toEqual(['risk-100', 'risk-99.7']);
    expect(await find('RiskAssessment?probability=gt99.7')).toEqual(['risk-100']);
    expect(await find('RiskAssessment?probability=ge99.7')).toEqual(['risk-100', 'risk-99.7']);
    expect(await find('RiskAssessment?probability=lt1')).toEqual(['risk-low']);
    expect(await find('RiskAssessment?probability=0.02')).toEqual(['risk-low']);
    expect(await find('RiskAssessment?probability=ap100')).toEqual(['risk-100', 'risk-99.7']);
  });
  it('compares quantities with UCUM prefixes normalised', async () => {
    expect(await find('Observation?value-quantity=5|http://unitsofmeasure.org|g')).toEqual(['obs-weight-5g']);
    expect(await find('Observation?value-quantity=5000|http://unitsofmeasure.org|mg')).toEqual(['obs-weight-5g']);
    expect(await find('Observation?value-quantity=4|http://unitsofmeasure.org|g')).toEqual(['obs-weight-4000mg']);
    expect(await find('Observation?value-quantity=gt4.5|http://unitsofmeasure.org|g')).toEqual(['obs-weight-5g']);
    expect(await find('Observation?value-quantity=lt0.01|http://unitsofmeasure.org|kg')).toEqual([
      'obs-weight-4000mg',
      'obs-weight-5g',
    ]);
    expect(await find('Observation?value-quantity=72')).toEqual(['obs-hr-72']);
    expect(await find('Observation?value-quantity=72||/min')).toEqual(['obs-hr-72']);
  });
  it('rejects a malformed number', async () => {
    expect((await status(t, 'RiskAssessment?probability=abc')).status).toBe(400);
  });
});

describe('composite', () => {
  it('requires both parts in the same element', async () => {
    expect(await find('Observation?component-code-value-quantity=http://loinc.org|8480-6$gt130')).toEqual(['obs-bp']);
    expect(await find('Observation?component-code-value-quantity=http://loinc.org|8480-6$lt130')).toEqual([
      'obs-hr-72',
    ]);
    // 90 belongs to the diastolic part, not to the systolic code.
    expect(await find('Observation?component-code-value-quantity=http://loinc.org|8480-6$90')).toEqual([]);
    expect(
      await find('Observation?code-value-quantity=http://loinc.org|29463-7$5|http://unitsofmeasure.org|g'),
    ).toEqual(['obs-weight-5g']);
  });
});

describe('composite of three parts, one read from %resource', () => {
  it('MolecularSequence chromosome-variant-coordinate', async () => {
    await make([
      [
        'seq-1',
        {
          resourceType: 'MolecularSequence',
          type: 'dna',
          coordinateSystem: 0,
          referenceSeq: {
            chromosome: { coding: [{ system: 'http://example.org/chromosomes', code: '1' }] },
            genomeBuild: 'GRCh38',
          },
          variant: [
            { start: 100, end: 200 },
            { start: 500, end: 510 },
          ],
        },
      ],
    ]);
    const q = (v: string) => find(`MolecularSequence?chromosome-variant-coordinate=${v}`);
    expect(await q('1$ge50$le300')).toEqual(['seq-1']);
    expect(await q('1$ge450$le520')).toEqual(['seq-1']);
    // Start of one variant and end of another: not one coordinate.
    expect(await q('1$ge150$le300')).toEqual([]);
    expect(await q('2$ge50$le300')).toEqual([]);
  });
});

describe('escaping and the meta parameters', () => {
  it('\\$ and \\, inside composite and string values; _tag, _profile, _security, _source', async () => {
    await make([
      [
        'meta-a',
        {
          resourceType: 'Observation',
          status: 'final',
          code: { coding: [{ system: 'http://example.org/codes', code: 'price' }] },
          valueString: 'a$b,c',
          meta: {
            tag: [{ system: 'http://example.org/tags', code: 'red' }],
            profile: ['http://example.org/StructureDefinition/priced'],
            security: [{ system: 'http://terminology.hl7.org/CodeSystem/v3-Confidentiality', code: 'R' }],
            source: 'http://example.org/source-a',
          },
        },
      ],
      [
        'meta-b',
        {
          resourceType: 'Observation',
          status: 'final',
          code: { coding: [{ system: 'http://example.org/codes', code: 'price' }] },
          valueString: 'a',
          meta: { tag: [{ system: 'http://example.org/tags', code: 'blue' }], source: 'http://example.org/source-b' },
        },
      ],
    ]);
    const price = 'http://example.org/codes|price';
    expect(await find(`Observation?code-value-string=${price}$${encodeURIComponent('a\\$b\\,c')}`)).toEqual(['meta-a']);
    // Unescaped, '$' splits the composite and ',' the alternatives: 'a' matches meta-b (and meta-a by prefix).
    expect(await find(`Observation?code-value-string=${price}$a`)).toEqual(['meta-a', 'meta-b']);
    expect(await find('Observation?_tag=http://example.org/tags|red')).toEqual(['meta-a']);
    expect(await find('Observation?_tag:not=http://example.org/tags|red&code=price')).toEqual(['meta-b']);
    expect(await find('Observation?_profile=http://example.org/StructureDefinition/priced')).toEqual(['meta-a']);
    expect(await find('Observation?_security=R')).toEqual(['meta-a']);
    expect(await find('Observation?_source=http://example.org/source-b')).toEqual(['meta-b']);
  });
});

describe('uri', () => {
  it('matches exactly, :below and :above', async () => {
    expect(await find('ValueSet?url=http://acme.org/fhir/ValueSet/123')).toEqual(['vs-acme']);
    expect(await find('ValueSet?url=http://acme.org/fhir')).toEqual([]);
    expect(await find('ValueSet?url:below=http://acme.org/fhir/')).toEqual(['vs-acme']);
    expect(await find('ValueSet?url:above=http://acme.org/fhir/ValueSet/123/_history/5')).toEqual(['vs-acme']);
  });
});

describe('special', () => {
  it('near finds locations within a distance', async () => {
    expect(await find('Location?near=48.85|2.35|30|km')).toEqual(['loc-paris', 'loc-versailles']);
    expect(await find('Location?near=48.85|2.35|5|km')).toEqual(['loc-paris']);
    expect(await find('Location?near=48.85|2.35|500|km')).toEqual(['loc-london', 'loc-paris', 'loc-versailles']);
    // Units, and the default distance (5 km).
    expect(await find('Location?near=48.85|2.35|20000|m')).toEqual(['loc-paris', 'loc-versailles']);
    expect(await find('Location?near=48.8566|2.3522')).toEqual(['loc-paris']);
    expect((await status(t, 'Location?near=48.85|2.35|-1|km')).status).toBe(400);
    expect((await status(t, 'Location?near=48.85|2.35|1|parsec')).status).toBe(400);
  });
  it('near across the antimeridian', async () => {
    await make([
      ['loc-east', { resourceType: 'Location', name: 'East', position: { latitude: -16.5, longitude: 179.95 } }],
      ['loc-west', { resourceType: 'Location', name: 'West', position: { latitude: -16.5, longitude: -179.95 } }],
    ]);
    // 0.1 degree of longitude apart (about 10 km at this latitude).
    expect(await find('Location?near=-16.5|179.99|20|km')).toEqual(['loc-east', 'loc-west']);
    expect(await find('Location?near=-16.5|-179.99|20|km')).toEqual(['loc-east', 'loc-west']);
    expect(await find('Location?near=-16.5|-179.9|2|km')).toEqual([]);
  });
  it('_id, _lastUpdated', async () => {
    const [id] = [...byId].find(([, n]) => n === 'smith')!;
    expect(await find(`Patient?_id=${id}`)).toEqual(['smith']);
    expect((await find('Patient?_lastUpdated=gt2000-01-01')).length).toBe(5);
    expect(await find('Patient?_lastUpdated=lt2000-01-01')).toEqual([]);
  });
});
