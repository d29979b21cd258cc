import {
  GraphQLError,
  Kind,
  type FieldNode,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';

/**
 * The shaping directives of hl7.org/fhir/R4/graphql.html#directives, applied to the result of
 * execution (graphql-js shapes a result by the schema's types; these change that shape):
 * - `@flatten`: the field is left out and its children are put in its parent. Children that
 *   arrive through a flattened field are lists, gathering the values of every flattened item.
 * - `@first`: only the first item of a list, as a single value.
 * - `@singleton`: a single value rather than a list; more than one value is an error.
 */
export function applyShapingDirectives(
  operation: OperationDefinitionNode,
  fragments: Record<string, FragmentDefinitionNode>,
  data: Record<string, unknown> | null | undefined,
  errors: GraphQLError[],
): Record<string, unknown> | null | undefined {
  if (!data || !usesShapingDirectives(operation, fragments)) {
    return data;
  }
  return new Shaper(fragments, errors).object(operation.selectionSet, data, []);
}

const SHAPING = new Set(['flatten', 'first', 'singleton']);

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
  first: boolean;
  singleton: boolean;
}

const has = (nodes: FieldNode[], name: string) => nodes.some((n) => n.directives?.some((d) => d.name.value === name));

class Shaper {
  constructor(
    private readonly fragments: Record<string, FragmentDefinitionNode>,
    private readonly errors: GraphQLError[],
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
    this.gather([set], data, gathered, false, path);
    const out: Record<string, unknown> = {};
    for (const [key, g] of gathered) {
      out[key] = this.finish(key, g, path);
    }
    return out;
  }

  private gather(
    sets: SelectionSetNode[],
    data: Record<string, unknown>,
    into: Map<string, Gathered>,
    viaFlatten: boolean,
    path: (string | number)[],
  ): void {
    for (const { key, nodes } of this.fields(sets)) {
      if (!Object.hasOwn(data, key)) {
        continue; // skipped (@skip/@include) or selected on another type of a union
      }
      const raw = data[key];
      const subSets = nodes.flatMap((n) => (n.selectionSet ? [n.selectionSet] : []));
      if (has(nodes, 'flatten')) {
        let items = raw === null || raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
        if (has(nodes, 'first')) {
          items = items.slice(0, 1);
        }
        items.forEach((item, i) => {
          if (item && typeof item === 'object' && subSets.length > 0) {
            this.gather(subSets, item as Record<string, unknown>, into, true, [...path, key, i]);
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
      const entry = into.get(key) ?? { values: [], list: false, first: false, singleton: false };
      if (Array.isArray(raw)) {
        raw.forEach((v, i) => entry.values.push(shape(v, [...path, key, i])));
        entry.list = true;
      } else if (raw !== null && raw !== undefined) {
        entry.values.push(shape(raw, [...path, key]));
      }
      entry.list ||= viaFlatten;
      entry.first ||= has(nodes, 'first');
      entry.singleton ||= has(nodes, 'singleton');
      into.set(key, entry);
    }
  }

  private finish(key: string, g: Gathered, path: (string | number)[]): unknown {
    if (g.first) {
      return g.values[0] ?? null;
    }
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
