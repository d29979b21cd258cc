import { evalFhirPath } from '@hearth/core';
import {
  GraphQLError,
  Kind,
  responsePathAsArray,
  valueFromASTUntyped,
  type FieldNode,
  type GraphQLResolveInfo,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';

/**
 * The shaping directives of hl7.org/fhir/R4/graphql.html#directives, applied to the result of
 * execution (graphql-js shapes a result by the schema's types; these change that shape):
 * - `@flatten`: the field is left out and its children are put in its parent. Children that
 *   arrive through a flattened field are lists, gathering the values of every flattened item.
 * - `@first`: only the first item of the field's list in the source (per item of a flattened
 *   parent: `name @flatten { given @first }` is the first given of each name, as a list).
 * - `@singleton`: a single value rather than a list; more than one value is an error.
 * - `@slice(path: "use")`: each item of the list gets its own key, suffixed with "." and the
 *   FHIRPath's value on the item (`$index` is its position); with `@flatten`, the suffix goes to
 *   the children's keys (`given.official`). Suffixes add up when slices nest.
 */
export function applyShapingDirectives(
  operation: OperationDefinitionNode,
  fragments: Record<string, FragmentDefinitionNode>,
  data: Record<string, unknown> | null | undefined,
  errors: GraphQLError[],
  variables: Record<string, unknown> = {},
  slices: Map<string, string[]> = new Map(),
): Record<string, unknown> | null | undefined {
  if (!data || !usesShapingDirectives(operation, fragments)) {
    return data;
  }
  return new Shaper(fragments, errors, variables, slices).object(operation.selectionSet, data, []);
}

/** The `@slice` path of a field, if it has one (an empty or missing path is an error). */
function slicePathOf(nodes: readonly FieldNode[], variables: Record<string, unknown>): string | undefined {
  for (const node of nodes) {
    const directive = node.directives?.find((d) => d.name.value === 'slice');
    const arg = directive?.arguments?.find((a) => a.name.value === 'path');
    if (directive) {
      const value = arg ? valueFromASTUntyped(arg.value, variables) : undefined;
      if (typeof value !== 'string' || value === '') {
        throw new GraphQLError('@slice needs a path (a FHIRPath, or $index)', { nodes: [node] });
      }
      return value;
    }
  }
  return undefined;
}

/** ".official", ".0": the suffix an item of a sliced list adds to keys. */
function sliceSuffix(slicePath: string, item: unknown, index: number): string {
  if (slicePath === '$index') {
    return `.${index}`;
  }
  let value: unknown;
  try {
    [value] = evalFhirPath(slicePath, item);
  } catch (err) {
    throw new GraphQLError(`@slice: ${err instanceof Error ? err.message : String(err)}`);
  }
  return `.${value === undefined || value === null ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value)}`;
}

/**
 * For a resolver of a list field: when the field has `@slice`, computes each returned item's
 * suffix on the source item (which holds the elements the query may not select, such as `use`)
 * and records it by response path for the shaping after execution.
 */
export function recordSlices(slices: Map<string, string[]>, info: GraphQLResolveInfo, items: unknown[]): void {
  if (!info.fieldNodes.some((n) => n.directives?.some((d) => d.name.value === 'slice'))) {
    return;
  }
  const path = slicePathOf(info.fieldNodes, info.variableValues);
  if (path !== undefined) {
    slices.set(
      JSON.stringify(responsePathAsArray(info.path)),
      items.map((item, i) => sliceSuffix(path, item, i)),
    );
  }
}

const SHAPING = new Set(['flatten', 'first', 'singleton', 'slice']);

function usesShapingDirectives(
  operation: OperationDefinitionNode,
  fragments: Record<string, FragmentDefinitionNode>,
): boolean {
  const uses = (set: SelectionSetNode | undefined): boolean =>
    (set?.selections ?? []).some(
      (s) =>
        s.directives?.some((d) => SHAPING.has(d.name.value)) ||
        (s.kind !== Kind.FRAGMENT_SPREAD && uses(s.selectionSet)),
    );
  return uses(operation.selectionSet) || Object.values(fragments).some((f) => uses(f.selectionSet));
}

/** The fields selected under one response key (a key selected twice merges its sub-selections). */
interface KeyedField {
  key: string;
  nodes: FieldNode[];
}

/** Values gathered for one output key. */
interface Gathered {
  values: unknown[];
  /** The value was a list, or came through a flattened field: the output is a list. */
  list: boolean;
  /** Came through a flattened field: left out when no item had a value (as in the spec's examples). */
  flattened: boolean;
  singleton: boolean;
}

const has = (nodes: FieldNode[], name: string) => nodes.some((n) => n.directives?.some((d) => d.name.value === name));

class Shaper {
  constructor(
    private readonly fragments: Record<string, FragmentDefinitionNode>,
    private readonly errors: GraphQLError[],
    private readonly variables: Record<string, unknown>,
    private readonly slices: Map<string, string[]>,
  ) {}

  /** The fields of selection sets by response key, through fragments (in order of first appearance). */
  private fields(sets: SelectionSetNode[]): KeyedField[] {
    const byKey = new Map<string, KeyedField>();
    const seen = new Set<string>();
    const visit = (set: SelectionSetNode) => {
      for (const s of set.selections) {
        if (s.kind === Kind.FIELD) {
          const key = s.alias?.value ?? s.name.value;
          const entry = byKey.get(key) ?? { key, nodes: [] };
          entry.nodes.push(s);
          byKey.set(key, entry);
        } else if (s.kind === Kind.INLINE_FRAGMENT) {
          visit(s.selectionSet);
        } else if (!seen.has(s.name.value) && this.fragments[s.name.value]) {
          seen.add(s.name.value);
          visit(this.fragments[s.name.value].selectionSet);
        }
      }
    };
    sets.forEach(visit);
    return [...byKey.values()];
  }

  object(set: SelectionSetNode, data: Record<string, unknown>, path: (string | number)[]): Record<string, unknown> {
    const gathered = new Map<string, Gathered>();
    this.gather([set], data, gathered, false, path, '');
    const out: Record<string, unknown> = {};
    for (const [key, g] of gathered) {
      if (!(g.flattened && g.values.length === 0)) {
        out[key] = this.finish(key, g, path);
      }
    }
    return out;
  }

  /** The `@slice` path of a field, if it has one. */
  private slicePath(nodes: FieldNode[], path: (string | number)[]): string | undefined {
    try {
      return slicePathOf(nodes, this.variables);
    } catch (err) {
      this.errors.push(new GraphQLError(err instanceof Error ? err.message : String(err), { path }));
      return undefined;
    }
  }

  /** An item's suffix: as its resolver recorded it, else computed on the item as output (a primitive). */
  private itemSuffix(slicePath: string, fieldPath: (string | number)[], item: unknown, index: number): string {
    const recorded = this.slices.get(JSON.stringify(fieldPath))?.[index];
    if (recorded !== undefined) {
      return recorded;
    }
    try {
      return sliceSuffix(slicePath, item, index);
    } catch (err) {
      this.errors.push(
        new GraphQLError(err instanceof Error ? err.message : String(err), { path: [...fieldPath, index] }),
      );
      return `.${index}`;
    }
  }

  private gather(
    sets: SelectionSetNode[],
    data: Record<string, unknown>,
    into: Map<string, Gathered>,
    viaFlatten: boolean,
    path: (string | number)[],
    suffix: string,
  ): void {
    for (const { key, nodes } of this.fields(sets)) {
      if (!Object.hasOwn(data, key)) {
        continue; // skipped (@skip/@include) or selected on another type of a union
      }
      const raw = data[key];
      const subSets = nodes.flatMap((n) => (n.selectionSet ? [n.selectionSet] : []));
      let items = raw === null || raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
      const first = has(nodes, 'first');
      if (first) {
        items = items.slice(0, 1);
      }
      const slicePath = this.slicePath(nodes, [...path, key]);
      const itemSuffix = (item: unknown, i: number) =>
        slicePath === undefined ? '' : this.itemSuffix(slicePath, [...path, key], item, i);
      if (has(nodes, 'flatten')) {
        items.forEach((item, i) => {
          if (item && typeof item === 'object' && subSets.length > 0) {
            const p = [...path, key, i];
            this.gather(subSets, item as Record<string, unknown>, into, true, p, suffix + itemSuffix(item, i));
          }
        });
        continue;
      }
      const shape = (v: unknown, p: (string | number)[]) =>
        subSets.length > 0 && v && typeof v === 'object'
          ? this.object(
              { kind: Kind.SELECTION_SET, selections: subSets.flatMap((s) => s.selections) },
              v as Record<string, unknown>,
              p,
            )
          : v;
      const singleton = has(nodes, 'singleton');
      const add = (outKey: string, values: unknown[], list: boolean) => {
        const entry = into.get(outKey) ?? { values: [], list: false, flattened: viaFlatten, singleton: false };
        entry.values.push(...values);
        entry.list ||= list || viaFlatten;
        entry.singleton ||= singleton;
        into.set(outKey, entry);
      };
      if (slicePath !== undefined) {
        // Each item under a key of its own: single values, unless gathered through a flatten.
        items.forEach((item, i) => add(key + suffix + itemSuffix(item, i), [shape(item, [...path, key, i])], false));
        continue;
      }
      const isList = Array.isArray(raw);
      add(
        key + suffix,
        items.map((v, i) => shape(v, isList ? [...path, key, i] : [...path, key])),
        isList && !first,
      );
    }
  }

  private finish(key: string, g: Gathered, path: (string | number)[]): unknown {
    if (g.singleton) {
      if (g.values.length > 1) {
        this.errors.push(
          new GraphQLError(`@singleton: "${key}" has ${g.values.length} values`, { path: [...path, key] }),
        );
      }
      return g.values[0] ?? null;
    }
    return g.list ? g.values : (g.values[0] ?? null);
  }
}
