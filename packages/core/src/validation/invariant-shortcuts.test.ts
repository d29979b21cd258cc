import { getSchema } from '@hearth/definitions';
import fc from 'fast-check';
import fhirpath from 'fhirpath';
import r4Model from 'fhirpath/fhir-context/r4/index.js';
import { describe, expect, it } from 'vitest';
import { HOLDS_WITHOUT_EVALUATION } from './invariant-shortcuts.js';
import type { ValidatorSchema } from './schema.js';
import { createValidator } from './validator.js';

type Json = Record<string, unknown>;
const schema: ValidatorSchema = getSchema();

/**
 * The invariants of the profiles the validator applies by code (the vital signs), each with what
 * it is evaluated on: the element's path (its value typed from it) or, for the resource, its type.
 */
const PROFILE_INVARIANTS: Record<string, string> = {
  'vs-1': 'Observation.effectiveDateTime',
  'vs-2': 'Observation',
  'vs-3': 'Observation.component',
};

function profileConstraint(expression: string): { key: string } | undefined {
  for (const profile of Object.values(schema.profiles ?? {})) {
    for (const element of profile.snapshot?.element ?? []) {
      const found = element.constraint?.find((c) => c.expression === expression && c.key in PROFILE_INVARIANTS);
      if (found) return found;
    }
  }
  return undefined;
}

/** Where each expression is declared: the type an element-level one is evaluated on, or a resource type. */
function declaredOn(expression: string): string | undefined {
  for (const type of Object.values(schema.types)) {
    if (type.constraint?.some((c) => c.expression === expression)) return type.name;
    for (const element of Object.values(type.elements)) {
      if (element.constraint?.some((c) => c.expression === expression)) return type.name;
    }
  }
  const key = profileConstraint(expression)?.key;
  return key ? PROFILE_INVARIANTS[key] : undefined;
}

/** The expression evaluated as the validator does; true when it holds (not exactly [false]). */
function holds(expression: string, base: string | undefined, node: unknown, resource: unknown): boolean {
  const fn = fhirpath.compile(base ? { base, expression } : expression, r4Model, {
    resolveInternalTypes: false,
    traceFn: () => undefined,
  });
  let result: unknown[];
  try {
    result = fn(node as never, { resource, rootResource: resource } as never) as unknown[];
  } catch {
    return true; // the validator reports no issue for an expression that throws
  }
  return !(result.length === 1 && result[0] === false);
}

const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const extension = fc.constant({ extension: [{ url: 'http://example.org/x', valueString: 'x' }] });
const dateTime = fc.constantFrom('2020', '2020-01-02', '2020-01-02T03:04:05Z', '2021-06-01T00:00:00+02:00');
const defined = (o: Json): Json => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
const patient = (contained?: Json[]): Json => defined({ resourceType: 'Patient', id: 'p', contained });

/** Per expression: the values it is evaluated on (node) and the resource around them. */
const samples: Record<string, fc.Arbitrary<{ node: Json; resource: Json }>> = {
  'ref-1': fc
    .record({
      reference: maybe(fc.constantFrom('#a', '#b', '#', 'Patient/1', 'urn:uuid:1', 'http://x/Patient/1', '')),
      _reference: maybe(extension),
      display: maybe(fc.constant('x')),
      contained: fc.boolean(),
    })
    .map(({ contained, ...ref }) => ({
      node: defined(ref),
      resource: patient(contained ? [{ resourceType: 'Organization', id: 'a' }] : undefined),
    })),
  'per-1': fc
    .record({ start: maybe(dateTime), end: maybe(dateTime), _start: maybe(extension), _end: maybe(extension) })
    .map((p) => ({ node: defined(p), resource: patient() })),
  'qty-3': fc
    .record({
      value: maybe(fc.constant(1)),
      code: maybe(fc.constant('mg')),
      _code: maybe(extension),
      system: maybe(fc.constant('http://unitsofmeasure.org')),
      _system: maybe(extension),
    })
    .map((q) => ({ node: defined(q), resource: patient() })),
  'att-1': fc
    .record({
      data: maybe(fc.constant('aGk=')),
      _data: maybe(extension),
      contentType: maybe(fc.constant('text/plain')),
      _contentType: maybe(extension),
    })
    .map((a) => ({ node: defined(a), resource: patient() })),
};
const containedResource = fc
  .record({
    meta: maybe(
      fc.record({
        versionId: maybe(fc.constant('1')),
        lastUpdated: maybe(fc.constant('2020-01-01T00:00:00Z')),
        security: maybe(fc.constant([{ system: 'http://x', code: 'R' }])),
      }),
    ),
    contained: maybe(fc.constant([{ resourceType: 'Patient', id: 'n' }])),
  })
  .map((r) => ({ resourceType: 'Organization', id: 'c', ...defined(r) }));
const withContained = fc
  .record({ contained: maybe(fc.array(containedResource, { minLength: 0, maxLength: 2 })) })
  .map((r) => {
    const resource = patient(r.contained as Json[] | undefined);
    return { node: resource, resource };
  });
for (const key of ['dom-2', 'dom-4', 'dom-5']) samples[key] = withContained;
const code = { coding: [{ system: 'http://loinc.org', code: '1' }] };
const observations = fc
  .record({
    valueQuantity: maybe(fc.constant({ value: 1 })),
    dataAbsentReason: maybe(fc.constant({ text: 'x' })),
    component: maybe(
      fc.array(
        fc.record({
          code: fc.constantFrom(code, { coding: [{ system: 'http://loinc.org', code: '2' }] }),
          valueString: maybe(fc.constant('x')),
        }),
        { minLength: 1, maxLength: 2 },
      ),
    ),
  })
  .map((o) => {
    const resource = defined({ resourceType: 'Observation', status: 'final', code, ...o });
    return { node: resource, resource };
  });
samples['obs-6'] = observations;
samples['obs-7'] = observations;
/** Absent half of the time: the vital signs' samples need values with none of their parts. */
const often = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 2 });
const valueOrAbsent = {
  valueQuantity: often(fc.constant({ value: 1 })),
  valueString: often(fc.constantFrom('x', null)),
  _valueString: often(extension),
  dataAbsentReason: often(fc.constant({ text: 'x' })),
};
samples['vs-2'] = fc
  .record({
    ...valueOrAbsent,
    component: often(fc.constantFrom([], [{ code, valueString: 'x' }])),
    hasMember: often(fc.constantFrom([], [{ reference: 'Observation/1' }])),
  })
  .map((o) => {
    const resource = defined({ resourceType: 'Observation', status: 'final', code, ...o });
    return { node: resource, resource };
  });
samples['vs-3'] = fc
  .record(valueOrAbsent)
  .map((c) => ({ node: defined({ code, ...c }), resource: defined({ resourceType: 'Observation', code }) }));
samples['vs-1'] = fc
  .oneof(
    fc.constantFrom('2020', '2020-01', '2020-01-02', '2020-01-02T03:04:05Z'),
    fc.constant({ start: '2020-01-02' } as Json),
  )
  .map((node) => ({ node: node as Json, resource: defined({ resourceType: 'Observation', code }) }));

/** The key of each shortcut's expression, from the definitions (the types', then the vital signs profiles'). */
function keyOf(expression: string): string | undefined {
  for (const type of Object.values(schema.types)) {
    for (const c of [...(type.constraint ?? []), ...Object.values(type.elements).flatMap((e) => e.constraint ?? [])]) {
      if (c.expression === expression) return c.key;
    }
  }
  return profileConstraint(expression)?.key;
}

describe('invariants that hold without evaluation', () => {
  for (const [expression, shortcut] of HOLDS_WITHOUT_EVALUATION) {
    const key = keyOf(expression);
    it(`${key ?? expression}: the shortcut says "holds" only where the FHIRPath does`, () => {
      // The expression is one of R4's, word for word (otherwise the shortcut would never apply).
      expect(key).toBeDefined();
      const type = declaredOn(expression) as string;
      const isResource = schema.types[type]?.kind === 'resource';
      expect(type, `where ${key} is declared`).toBeDefined();
      const arb = samples[key as string];
      expect(arb, `samples for ${key}`).toBeDefined();
      let shortcuts = 0;
      let evaluated = 0;
      fc.assert(
        fc.property(arb, ({ node, resource }) => {
          if (shortcut(node)) {
            shortcuts++;
            expect(holds(expression, isResource ? undefined : type, node, resource)).toBe(true);
          } else {
            evaluated++;
          }
        }),
        { numRuns: 200 },
      );
      // Both branches were met: the samples reach the shortcut and the values it leaves to FHIRPath.
      expect(shortcuts).toBeGreaterThan(0);
      expect(evaluated).toBeGreaterThan(0);
    });
  }

  it('still reports what the shortcut leaves to FHIRPath', () => {
    const validator = createValidator(schema);
    const issues = (r: unknown) => validator.validate(r).map((i) => i.details?.text ?? '');
    const observation = {
      resourceType: 'Observation',
      status: 'final',
      code,
      subject: { reference: '#missing' },
      effectivePeriod: { start: '2021-01-01', end: '2020-01-01' },
      valueQuantity: { value: 1, code: 'mg' },
      dataAbsentReason: { text: 'x' },
    };
    const found = issues(observation).join('\n');
    for (const key of ['ref-1', 'per-1', 'qty-3', 'obs-6']) expect(found).toContain(`${key}:`);
    expect(issues({ ...observation, subject: { reference: 'Patient/1' } }).join('\n')).not.toContain('ref-1:');
  });
});
