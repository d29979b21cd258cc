/**
 * Structural validation of FHIR R4 JSON resources against the type schema
 * (hl7.org/fhir/R4/validation.html, "structure" and "cardinality" plus required bindings):
 * known resource type, no unknown elements, cardinality and array-ness, choice types, primitive
 * formats, primitive extensions (`_name`), contained resources, extensions, and codes of required
 * bindings that the schema enumerates, invariants, and the profiles the specification makes
 * mandatory by code (R4's vital signs: required-profiles.ts). Every problem is one issue with a
 * FHIRPath-like expression ('Patient.name[0].given[1]'). Declared profiles (meta.profile) are the
 * profile validator's (profiles.ts).
 */
import type { OperationOutcomeIssue } from '../fhir-types.js';
import { createIssue, OperationOutcomeError, validationError, type IssueType } from '../outcome.js';
import { CompiledSchema, type CompiledElement, type CompiledProperty, type CompiledType } from './compile.js';
import type { InvariantContext } from './invariants.js';
import type { RequiredProfiles } from './required-profiles.js';
import { checkPrimitive } from './primitives.js';
import { noteReference, type ReferenceUse } from './references.js';
import { checkResourceRules } from './resource-rules.js';
import { checkTypeRules } from './type-rules.js';
import { NarrativeLinks } from './narrative.js';
import type { ValidatorSchema } from './schema.js';

/** What a validation checks beyond the base definitions. */
export interface ValidationChecks {
  /**
   * The profiles the specification requires by code (R4's vital signs: required-profiles.ts), on
   * the resource and the resources in it; default true. A server may leave them to $validate.
   */
  requiredProfiles?: boolean;
}

export interface ValidateOptions extends ValidationChecks {
  schema: ValidatorSchema;
}

export interface Validator {
  /** All the problems found; an empty list means the resource is valid. */
  validate(resource: unknown, checks?: ValidationChecks): OperationOutcomeIssue[];
  /** Throws an OperationOutcomeError (400, one issue per problem) if the resource is invalid. */
  assertValid(resource: unknown, checks?: ValidationChecks): void;
  /** Whether `type` names a concrete resource type of the schema. */
  isResourceType(type: string): boolean;
}

const RESOURCE_TYPE_PATTERN = /^[A-Z][A-Za-z]{0,63}$/;

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function kindOf(value: unknown): string {
  return value === null
    ? 'null'
    : Array.isArray(value)
      ? 'an array'
      : typeof value === 'object'
        ? 'an object'
        : typeof value;
}

const LITERAL_REFERENCE = /(?:^|\/)([A-Z][A-Za-z]+)\/[A-Za-z0-9\-.]{1,64}(?:\/_history\/[A-Za-z0-9\-.]{1,64})?$/;
const CONDITIONAL_REFERENCE = /^([A-Z][A-Za-z]+)\?/;

/** The resource type a reference names, if it names one. */
function referenceType(reference: string): string | undefined {
  const c = reference.charCodeAt(0);
  if (c === 35 /* # */ || reference.startsWith('urn:')) {
    return undefined;
  }
  return (CONDITIONAL_REFERENCE.exec(reference) ?? LITERAL_REFERENCE.exec(reference))?.[1];
}

/** One validation run: collects issues while walking the resource. */
class Run {
  readonly issues: OperationOutcomeIssue[] = [];
  /** The resource being walked and its container, for %resource and %rootResource of invariants. */
  private context: InvariantContext = { resource: undefined, rootResource: undefined };
  /** References met so far, for the rules that look across elements (resource-rules.ts). */
  private readonly references: ReferenceUse[] = [];
  /** The narratives' internal hyperlinks and anchors, judged once the whole instance is walked. */
  readonly narrativeLinks = new NarrativeLinks();

  /** The profiles required by code, when this run checks them. */
  private readonly requiredProfiles: RequiredProfiles | undefined;

  constructor(
    private readonly compiled: CompiledSchema,
    checks: ValidationChecks | undefined,
  ) {
    this.requiredProfiles = checks?.requiredProfiles === false ? undefined : compiled.requiredProfiles;
  }

  issue(code: IssueType, text: string, expression: string): void {
    this.issues.push(createIssue(code, text, expression));
  }

  /** A value whose type is Resource or a resource type: resourceType picks the definition. */
  resource(value: unknown, path: string, expected: string | undefined, contained: boolean): void {
    if (!isObject(value)) {
      this.issue('structure', `Expected a resource (a JSON object), got ${kindOf(value)}`, path);
      return;
    }
    const resourceType = value.resourceType;
    if (typeof resourceType !== 'string') {
      this.issue('required', 'Missing resourceType', path);
      return;
    }
    const type = this.compiled.getType(resourceType);
    if (!type || !type.isResource || type.abstract) {
      this.issue('value', `Unknown resource type "${resourceType}"`, path);
      return;
    }
    if (expected && expected !== 'Resource' && expected !== 'DomainResource' && expected !== resourceType) {
      this.issue('value', `Expected a ${expected} resource, got ${resourceType}`, path);
      return;
    }
    if (contained && value.contained !== undefined) {
      // dom-2: a contained resource SHALL NOT contain further contained resources.
      this.issue('invariant', 'A contained resource cannot contain other resources (dom-2)', `${path}.contained`);
    }
    if (typeof value.id === 'string') {
      this.narrativeLinks.addAnchor(value.id);
    }
    const outer = this.context;
    this.context = { resource: value, rootResource: contained ? outer.resource : value };
    this.object(value, type, path);
    if (this.requiredProfiles?.has(resourceType)) {
      this.requiredProfiles.check(value, resourceType, path, this.context, this.issues);
    }
    checkResourceRules(value, path, this.references, this.issues);
    this.context = outer;
  }

  /** An object of a complex, backbone or resource type. */
  object(obj: Json, type: CompiledType, path: string): void {
    let count = 0;
    for (const key in obj) {
      const value = obj[key];
      if (value === undefined) {
        continue; // absent, as JSON.stringify would have it
      }
      count++;
      if (key === 'resourceType' && type.isResource) {
        continue;
      }
      const property = type.properties.get(key);
      if (!property) {
        if (key.charCodeAt(0) === 95 /* _ */) {
          const base = type.properties.get(key.slice(1));
          if (base?.primitive) {
            this.primitiveExtensions(obj, key.slice(1), base, value, path);
            continue;
          }
        }
        this.issue('structure', `Unknown element "${key}" in ${type.name}`, `${path}.${key}`);
        continue;
      }
      this.property(obj, key, property, value, `${path}.${key}`);
    }
    if (count === 0) {
      this.issue('structure', 'Empty object: an element has a value, children or extensions', path);
      return;
    }
    for (const element of type.required) {
      this.requiredElement(obj, element, path);
    }
    for (const element of type.choices) {
      this.singleChoice(obj, element, path);
    }
    if (type.name === 'Extension') {
      this.extensionContent(obj, type, path);
    }
    checkTypeRules(type.name, obj, path, this.issues, this.narrativeLinks);
    this.compiled.extensions.check(obj, type.name, path, this.issues);
    if (type.constraints) {
      this.compiled.invariants.check(
        type.constraints,
        type.name,
        type.isResource,
        obj,
        this.context,
        path,
        this.issues,
      );
    }
  }

  private property(obj: Json, key: string, property: CompiledProperty, value: unknown, path: string): void {
    const element = property.element;
    if (value === null) {
      this.issue('structure', `Invalid null value: omit the element instead`, path);
      return;
    }
    if (!element.isArray) {
      if (Array.isArray(value)) {
        this.issue('structure', `Expected a single value, not an array (max ${element.max})`, path);
        return;
      }
      this.value(value, property, path);
      return;
    }
    if (!Array.isArray(value)) {
      this.issue('structure', `Expected an array (max ${element.max === Infinity ? '*' : element.max})`, path);
      return;
    }
    if (value.length === 0) {
      this.issue('structure', 'Empty array: omit the element instead', path);
      return;
    }
    if (value.length > element.max) {
      this.issue('structure', `Too many values: ${value.length}, at most ${element.max}`, path);
    }
    const extensions = property.primitive ? obj['_' + key] : undefined;
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      if (item === null && property.primitive && Array.isArray(extensions) && isObject(extensions[i])) {
        continue; // the value is absent but the extension at the same index carries it
      }
      if (item === null) {
        this.issue('structure', 'Invalid null value in array', `${path}[${i}]`);
        continue;
      }
      this.value(item, property, `${path}[${i}]`);
    }
  }

  private value(value: unknown, property: CompiledProperty, path: string): void {
    const binding = property.element.binding;
    noteReference(this.references, value, property.type, path, this.context.resource, this.context.rootResource);
    if (property.element.constraints) {
      const { constraints } = property.element;
      this.compiled.invariants.check(constraints, property.type, false, value, this.context, path, this.issues);
    }
    if (property.primitive) {
      const problem = checkPrimitive(property.type, value);
      if (problem) {
        this.issue('value', problem, path);
      } else if (binding && typeof value === 'string' && !binding.codes.has(value)) {
        this.issue('code-invalid', `Value "${value}" is not in the required value set ${binding.valueSet}`, path);
      }
      return;
    }
    const type = this.compiled.getType(property.type);
    if (!type) {
      return; // a type the schema does not define is not checked further
    }
    if (type.isResource) {
      this.resource(value, path, property.type, property.element.name === 'contained');
      return;
    }
    if (!isObject(value)) {
      this.issue('structure', `Expected an object of type ${property.type}, got ${kindOf(value)}`, path);
      return;
    }
    this.object(value, type, path);
    if (binding) {
      this.codedBinding(value, property.type, binding, path);
    }
    if (property.element.targets && typeof value.reference === 'string') {
      this.referenceTarget(value.reference, property.element.targets, path);
    }
  }

  /**
   * A literal reference ('Patient/1', 'http://x/fhir/Patient/1/_history/2', or a conditional
   * 'Patient?identifier=x') must name one of the element's target types. Local ('#p1') and
   * bundle-internal ('urn:uuid:...') references name no type and are not checked here.
   */
  private referenceTarget(reference: string, targets: Set<string>, path: string): void {
    const type = referenceType(reference);
    if (type && !targets.has(type)) {
      this.issue('value', `Invalid reference target ${type}: expected ${[...targets].join(', ')}`, `${path}.reference`);
    }
  }

  /** Required bindings on Coding and CodeableConcept: some coding must be in the value set. */
  private codedBinding(
    value: Json,
    type: string,
    binding: NonNullable<CompiledElement['binding']>,
    path: string,
  ): void {
    const codings = type === 'Coding' ? [value] : type === 'CodeableConcept' ? value.coding : undefined;
    if (!Array.isArray(codings) || codings.length === 0) {
      return;
    }
    const matches = codings.some((coding) => {
      if (!isObject(coding) || typeof coding.code !== 'string') {
        return false;
      }
      return typeof coding.system === 'string'
        ? binding.codings.has(`${coding.system}|${coding.code}`)
        : binding.codes.has(coding.code);
    });
    if (!matches) {
      this.issue('code-invalid', `No coding is in the required value set ${binding.valueSet}`, path);
    }
  }

  /** `_name`: the id and extensions of a primitive, or an array of them aligned with its values. */
  private primitiveExtensions(
    obj: Json,
    name: string,
    property: CompiledProperty,
    value: unknown,
    parent: string,
  ): void {
    const path = `${parent}._${name}`;
    const elementType = this.compiled.getType(property.type);
    const check = (item: unknown, itemPath: string): void => {
      if (!isObject(item)) {
        this.issue('structure', `Expected an object with id or extension, got ${kindOf(item)}`, itemPath);
      } else if (elementType) {
        this.object(item, elementType, itemPath);
      }
    };
    if (!property.element.isArray) {
      check(value, path);
      return;
    }
    if (!Array.isArray(value)) {
      this.issue('structure', 'Expected an array aligned with the values', path);
      return;
    }
    const values = obj[name];
    if (values !== undefined && (!Array.isArray(values) || values.length !== value.length)) {
      this.issue('structure', `Expected ${Array.isArray(values) ? values.length : 1} items, one per value`, path);
      return;
    }
    for (let i = 0; i < value.length; i++) {
      if (value[i] === null) {
        if (!Array.isArray(values) || values[i] === null) {
          this.issue('structure', 'Both the value and its extension are null', `${path}[${i}]`);
        }
        continue;
      }
      check(value[i], `${path}[${i}]`);
    }
  }

  private requiredElement(obj: Json, element: CompiledElement, path: string): void {
    for (const name of element.jsonNames) {
      const value = obj[name];
      if (value !== undefined) {
        if (element.isArray && Array.isArray(value) && value.length > 0 && value.length < element.min) {
          this.issue('required', `Too few values: ${value.length}, at least ${element.min}`, `${path}.${name}`);
        }
        return;
      }
      if (element.primitiveNames.has(name) && obj['_' + name] !== undefined) {
        return;
      }
    }
    this.issue('required', `Missing required element "${element.name}"`, `${path}.${element.jsonNames[0]}`);
  }

  /** A choice element takes one of its types (hl7.org/fhir/R4/formats.html#choice). */
  private singleChoice(obj: Json, element: CompiledElement, path: string): void {
    let found: string | undefined;
    for (const name of element.jsonNames) {
      if (obj[name] !== undefined || (element.primitiveNames.has(name) && obj['_' + name] !== undefined)) {
        if (found) {
          this.issue('structure', `Only one of ${found} and ${name} is allowed (${element.name})`, `${path}.${name}`);
          return;
        }
        found = name;
      }
    }
  }

  /** ext-1: an extension has either a value or nested extensions, not both. */
  private extensionContent(obj: Json, type: CompiledType, path: string): void {
    let hasValue = false;
    for (const key in obj) {
      const name = key.charCodeAt(0) === 95 /* _ */ ? key.slice(1) : key;
      if (obj[key] !== undefined && type.properties.get(name)?.element.choice) {
        hasValue = true; // value[x] is Extension's only choice element
        break;
      }
    }
    const hasChildren = Array.isArray(obj.extension) && obj.extension.length > 0;
    if (hasValue === hasChildren) {
      this.issue(
        'invariant',
        hasValue
          ? 'An extension cannot have both a value and extensions (ext-1)'
          : 'An extension needs a value or extensions (ext-1)',
        path,
      );
    }
  }
}

/** Builds a validator over a schema; compiled type tables are shared by all its calls. */
export function createValidator(schema: ValidatorSchema): Validator {
  const compiled = new CompiledSchema(schema);
  const validate = (resource: unknown, checks?: ValidationChecks): OperationOutcomeIssue[] => {
    const run = new Run(compiled, checks);
    const resourceType = isObject(resource) ? resource.resourceType : undefined;
    run.resource(resource, typeof resourceType === 'string' ? resourceType : 'Resource', undefined, false);
    run.narrativeLinks.check(run.issues);
    return run.issues;
  };
  return {
    validate,
    assertValid(resource, checks) {
      const issues = validate(resource, checks);
      if (issues.length > 0) {
        throw new OperationOutcomeError(validationError(issues));
      }
    },
    isResourceType(type) {
      const t = compiled.getType(type);
      return t !== undefined && t.isResource && !t.abstract;
    },
  };
}

const validators = new WeakMap<ValidatorSchema, Validator>();

function validatorFor(schema: ValidatorSchema): Validator {
  let validator = validators.get(schema);
  if (!validator) {
    validator = createValidator(schema);
    validators.set(schema, validator);
  }
  return validator;
}

/** Validates a resource; returns the issues found (empty when valid). */
export function validateResource(resource: unknown, options: ValidateOptions): OperationOutcomeIssue[] {
  return validatorFor(options.schema).validate(resource, options);
}

/** Validates a resource and throws an OperationOutcomeError (400) listing the issues if invalid. */
export function assertValidResource(resource: unknown, options: ValidateOptions): void {
  validatorFor(options.schema).assertValid(resource, options);
}

/**
 * Checks a resource type name from a URL or a body: throws a 400 OperationOutcomeError unless it
 * looks like a type name and, when a schema is given, names a concrete resource type in it.
 */
export function validateResourceType(resourceType: string, options?: Partial<ValidateOptions>): void {
  const known = options?.schema ? validatorFor(options.schema).isResourceType(resourceType) : true;
  if (!RESOURCE_TYPE_PATTERN.test(resourceType) || !known) {
    throw new OperationOutcomeError(validationError(`Unknown resource type "${resourceType}"`));
  }
}
