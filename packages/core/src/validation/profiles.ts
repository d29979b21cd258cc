/**
 * Validation against profiles (hl7.org/fhir/R4/profiling.html, validation.html#profile): a
 * StructureDefinition that constrains a type, given by the caller (`resolve`), is compiled once
 * (snapshot from the differential when it has none, then a tree of constraints) and its
 * constraints are checked on top of the base validation: cardinality, fixed and pattern values,
 * types with their profiles and reference targets, required bindings, maxLength, slicing, the
 * invariants the profile adds, and the definitions of the extensions it names. The structural
 * rules and invariants of the base type are the structural validator's (validator.ts) and are not
 * repeated here.
 */
import type { OperationOutcomeIssue } from '../fhir-types.js';
import { createIssue, type IssueType } from '../outcome.js';
import { InvariantChecker, type InvariantContext } from './invariants.js';
import { buildProfileTree, type ProfileNode } from './profile-tree.js';
import { childItems, deepEqual, isObject, matchesPattern, type Item } from './profile-values.js';
import type { ValidatorSchema } from './schema.js';
import { assignSlices, type DiscriminatorCache, type SlicingContext } from './slicing.js';
import { coreTypeOf, snapshotElements, unslicedPath, type ProfileDefinition, type ProfileElement } from './snapshot.js';

export interface ProfileValidatorOptions {
  schema: ValidatorSchema;
  /** A StructureDefinition by canonical url (a `|version` suffix is removed first); undefined when unknown. */
  resolve(url: string): ProfileDefinition | undefined;
  /** Whether system|code is in the value set; undefined when it cannot be told (the code is then not judged). */
  inValueSet?(valueSet: string, system: string | undefined, code: string): boolean | undefined;
}

interface CompiledProfile {
  definition: ProfileDefinition;
  snapshot: ProfileElement[];
  root: ProfileNode;
}

/** Nested profiles (extension definitions, type profiles) are followed this deep at most. */
const MAX_DEPTH = 8;
const unversioned = (url: string) => url.split('|')[0];

export class ProfileValidator {
  private readonly compiled = new Map<string, CompiledProfile | string>();
  /** The profiles' invariants, each expression compiled once. */
  readonly invariants = new InvariantChecker();
  private baseConstraints?: Set<string>;
  private readonly paths = new WeakMap<ProfileNode, string>();
  /** What slices' discriminator paths lead to (slicing.ts), found once per slice and path. */
  readonly discriminators: DiscriminatorCache = new WeakMap();
  private readonly enumerations = new Map<string, { codings: Set<string>; codes: Set<string> } | null>();

  constructor(private readonly options: ProfileValidatorOptions) {}

  /**
   * The problems of `resource` against the profile `url`; an unknown or unusable profile is one
   * error issue saying so. `at` places a resource met inside another (a Bundle entry): the
   * expression its issues start from and the resource that contains it.
   */
  validate(
    resource: unknown,
    url: string,
    at?: { expression: string; rootResource?: unknown },
  ): OperationOutcomeIssue[] {
    const issues: OperationOutcomeIssue[] = [];
    const type = isObject(resource) && typeof resource.resourceType === 'string' ? resource.resourceType : 'Resource';
    const expression = at?.expression ?? type;
    const profile = this.compile(url);
    if (typeof profile === 'string') {
      issues.push(createIssue('not-found', profile, expression));
      return issues;
    }
    if (profile.definition.type !== type) {
      issues.push(
        createIssue('invalid', `Profile ${url} is for ${profile.definition.type} resources, not ${type}`, expression),
      );
      return issues;
    }
    const context = { resource, rootResource: at?.rootResource ?? resource };
    new ProfileRun(this, this.options, issues, context).check(profile, { value: resource, type, expression }, 0);
    return issues;
  }

  /** The compiled profile, or why there is none. */
  compile(url: string): CompiledProfile | string {
    const key = unversioned(url);
    let compiled = this.compiled.get(key);
    if (compiled === undefined) {
      compiled = this.build(key, new Set());
      this.compiled.set(key, compiled);
    }
    return compiled;
  }

  /** The snapshot of a profile (generated from its differential when it has none). */
  snapshot(url: string): ProfileElement[] | undefined {
    const compiled = this.compile(url);
    return typeof compiled === 'string' ? undefined : compiled.snapshot;
  }

  /** Drops compiled profiles (all, or the one of this url): their definitions changed. */
  forget(url?: string): void {
    if (url === undefined) {
      this.compiled.clear();
    } else {
      this.compiled.delete(unversioned(url));
    }
  }

  private build(url: string, seen: Set<string>): CompiledProfile | string {
    const definition = this.options.resolve(url);
    if (!definition) {
      return `Profile ${url} is not known to this server`;
    }
    if (definition.resourceType !== 'StructureDefinition' || typeof definition.type !== 'string') {
      return `${url} is not a StructureDefinition with a type`;
    }
    if (seen.has(url)) {
      return `Profile ${url} derives from itself`;
    }
    seen.add(url);
    const { schema } = this.options;
    let baseSnapshot: ProfileElement[] | undefined;
    const base = definition.baseDefinition ? unversioned(definition.baseDefinition) : undefined;
    const hasSnapshot = (definition.snapshot?.element?.length ?? 0) > 0;
    if (!hasSnapshot && base && !coreTypeOf(base, schema)) {
      const parent = this.compiled.get(base) ?? this.build(base, seen);
      if (typeof parent === 'string') {
        return `Profile ${url}: its base ${base} cannot be used (${parent})`;
      }
      baseSnapshot = parent.snapshot;
    }
    if (!Object.hasOwn(schema.types, definition.type)) {
      return `Profile ${url} constrains an unknown type ${definition.type}`;
    }
    const snapshot = snapshotElements(definition, schema, baseSnapshot);
    return { definition, snapshot, root: buildProfileTree(snapshot, definition.type, this.isBaseConstraint) };
  }

  /** A node's element path without slice names ('Observation.component:SystolicBP' → 'Observation.component'). */
  pathOf(node: ProfileNode): string {
    let path = this.paths.get(node);
    if (path === undefined) {
      path = unslicedPath(node.id);
      this.paths.set(node, path);
    }
    return path;
  }

  /** The codes of a value set the schema enumerates ('system|code' and code alone), or undefined. */
  enumeration(valueSet: string): { codings: Set<string>; codes: Set<string> } | undefined {
    let found = this.enumerations.get(valueSet);
    if (found === undefined) {
      const members = this.options.schema.valueSets[unversioned(valueSet)];
      found = members
        ? { codings: new Set(members), codes: new Set(members.map((m) => m.slice(m.indexOf('|') + 1))) }
        : null;
      this.enumerations.set(valueSet, found);
    }
    return found ?? undefined;
  }

  /** Whether an invariant key is the base definitions' (ele-1, dom-2, obs-6…): the structural validator checks those. */
  private readonly isBaseConstraint = (key: string): boolean => {
    if (!this.baseConstraints) {
      const keys = new Set<string>();
      for (const type of Object.values(this.options.schema.types)) {
        type.constraint?.forEach((c) => keys.add(c.key));
        for (const el of Object.values(type.elements)) {
          el.constraint?.forEach((c) => keys.add(c.key));
        }
      }
      this.baseConstraints = keys;
    }
    return this.baseConstraints.has(key);
  };
}

/** One validation against one profile (and the profiles it leads to). */
class ProfileRun implements SlicingContext {
  readonly schema: ValidatorSchema;
  readonly discriminators: DiscriminatorCache;

  constructor(
    private readonly validator: ProfileValidator,
    private readonly options: ProfileValidatorOptions,
    private readonly issues: OperationOutcomeIssue[],
    /** %resource and %rootResource for the invariants. */
    private readonly context: InvariantContext,
    private readonly depth = 0,
  ) {
    this.schema = options.schema;
    this.discriminators = validator.discriminators;
  }

  private issue(code: IssueType, text: string, expression: string, severity: 'error' | 'warning' = 'error'): void {
    this.issues.push(createIssue(code, text, expression, severity));
  }

  check(profile: CompiledProfile, item: Item, depth: number): void {
    this.item(profile.root, item, profile.definition.url, depth);
  }

  /** Whether `item` conforms to the profile: validated apart, its issues kept apart. */
  conforms(item: Item, url: string): boolean {
    const profile = this.validator.compile(url);
    if (typeof profile === 'string' || this.depth >= MAX_DEPTH) {
      return false;
    }
    const issues: OperationOutcomeIssue[] = [];
    new ProfileRun(this.validator, this.options, issues, this.context, this.depth + 1).check(
      profile,
      item,
      this.depth + 1,
    );
    return !issues.some((i) => i.severity === 'error');
  }

  inValueSet(valueSet: string, item: Item): boolean | undefined {
    const codings = codingsOf(item);
    if (codings.length === 0) {
      return undefined;
    }
    let unknown = false;
    for (const { system, code } of codings) {
      const answer = this.codeIn(valueSet, system, code);
      if (answer === true) return true;
      if (answer === undefined) unknown = true;
    }
    return unknown ? undefined : false;
  }

  private codeIn(valueSet: string, system: string | undefined, code: string): boolean | undefined {
    const enumerated = this.validator.enumeration(valueSet);
    if (enumerated) {
      return system === undefined ? enumerated.codes.has(code) : enumerated.codings.has(`${system}|${code}`);
    }
    return this.options.inValueSet?.(unversioned(valueSet), system, code);
  }

  /** A value against a node: its own constraints, then its children and slices. */
  private item(node: ProfileNode, item: Item, profileUrl: string, depth: number): void {
    const { value, expression } = item;
    if (node.fixed && !deepEqual(value, node.fixed.value)) {
      this.issue('value', `Value must be exactly ${JSON.stringify(node.fixed.value)} (${node.fixed.key})`, expression);
    }
    if (node.pattern && !matchesPattern(value, node.pattern.value)) {
      this.issue('value', `Value must match ${JSON.stringify(node.pattern.value)} (${node.pattern.key})`, expression);
    }
    if (node.maxLength !== undefined && typeof value === 'string' && value.length > node.maxLength) {
      this.issue('value', `Value is longer than ${node.maxLength} characters`, expression);
    }
    if (node.binding?.strength === 'required' && this.inValueSet(node.binding.valueSet, item) === false) {
      this.issue('code-invalid', `The code is not in the required value set ${node.binding.valueSet}`, expression);
    }
    if (node.types) {
      this.types(node, item, depth);
    }
    if (node.constraints) {
      const isResource = isObject(value) && typeof value.resourceType === 'string';
      this.validator.invariants.check(
        node.constraints,
        this.invariantBase(node, item),
        isResource,
        value,
        this.context,
        expression,
        this.issues,
      );
    }
    if (!isObject(value)) {
      return;
    }
    for (const child of node.children.values()) {
      if (!child.required && value[child.name] === undefined && !child.name.endsWith('[x]')) {
        continue; // absent and not required: nothing to check (most of a snapshot's elements)
      }
      const declared = child.types?.length === 1 ? child.types[0].code : undefined;
      const items = childItems(item, child.name, declared === 'BackboneElement' ? undefined : declared, this.schema);
      // A primitive given by its extensions alone (`_status`) is there (hl7.org/fhir/R4/json.html#primitive).
      const extended = items.length === 0 ? value[`_${child.name}`] : undefined;
      const onlyExtended = extended === undefined ? 0 : Array.isArray(extended) ? extended.length : 1;
      this.element(child, items, expression, profileUrl, depth, onlyExtended);
    }
  }

  /**
   * What an element's invariants are evaluated on: a primitive by its element's path, with the
   * choice typed ('Observation.effectiveDateTime': the FHIRPath engine takes the value's type
   * from it, so that `$this as dateTime` works); other values by their type ('Period') or
   * backbone path ('Observation.component'). A resource's are evaluated on the resource.
   */
  private invariantBase(node: ProfileNode, item: Item): string {
    const path = this.validator.pathOf(node);
    const choice = path.endsWith('[x]') ? path.slice(0, -3) : undefined;
    if (item.type && this.schema.types[item.type]?.kind === 'primitive-type' && !(choice ?? path).includes('[x]')) {
      return choice === undefined ? path : choice + item.type.charAt(0).toUpperCase() + item.type.slice(1);
    }
    return item.type ?? path;
  }

  /** All the values of one element within one parent value. */
  private element(
    node: ProfileNode,
    items: Item[],
    parent: string,
    profileUrl: string,
    depth: number,
    onlyExtended = 0,
  ): void {
    if (items.length + onlyExtended < node.min) {
      this.issue(
        'required',
        `${node.id}: minimum required = ${node.min}, but only found ${items.length}`,
        `${parent}.${node.name}`,
      );
    }
    if (items.length > node.max) {
      this.issue(
        'structure',
        `${node.id}: maximum allowed = ${node.max}, but found ${items.length}`,
        items[node.max].expression,
      );
    }
    for (const item of items) {
      this.item(node, item, profileUrl, depth);
    }
    if (node.slices.length > 0 && node.slicing) {
      const problems: { text: string; expression: string }[] = [];
      const bySlice = assignSlices(node, items, this, parent, problems);
      problems.forEach((p) => this.issue('structure', p.text, p.expression));
      for (const [slice, matched] of bySlice) {
        for (const item of matched) {
          this.item(slice, item, profileUrl, depth);
        }
      }
    }
  }

  /** Type constraints: allowed types, the profiles a value must conform to, reference targets. */
  private types(node: ProfileNode, item: Item, depth: number): void {
    const types = node.types!;
    const type = item.type;
    if (types.length === 1 && types[0].code === type && types[0].profiles.length === 0) {
      if (types[0].targetProfiles.length === 0 || type !== 'Reference') {
        return; // the one type allowed, with nothing more to check (the common case)
      }
    }
    const allowed = type ? types.filter((t) => t.code === type || ANY_OF.has(t.code) || sameKind(t.code, type)) : types;
    if (type && allowed.length === 0) {
      this.issue(
        'structure',
        `Type ${type} is not allowed here: ${types.map((t) => t.code).join(', ')}`,
        item.expression,
      );
      return;
    }
    const profiles = allowed.flatMap((t) => t.profiles);
    if (profiles.length > 0 && depth < MAX_DEPTH) {
      this.profiles(profiles, item, depth);
    }
    const targets = allowed.flatMap((t) => (t.code === 'Reference' ? t.targetProfiles : []));
    const reference = isObject(item.value) ? item.value.reference : undefined;
    if (targets.length > 0 && typeof reference === 'string') {
      this.target(targets, reference, item.expression);
    }
  }

  /**
   * The value must conform to one of the profiles. With one profile its issues are reported as
   * they are; with several, one issue says none fits. A profile this server does not have is a
   * warning (an extension definition from elsewhere, say), not an error.
   */
  private profiles(urls: string[], item: Item, depth: number): void {
    const known = urls.filter((u) => typeof this.validator.compile(u) !== 'string');
    if (known.length === 0) {
      if (!urls.every((u) => coreTypeOf(u, this.schema))) {
        this.issue(
          'not-found',
          `Profile ${urls.join(', ')} is not known to this server; not checked`,
          item.expression,
          'warning',
        );
      }
      return;
    }
    if (known.length === 1) {
      const profile = this.validator.compile(known[0]) as CompiledProfile;
      this.item(profile.root, item, profile.definition.url, depth + 1);
      return;
    }
    if (!known.some((u) => this.conforms(item, u))) {
      this.issue('structure', `The value does not conform to any of the profiles ${known.join(', ')}`, item.expression);
    }
  }

  /** targetProfile: the reference must name a resource of a type one of the target profiles constrains. */
  private target(targetProfiles: string[], reference: string, expression: string): void {
    const type = /(?:^|\/)([A-Z][A-Za-z]+)\/[^/]+(?:\/_history\/[^/]+)?$/.exec(reference)?.[1];
    if (!type) {
      return; // '#contained', 'urn:uuid:…' and conditional references name no type here
    }
    const allowed = new Set<string>();
    for (const url of targetProfiles) {
      const core = coreTypeOf(url, this.schema);
      const profile = core ? undefined : this.validator.compile(url);
      const name = core ?? (typeof profile === 'object' ? profile.definition.type : undefined);
      if (!name || name === 'Resource') {
        return; // a target this server cannot tell the type of: not judged
      }
      allowed.add(name);
    }
    if (!allowed.has(type)) {
      this.issue(
        'value',
        `The reference must point to ${[...allowed].join(', ')}, not ${type}`,
        `${expression}.reference`,
      );
    }
  }
}

/** Types any value of the kind conforms to. */
const ANY_OF = new Set(['Resource', 'DomainResource', 'BackboneElement', 'Element']);

/** Quantity's profiles (SimpleQuantity, Age…) are written with their own type names in snapshots. */
const QUANTITY_KINDS = new Set(['SimpleQuantity', 'Age', 'Count', 'Distance', 'Duration', 'MoneyQuantity']);

function sameKind(allowed: string, actual: string): boolean {
  return actual === 'Quantity' && QUANTITY_KINDS.has(allowed);
}

/** The system|code pairs of a code, Coding or CodeableConcept value. */
function codingsOf(item: Item): { system?: string; code: string }[] {
  const { value } = item;
  if (typeof value === 'string') {
    return [{ code: value }];
  }
  if (!isObject(value)) {
    return [];
  }
  const codings = Array.isArray(value.coding) ? value.coding : [value];
  return codings.flatMap((c: unknown) =>
    isObject(c) && typeof c.code === 'string'
      ? [{ system: typeof c.system === 'string' ? c.system : undefined, code: c.code }]
      : [],
  );
}
