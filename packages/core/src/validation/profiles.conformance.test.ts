/**
 * Profiles over real data: the constraint StructureDefinitions of the R4 core package (with
 * their published snapshots: shareablevalueset, shareablecodesystem, vitalsigns…) against the
 * specification examples that declare them. Skipped without ../shared/data.
 */
import { getSchema } from '@hearth/definitions';
import { existsSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { ProfileValidator } from './profiles.js';
import type { ProfileDefinition } from './snapshot.js';
import { breather, packageResources, SPEC_CORE, SPEC_EXAMPLES } from './spec-data.test-util.js';

const present = existsSync(SPEC_CORE) && existsSync(SPEC_EXAMPLES);
if (!present) {
  console.warn(`Skipping profile conformance: ${SPEC_CORE} or ${SPEC_EXAMPLES} not found`);
}

describe.skipIf(!present)('R4 core profiles against the specification examples', () => {
  const definitions = new Map<string, ProfileDefinition>();
  const examples: [string, Record<string, unknown>][] = [];
  const validator = new ProfileValidator({ schema: getSchema(), resolve: (url) => definitions.get(url) });
  let declaring: [string, Record<string, unknown>][] = [];

  // Read in a hook, not while collecting, and with pauses: tens of megabytes of JSON.
  beforeAll(async () => {
    const breathe = breather();
    for (const [, resource] of packageResources(SPEC_CORE)) {
      await breathe();
      if (resource.resourceType === 'StructureDefinition' && resource.derivation === 'constraint') {
        definitions.set(resource.url as string, resource as unknown as ProfileDefinition);
      }
    }
    for (const entry of packageResources(SPEC_EXAMPLES)) {
      await breathe();
      examples.push(entry);
    }
    declaring = examples.filter(([, r]) =>
      ((r.meta as { profile?: string[] } | undefined)?.profile ?? []).some((p) => definitions.has(p)),
    );
  });

  it('every example conforms to the core profiles it declares', { timeout: 600_000 }, async () => {
    const breathe = breather();
    const failures: string[] = [];
    for (const [file, resource] of declaring) {
      await breathe();
      for (const url of (resource.meta as { profile: string[] }).profile.filter((p) => definitions.has(p))) {
        const errors = validator.validate(resource, url).filter((i) => i.severity === 'error');
        if (errors.length > 0) {
          failures.push(
            `${file} ${url}: ${errors
              .slice(0, 3)
              .map((i) => `${i.expression?.[0]}: ${i.details?.text}`)
              .join('; ')}`,
          );
        }
      }
    }
    expect(declaring.length).toBeGreaterThan(1900);
    expect(failures.slice(0, 20)).toEqual([]);
  });

  it('finds what breaks the vital signs profiles', () => {
    const heartRate = examples.find(([file]) => file === 'Observation-heart-rate.json')![1];
    const url = 'http://hl7.org/fhir/StructureDefinition/vitalsigns';
    expect(validator.validate(heartRate, url)).toEqual([]);
    const { subject: _s, ...noSubject } = heartRate;
    const broken = { ...noSubject, category: [{ text: 'vitals' }], valueQuantity: { value: 44, unit: 'beats/minute' } };
    const texts = validator.validate(broken, url).map((i) => `${i.expression?.[0]}: ${i.details?.text}`);
    expect(texts).toEqual([
      'Observation.category: Slice Observation.category:VSCat: minimum required = 1, but only found 0',
      'Observation.subject: Observation.subject: minimum required = 1, but only found 0',
    ]);
    // heartrate slices value[x] by type: its valueQuantity needs a UCUM system and code.
    const heartrate = 'http://hl7.org/fhir/StructureDefinition/heartrate';
    expect(validator.validate(heartRate, heartrate)).toEqual([]);
    expect(
      validator
        .validate({ ...heartRate, valueQuantity: { value: 44, unit: 'beats/minute' } }, heartrate)
        .map((i) => i.details?.text),
    ).toEqual([
      'Observation.value[x]:valueQuantity.system: minimum required = 1, but only found 0',
      'Observation.value[x]:valueQuantity.code: minimum required = 1, but only found 0',
    ]);
    expect(
      validator
        .validate({ ...heartRate, valueString: 'fast', valueQuantity: undefined }, heartrate)
        .map((i) => i.details?.text),
    ).toEqual([
      'Type string is not allowed here: Quantity',
      'This element does not match any known slice of Observation.value[x] and slicing is closed',
    ]);
  });
});
