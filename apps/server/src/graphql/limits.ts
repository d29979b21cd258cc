import {
  getArgumentValues,
  getNamedType,
  isObjectType,
  Kind,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { badRequest, fail, tooCostly } from '@hearth/core';
import { DEFAULT_COUNT, MAX_COUNT } from '../search/resources.js';
import type { FieldCost } from './types.js';

export interface QueryLimits {
  /** Deepest nesting of fields (introspection fields are not counted: the schema bounds them). */
  maxDepth: number;
  /** Largest estimated cost: searches run plus resources read, over the whole query. */
  maxCost: number;
}

/** The depth of an operation: fields nested in fields, through fragments. */
export function queryDepth(
  operation: OperationDefinitionNode,
  fragments: Record<string, FragmentDefinitionNode>,
): number {
  const depth = (set: SelectionSetNode | undefined, seen: Set<string>): number => {
    let max = 0;
    for (const s of set?.selections ?? []) {
      if (s.kind === Kind.FIELD) {
        if (!s.name.value.startsWith('__')) {
          max = Math.max(max, 1 + depth(s.selectionSet, seen));
        }
      } else if (s.kind === Kind.INLINE_FRAGMENT) {
        max = Math.max(max, depth(s.selectionSet, seen));
      } else if (!seen.has(s.name.value)) {
        max = Math.max(max, depth(fragments[s.name.value]?.selectionSet, new Set([...seen, s.name.value])));
      }
    }
    return max;
  };
  return depth(operation.selectionSet, new Set());
}

function costOf(extensions: unknown): FieldCost | undefined {
  return (extensions as { hearthCost?: FieldCost } | undefined)?.hearthCost;
}

/**
 * The estimated cost of an operation, before it runs: every search costs 1 plus the resources
 * its page may hold (its `_count`, default 20), every read or resolved reference 1, every write
 * 1; fields under a list are counted once per item it may hold. With the request's batching,
 * the SQL run is far less than the cost; the cost bounds the resources a response may carry.
 */
export function queryCost(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  fragments: Record<string, FragmentDefinitionNode>,
  variables: Record<string, unknown>,
): number {
  const walk = (set: SelectionSetNode | undefined, parent: GraphQLCompositeType | undefined, times: number): number => {
    let total = 0;
    for (const s of set?.selections ?? []) {
      if (s.kind === Kind.INLINE_FRAGMENT) {
        const type = s.typeCondition ? schema.getType(s.typeCondition.name.value) : parent;
        total += walk(s.selectionSet, type as GraphQLCompositeType | undefined, times);
        continue;
      }
      if (s.kind === Kind.FRAGMENT_SPREAD) {
        const fragment = fragments[s.name.value];
        const type = fragment ? schema.getType(fragment.typeCondition.name.value) : undefined;
        total += walk(fragment?.selectionSet, type as GraphQLCompositeType | undefined, times);
        continue;
      }
      if (!parent || !isObjectType(parent) || s.name.value.startsWith('__')) {
        continue;
      }
      const field = parent.getFields()[s.name.value];
      if (!field) {
        continue;
      }
      let inner = times;
      switch (costOf(field.extensions)) {
        case 'search':
        case 'connection': {
          let count = DEFAULT_COUNT;
          try {
            const args = getArgumentValues(field, s, variables);
            if (typeof args._count === 'number') {
              count = args._count;
            }
          } catch {
            // Invalid arguments fail at execution with their own error; count the default meanwhile.
          }
          count = Math.min(Math.max(count, 0), MAX_COUNT);
          total += times * (1 + count);
          inner = times * Math.max(count, 1);
          break;
        }
        case 'read':
        case 'reference':
        case 'write':
          total += times;
          break;
      }
      total += walk(s.selectionSet, getNamedType(field.type) as GraphQLCompositeType, inner);
    }
    return total;
  };
  const root = operation.operation === 'mutation' ? schema.getMutationType() : schema.getQueryType();
  return walk(operation.selectionSet, root ?? undefined, 1);
}

/** Fails with a 400 OperationOutcome when the operation is deeper or costlier than allowed. */
export function checkLimits(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  fragments: Record<string, FragmentDefinitionNode>,
  variables: Record<string, unknown>,
  limits: QueryLimits,
): { depth: number; cost: number } {
  const depth = queryDepth(operation, fragments);
  if (depth > limits.maxDepth) {
    fail(badRequest(`The query is ${depth} fields deep; the most this server allows is ${limits.maxDepth}`, 'query'));
  }
  const cost = queryCost(schema, operation, fragments, variables);
  if (cost > limits.maxCost) {
    fail(
      tooCostly(
        `The query's estimated cost is ${cost} (searches plus the resources they may return); the most this server allows is ${limits.maxCost}. Ask for smaller pages (_count) or fewer nested lists.`,
      ),
    );
  }
  return { depth, cost };
}

/**
 * Deepest bracket nesting (`{`, `[`, `(`) a query document may have. graphql-js parses
 * recursively, so a document nested thousands deep would exhaust the stack before the field
 * depth above could be checked; no real query comes near this.
 */
export const MAX_NESTING = 256;

/** Refuses a document nested deeper than {@link MAX_NESTING}: one scan, skipping strings and comments. */
export function checkNesting(query: string): void {
  let depth = 0;
  for (let i = 0; i < query.length; i++) {
    const c = query[i];
    if (c === '#') {
      i = query.indexOf('\n', i);
      if (i < 0) return;
    } else if (c === '"') {
      i = query.startsWith('"""', i) ? endOfBlockString(query, i + 3) : endOfString(query, i + 1);
    } else if (c === '{' || c === '[' || c === '(') {
      if (++depth > MAX_NESTING) {
        fail(badRequest(`The query is nested deeper than ${MAX_NESTING} brackets`, 'query'));
      }
    } else if (c === '}' || c === ']' || c === ')') {
      depth--;
    }
  }
}

/** The index of the quote closing a string that starts at `i` (past the end when unterminated). */
function endOfString(query: string, i: number): number {
  while (i < query.length && query[i] !== '"' && query[i] !== '\n') {
    i += query[i] === '\\' ? 2 : 1;
  }
  return i;
}

/** The index of the last quote of the `"""` closing a block string whose content starts at `i`. */
function endOfBlockString(query: string, i: number): number {
  while (i < query.length) {
    if (query.startsWith('\\"""', i)) {
      i += 4;
    } else if (query.startsWith('"""', i)) {
      return i + 2;
    } else {
      i++;
    }
  }
  return i;
}
