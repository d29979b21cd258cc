/**
 * Extensions (hl7.org/fhir/R4/extensibility.html): one whose definition is known must be used in
 * a context the definition allows and carry a value of a type it allows (or none, for a complex
 * extension); a modifier extension nobody knows is an error, since a reader cannot safely ignore it
 * (extensibility.html#modifierExtension).
 */
import type { OperationOutcomeIssue } from '../fhir-types.js';
import { createIssue } from '../outcome.js';
import type { ValidatorExtension, ValidatorSchema, ValidatorType } from './schema.js';

type Json = Record<string, unknown>;

const ABSOLUTE = /^[A-Za-z][A-Za-z0-9+.-]*:/;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** 'valueString' -> 'string', 'valueCodeableConcept' -> 'CodeableConcept'. */
function valueType(extension: Json): string | undefined {
  for (const key in extension) {
    if (key.startsWith('value') && key.length > 5 && extension[key] !== undefined) {
      return key.slice(5);
    }
    if (key.startsWith('_value') && key.length > 6 && extension[key] !== undefined) {
      return key.slice(6);
    }
  }
  return undefined;
}

export class ExtensionChecker {
  /** Per holder type: the type names it is or specializes (Age: Age, Quantity, Element). */
  private readonly lineage = new Map<string, Set<string>>();

  constructor(private readonly schema: ValidatorSchema) {}

  /** Checks the extensions and modifier extensions of a value of type `holder`. */
  check(value: Json, holder: string, path: string, issues: OperationOutcomeIssue[]): void {
    const known = this.schema.extensions;
    if (!known) {
      return;
    }
    for (const key of ['extension', 'modifierExtension'] as const) {
      const list = value[key];
      if (!Array.isArray(list)) {
        continue;
      }
      list.forEach((extension, i) => {
        if (!isObject(extension) || typeof extension.url !== 'string' || !ABSOLUTE.test(extension.url)) {
          return; // a nested extension of a complex one names its part with a relative url
        }
        const at = `${path}.${key}[${i}]`;
        const url = extension.url.split('|')[0];
        const definition = Object.hasOwn(known, url) ? known[url] : undefined;
        if (!definition) {
          if (key === 'modifierExtension') {
            issues.push(createIssue('extension', `Unknown modifier extension ${url}: it cannot be safely ignored`, at));
          }
          return;
        }
        this.checkKnown(extension, definition, url, holder, at, issues);
      });
    }
  }

  private checkKnown(
    extension: Json,
    definition: ValidatorExtension,
    url: string,
    holder: string,
    path: string,
    issues: OperationOutcomeIssue[],
  ): void {
    const type = valueType(extension);
    if (type !== undefined) {
      const allowed = definition.types.some((t) => t.toLowerCase() === type.toLowerCase());
      if (!allowed) {
        issues.push(
          createIssue(
            'structure',
            definition.types.length === 0
              ? `The extension ${url} has no value of its own (only nested extensions), found value${type}`
              : `The extension ${url} allows a value of type ${definition.types.join(', ')}, not ${type}`,
            path,
          ),
        );
      }
    }
    if (definition.contexts.length > 0 && !definition.contexts.some((c) => this.inContext(c, holder))) {
      // A warning: R4's own resources use extensions outside their declared contexts by the hundred
      // (structuredefinition-normative-version on every CodeSystem of the specification, ...).
      issues.push(
        createIssue(
          'structure',
          `The extension ${url} is not allowed on ${holder} (its contexts: ${definition.contexts.join(', ')})`,
          path,
          'warning',
        ),
      );
    }
  }

  /** Whether an extension on a value of type `holder` is in the context `context`. */
  private inContext(context: string, holder: string): boolean {
    if (context === 'Element' || context === 'Base' || this.lineageOf(holder).has(context)) {
      return true;
    }
    if (holder === 'Extension' && ABSOLUTE.test(context)) {
      return true; // the context is another extension, which this one is nested in
    }
    // An element path ('Patient.birthDate', 'Observation.value[x]'): a value of one of its types.
    const dot = context.lastIndexOf('.');
    if (dot > 0) {
      const owner = this.schema.types[context.slice(0, dot)];
      const element = owner?.elements[context.slice(dot + 1)];
      return element?.type.some((t) => this.lineageOf(holder).has(t.code)) ?? false;
    }
    return false;
  }

  private lineageOf(type: string): Set<string> {
    let names = this.lineage.get(type);
    if (!names) {
      names = new Set();
      let t: ValidatorType | undefined = this.schema.types[type];
      while (t && !names.has(t.name)) {
        names.add(t.name);
        t = t.base ? this.schema.types[t.base] : undefined;
      }
      names.add(type);
      this.lineage.set(type, names);
    }
    return names;
  }
}
