import { createIssue, type OperationOutcomeIssue, type Resource } from '@hearth/core';
import { choiceName, getSchema, type FhirSchema } from '@hearth/definitions';
import type { ResourceValidator } from '../storage/types.js';
import type { BindingChecker } from './bindings.js';

/** One element with a required binding the type schema does not enumerate. */
interface BoundElement {
  /** Element names from the resource root (`['confidentiality']`, `['content', 'attachment', 'contentType']`). */
  path: string[];
  valueSet: string;
  /** code, Coding or CodeableConcept (other types are not coded). */
  type: string;
}

/** Types not descended into when looking for bound elements: recursive or never bound here. */
const SKIPPED_TYPES = new Set(['Extension', 'Resource', 'DomainResource', 'Narrative', 'Meta', 'Reference', 'Element']);
const MAX_DEPTH = 6;
const CODED = new Set(['code', 'Coding', 'CodeableConcept']);

/**
 * The required bindings of R4 and the platform whose value sets the type schema could not
 * enumerate at build time (those outside valuesets.json, such as v3-ConfidentialityClassification
 * of Composition.confidentiality, or any a server loads later into its global terminology), by
 * value set url. The schema's own (231 of 237) are checked by the core validator already.
 */
export function unenumeratedBindings(schema: FhirSchema = getSchema()): Set<string> {
  const urls = new Set<string>();
  for (const type of Object.values(schema.types)) {
    for (const element of Object.values(type.elements)) {
      const binding = element.binding;
      if (binding?.strength === 'required' && !Object.hasOwn(schema.valueSets, binding.valueSet)) {
        urls.add(binding.valueSet);
      }
    }
  }
  return urls;
}

/** Canonical without its version (`…|4.0.1`): the global terminology is looked up by url. */
const unversioned = (url: string) => url.split('|')[0];

/**
 * Adds, to a validator, the required bindings that only the terminology module can expand: after
 * `prepare()` (at start, and again whenever global terminology changes, in any process) the value sets among them
 * that expand are held in memory by the binding checker, and each write's codes in those elements
 * are checked synchronously, with the core validator's issue (code-invalid, naming the element).
 * A value set that does not expand here (mimetypes, currencies, UCUM…) is not checked.
 */
export function withTerminologyBindings(
  inner: ResourceValidator,
  bindings: BindingChecker,
  schema: FhirSchema = getSchema(),
): ResourceValidator & { prepare(): Promise<void> } {
  const candidates = unenumeratedBindings(schema);
  /** Value sets that expanded at the last prepare(). */
  let active = new Set<string>();
  const byType = new Map<string, BoundElement[]>();

  const collect = (typeName: string, prefix: string[], depth: number, out: BoundElement[]): void => {
    const type = Object.hasOwn(schema.types, typeName) ? schema.types[typeName] : undefined;
    if (!type || depth > MAX_DEPTH) {
      return;
    }
    for (const [name, element] of Object.entries(type.elements)) {
      for (const t of element.type) {
        const key = name.endsWith('[x]') ? choiceName(name, t.code) : name;
        const path = [...prefix, key];
        const binding = element.binding;
        if (binding?.strength === 'required' && active.has(binding.valueSet) && CODED.has(t.code)) {
          out.push({ path, valueSet: binding.valueSet, type: t.code });
        }
        const child = schema.types[t.code];
        if (child && child.kind !== 'primitive-type' && child.kind !== 'resource' && !SKIPPED_TYPES.has(t.code)) {
          collect(t.code, path, depth + 1, out);
        }
      }
    }
  };
  const boundElements = (resourceType: string): BoundElement[] => {
    let list = byType.get(resourceType);
    if (!list) {
      list = [];
      if (active.size > 0) {
        collect(resourceType, [], 0, list);
      }
      byType.set(resourceType, list);
    }
    return list;
  };

  const check = (resource: Resource, bound: BoundElement, issues: OperationOutcomeIssue[]): void => {
    const visit = (value: unknown, i: number, expression: string): void => {
      if (Array.isArray(value)) {
        value.forEach((item, n) => visit(item, i, `${expression}[${n}]`));
        return;
      }
      if (value === undefined || value === null) {
        return;
      }
      if (i < bound.path.length) {
        const next = (value as Record<string, unknown>)[bound.path[i]];
        visit(next, i + 1, `${expression}.${bound.path[i]}`);
        return;
      }
      const url = unversioned(bound.valueSet);
      if (bound.type === 'code') {
        if (typeof value === 'string' && bindings.validateCodeCached(url, undefined, value) === false) {
          issues.push(
            createIssue(
              'code-invalid',
              `Value "${value}" is not in the required value set ${bound.valueSet}`,
              expression,
            ),
          );
        }
        return;
      }
      const codings = bound.type === 'Coding' ? [value] : (value as { coding?: unknown }).coding;
      if (!Array.isArray(codings) || codings.length === 0) {
        return;
      }
      const answers = codings.map((c) => {
        const coding = c as { system?: unknown; code?: unknown };
        return typeof coding?.code === 'string'
          ? bindings.validateCodeCached(url, typeof coding.system === 'string' ? coding.system : undefined, coding.code)
          : false;
      });
      if (answers.every((a) => a === false)) {
        issues.push(
          createIssue('code-invalid', `No coding is in the required value set ${bound.valueSet}`, expression),
        );
      }
    };
    visit(resource, 0, resource.resourceType);
  };

  return {
    validate(resource, checks) {
      const issues = inner.validate(resource, checks);
      if (issues.length > 0 || active.size === 0 || typeof resource.resourceType !== 'string') {
        return issues;
      }
      const extra: OperationOutcomeIssue[] = [];
      for (const bound of boundElements(resource.resourceType)) {
        check(resource, bound, extra);
      }
      return extra;
    },
    async prepare() {
      const urls = [...candidates];
      await bindings.refresh(urls.map(unversioned));
      // A value set is checked when it expanded: a probe answers true/false rather than undefined.
      active = new Set(
        urls.filter((url) => bindings.validateCodeCached(unversioned(url), undefined, '') !== undefined),
      );
      byType.clear();
    },
  };
}
