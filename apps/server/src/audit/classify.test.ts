import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { patientsIn } from './classify.js';

// The rule as regular expressions: slower, plainly readable, and the scanner must agree with it.
const ID = '[A-Za-z0-9\\-.]{1,64}';
const BY_RULE = [
  new RegExp(`"fullUrl":"[^"]*/Patient/(${ID})"`, 'g'),
  new RegExp(`"resourceType":"Patient","id":"(${ID})"`, 'g'),
  new RegExp(`"reference":"(?:[^"]*/)?Patient/(${ID})(?:/_history/[^"]*)?"`, 'g'),
];
function patientsByRule(text: string): string[] {
  const found = new Set<string>();
  for (const pattern of BY_RULE) for (const m of text.matchAll(pattern)) found.add(`Patient/${m[1]}`);
  return [...found].sort();
}

describe('patientsIn', () => {
  it('finds Patient resources, patient entries and references to patients, and nothing else', () => {
    const text = JSON.stringify({
      resourceType: 'Bundle',
      entry: [
        { fullUrl: 'http://h/fhir/R4/Patient/p1', resource: { resourceType: 'Patient', id: 'p1' } },
        { fullUrl: 'http://h/fhir/R4/Observation/o1', resource: { subject: { reference: 'Patient/p2' } } },
        { resource: { subject: { reference: 'http://h/fhir/R4/Patient/p3/_history/2' } } },
        { resource: { note: [{ text: 'Patient/p4' }], focus: { display: 'Patient/p5' } } },
        { resource: { subject: { reference: 'Group/g1' } } },
      ],
    });
    expect(patientsIn(text).sort()).toEqual(['Patient/p1', 'Patient/p2', 'Patient/p3']);
    expect(patientsIn(undefined, 'Patient/own')).toEqual(['Patient/own']);
    // A version-qualified reference whose string never closes (cut-off text) is no reference.
    expect(patientsIn('"reference":"Patient/Patient/_history/')).toEqual([]);
    // A reference names the last Patient/{id} in it; a string a match used is not read again.
    expect(patientsIn('"reference":"Patient/Patient/."')).toEqual(['Patient/.']);
    expect(patientsIn('"reference":"Patient/a"reference":"Patient/b"')).toEqual(['Patient/a']);
    expect(patientsIn('"fullUrl":"http://h/Patient/Patient/x"')).toEqual(['Patient/x']);
  });

  it('agrees with the rule written as regular expressions, on any JSON', () => {
    const piece = fc.oneof(
      fc.constantFrom(
        '"reference":"',
        '"fullUrl":"',
        '"resourceType":"Patient","id":"',
        'Patient/',
        'http://h/Patient/',
        '/_history/',
        '"',
        ',',
        '{',
        '}',
        ':',
        'x',
        'Patient',
      ),
      fc.stringMatching(/^[A-Za-z0-9\-. /"]{0,70}$/),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), (pieces) => {
        const text = pieces.join('');
        expect(patientsIn(text).sort()).toEqual(patientsByRule(text));
      }),
      { numRuns: 20_000 },
    );
  });
});
