/**
 * Per-type lookup tables for the validator, compiled lazily (once per type and schema) so that
 * validating a resource is a walk over its JSON with one Map lookup per property.
 */
import { ExtensionChecker } from './extensions.js';
import { InvariantChecker } from './invariants.js';
import { RequiredProfiles } from './required-profiles.js';
import type { ValidatorConstraint, ValidatorElement, ValidatorSchema, ValidatorType } from './schema.js';

export interface CompiledBinding {
  valueSet: string;
  /** Codes alone, for `code` elements (the system is implied by the element). */
  codes: Set<string>;
  /** 'system|code', for Coding and CodeableConcept. */
  codings: Set<string>;
}

export interface CompiledElement {
  /** Name in the definition: 'gender', 'value[x]'. */
  name: string;
  path: string;
  min: number;
  max: number;
  isArray: boolean;
  choice: boolean;
  /** JSON property names: ['gender'], or ['valueQuantity', 'valueString', ...] for a choice. */
  jsonNames: string[];
  /** Which of jsonNames hold primitives (and so may also appear as `_name`). */
  primitiveNames: Set<string>;
  binding?: CompiledBinding;
  /** Resource types a Reference may point to; absent when any type is allowed. */
  targets?: Set<string>;
  /** The element's own invariants that are evaluated (checked on each value). */
  constraints?: ValidatorConstraint[];
}

export interface CompiledProperty {
  element: CompiledElement;
  /** The value's type name. */
  type: string;
  primitive: boolean;
}

export interface CompiledType {
  name: string;
  kind: string;
  /** A resource type (or Resource / DomainResource) whose JSON carries resourceType. */
  isResource: boolean;
  abstract: boolean;
  properties: Map<string, CompiledProperty>;
  required: CompiledElement[];
  choices: CompiledElement[];
  /** Invariants of the type and the types it specializes, checked on each instance. */
  constraints?: ValidatorConstraint[];
}

function choiceName(elementName: string, typeCode: string): string {
  return elementName.slice(0, -3) + typeCode.charAt(0).toUpperCase() + typeCode.slice(1);
}

export class CompiledSchema {
  private readonly types = new Map<string, CompiledType | null>();
  private readonly bindings = new Map<string, CompiledBinding | null>();
  /** Compiled FHIRPath of the invariants, shared by every validation over this schema. */
  readonly invariants = new InvariantChecker();
  readonly extensions: ExtensionChecker;
  /** The profiles the specification requires by code (vital signs), when the schema has them. */
  readonly requiredProfiles?: RequiredProfiles;

  constructor(readonly schema: ValidatorSchema) {
    this.extensions = new ExtensionChecker(schema);
    if (schema.profilesByCode?.length) {
      this.requiredProfiles = new RequiredProfiles(schema);
    }
  }

  getType(name: string): CompiledType | undefined {
    let compiled = this.types.get(name);
    if (compiled === undefined) {
      const source = Object.hasOwn(this.schema.types, name) ? this.schema.types[name] : undefined;
      compiled = source ? this.compile(source) : null;
      this.types.set(name, compiled);
    }
    return compiled ?? undefined;
  }

  isPrimitive(name: string): boolean {
    return this.schema.types[name]?.kind === 'primitive-type';
  }

  private compile(source: ValidatorType): CompiledType {
    const type: CompiledType = {
      name: source.name,
      kind: source.kind,
      isResource: source.kind === 'resource',
      abstract: source.abstract === true,
      properties: new Map(),
      required: [],
      choices: [],
      constraints: InvariantChecker.applicable(this.inheritedConstraints(source)),
    };
    for (const [name, el] of Object.entries(source.elements)) {
      const element = this.compileElement(name, el);
      if (element.choice) {
        type.choices.push(element);
      }
      if (element.min > 0) {
        type.required.push(element);
      }
      el.type.forEach((t, i) => {
        const jsonName = element.jsonNames[i];
        type.properties.set(jsonName, { element, type: t.code, primitive: element.primitiveNames.has(jsonName) });
      });
    }
    return type;
  }

  /** A type's own invariants and those of its base types (Age: age-1 and Quantity's qty-3). */
  private inheritedConstraints(source: ValidatorType): ValidatorConstraint[] {
    const all: ValidatorConstraint[] = [];
    const seen = new Set<string>();
    for (let t: ValidatorType | undefined = source; t && !seen.has(t.name);) {
      seen.add(t.name);
      all.push(...(t.constraint ?? []));
      t = t.base && Object.hasOwn(this.schema.types, t.base) ? this.schema.types[t.base] : undefined;
    }
    return all;
  }

  private compileElement(name: string, el: ValidatorElement): CompiledElement {
    const choice = name.endsWith('[x]');
    const jsonNames = choice ? el.type.map((t) => choiceName(name, t.code)) : [name];
    const primitiveNames = new Set<string>();
    el.type.forEach((t, i) => {
      if (this.isPrimitive(t.code)) {
        primitiveNames.add(jsonNames[i]);
      }
    });
    const element: CompiledElement = {
      name,
      path: el.path,
      min: el.min,
      max: el.max === '*' ? Number.POSITIVE_INFINITY : Number(el.max),
      isArray: el.isArray,
      choice,
      jsonNames,
      primitiveNames,
      constraints: InvariantChecker.applicable(el.constraint),
    };
    const targets = el.type.flatMap((t) => (t.code === 'Reference' ? (t.targetProfile ?? []) : []));
    const names = targets.map((url) => url.slice(url.lastIndexOf('/') + 1));
    if (names.length > 0 && !names.includes('Resource')) {
      element.targets = new Set(names);
    }
    if (el.binding?.strength === 'required') {
      const binding = this.getBinding(el.binding.valueSet);
      if (binding) {
        element.binding = binding;
      }
    }
    return element;
  }

  private getBinding(valueSet: string): CompiledBinding | undefined {
    let binding = this.bindings.get(valueSet);
    if (binding === undefined) {
      const members = this.schema.valueSets[valueSet];
      binding = members
        ? {
            valueSet,
            codings: new Set(members),
            codes: new Set(members.map((m) => m.slice(m.indexOf('|') + 1))),
          }
        : null;
      this.bindings.set(valueSet, binding);
    }
    return binding ?? undefined;
  }
}
