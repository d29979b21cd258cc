import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { Resource } from '@hearth/core';
import { describe, expect, it } from 'vitest';
import { unitIssues, withUnitChecks } from './units.js';

const UCUM = 'http://unitsofmeasure.org';
const SYNTHEA = resolve(import.meta.dirname, '../../../../../shared/data/synthea-r4');

const observation = (valueQuantity: Record<string, unknown>, component?: unknown[]) =>
  ({ resourceType: 'Observation', status: 'final', code: { text: 'x' }, valueQuantity, component }) as Resource;

describe('UCUM unit codes', () => {
  it('accepts valid codes, annotations included, and codes of other systems', () => {
    for (const code of ['mg', 'mg/dL', '[lb_av]', 'Cel', '{beats}/min', '10*3/uL', 'kg/m2', '%', '1', 'm[IU]/mL']) {
      expect(unitIssues(observation({ value: 1, system: UCUM, code })), code).toEqual([]);
    }
    expect(unitIssues(observation({ value: 1, system: 'http://example.org/units', code: 'furlongs' }))).toEqual([]);
    expect(unitIssues(observation({ value: 1, unit: 'furlongs' }))).toEqual([]);
  });

  it('warns of invalid codes with the UCUM system, wherever they are', () => {
    const issues = unitIssues(
      observation({ value: 1, system: UCUM, code: 'kilograms' }, [
        { code: { text: 'a' }, valueQuantity: { value: 1, system: UCUM, code: 'mg' } },
        { code: { text: 'b' }, valueQuantity: { value: 1, system: UCUM, code: 'mg /dL' } },
      ]),
    );
    expect(issues.map((i) => `${i.expression?.[0]}: ${i.details?.text}`)).toEqual([
      'Observation.valueQuantity.code: "kilograms" is not a valid UCUM unit code',
      'Observation.component[1].valueQuantity.code: "mg /dL" is not a valid UCUM unit code',
    ]);
    expect(issues[0].severity).toBe('warning');
  });

  it('runs after the structural checks, which come first', () => {
    const inner = {
      validate: (r: Resource) => (r.id === 'bad' ? [{ severity: 'error' as const, code: 'structure' as const }] : []),
    };
    const validator = withUnitChecks(inner);
    expect(validator.validate({ ...observation({ system: UCUM, code: 'x y' }), id: 'bad' })).toHaveLength(1);
    expect(validator.validate(observation({ system: UCUM, code: 'x y' }))[0].code).toBe('code-invalid');
  });

  it.skipIf(!existsSync(SYNTHEA))('finds no invalid code in the Synthea patients', () => {
    let quantities = 0;
    const problems: string[] = [];
    for (const file of readdirSync(join(SYNTHEA, 'patients')).slice(0, 20)) {
      const bundle = JSON.parse(gunzipSync(readFileSync(join(SYNTHEA, 'patients', file))).toString('utf8'));
      for (const { resource } of bundle.entry) {
        quantities += (JSON.stringify(resource).match(/unitsofmeasure/g) ?? []).length;
        problems.push(...unitIssues(resource).map((i) => `${file}: ${i.details?.text}`));
      }
    }
    expect(quantities).toBeGreaterThan(1000);
    expect(problems).toEqual([]);
  });
});
