/**
 * A SQL on FHIR v2 ViewDefinition compiled into a function from a resource to its rows
 * (build.fhir.org/ig/FHIR/sql-on-fhir-v2/StructureDefinition-ViewDefinition.html#processing-algorithm).
 * A select node runs over each focus of its forEach / forEachOrNull / repeat (or its parent's focus):
 * its columns make one row, which is crossed with the rows of each nested select, and with the
 * concatenated rows of its unionAll branches. Every check of the view's shape happens here, once.
 */
import { constantLiterals, substituteConstants } from './constants.js';
import { compilePath, type CompiledPath } from './fhirpath.js';
import { ViewError } from './view-error.js';

/** A column of the view's output, in output order. */
export interface ViewColumn {
  name: string;
  path: string;
  /** The FHIR type the view declares (string, integer, decimal, boolean, date, dateTime, ...); absent when not declared. */
  type?: string;
  collection: boolean;
  description?: string;
}

export type Row = Record<string, unknown>;

export interface CompiledView {
  /** The resource type the view reads. */
  resource: string;
  name?: string;
  columns: ViewColumn[];
  /** The view calls lowBoundary()/highBoundary(): give it resources parsed with their decimals' text (storage/decimal-json.ts). */
  needsDecimalText: boolean;
  /** The rows of one resource: none when it is another type or a where clause excludes it. Throws ViewError. */
  rows(resource: { resourceType?: unknown; id?: unknown; [element: string]: unknown }): Row[];
}

interface CompiledColumn {
  column: ViewColumn;
  path: CompiledPath;
  at: string;
}

interface SelectNode {
  columns: CompiledColumn[];
  iterate?: { kind: 'forEach' | 'forEachOrNull' | 'repeat'; paths: CompiledPath[]; at: string };
  selects: SelectNode[];
  unionAll: SelectNode[];
  /** The names of every column this node and its children produce, in order. */
  names: string[];
}

const COLUMN_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

type Compile = (expression: unknown, at: string) => CompiledPath;

function objectAt(value: unknown, at: string): Record<string, unknown> {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new ViewError(`${at} must be an object`, at);
  return value as Record<string, unknown>;
}

function arrayAt(value: unknown, at: string): unknown[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new ViewError(`${at} must be an array`, at);
  return value;
}

function compileNode(raw: unknown, at: string, compile: Compile): SelectNode {
  const node = objectAt(raw, at);
  const iterators = (['forEach', 'forEachOrNull', 'repeat'] as const).filter((k) => node[k] !== undefined);
  if (iterators.length > 1) throw new ViewError(`${at} may have only one of ${iterators.join(', ')}`, at);
  let iterate: SelectNode['iterate'];
  if (iterators.length === 1) {
    const kind = iterators[0];
    const where = `${at}.${kind}`;
    const paths =
      kind === 'repeat'
        ? arrayAt(node.repeat, where).map((p, i) => compile(p, `${where}[${i}]`))
        : [compile(node[kind], where)];
    if (paths.length === 0) throw new ViewError(`${where} must name at least one path`, where);
    iterate = { kind, paths, at: where };
  }
  const columns = arrayAt(node.column, `${at}.column`).map((rawColumn, i): CompiledColumn => {
    const where = `${at}.column[${i}]`;
    const c = objectAt(rawColumn, where);
    if (typeof c.name !== 'string' || !COLUMN_NAME.test(c.name)) {
      throw new ViewError(
        `${where}.name must start with a letter and hold only letters, digits and _`,
        `${where}.name`,
      );
    }
    if (c.type !== undefined && typeof c.type !== 'string')
      throw new ViewError(`${where}.type must be a string`, where);
    if (c.collection !== undefined && typeof c.collection !== 'boolean') {
      throw new ViewError(`${where}.collection must be true or false`, `${where}.collection`);
    }
    return {
      column: {
        name: c.name,
        path: c.path as string,
        ...(c.type ? { type: c.type as string } : {}),
        collection: c.collection === true,
        ...(typeof c.description === 'string' ? { description: c.description } : {}),
      },
      path: compile(c.path, `${where}.path`),
      at: where,
    };
  });
  const selects = arrayAt(node.select, `${at}.select`).map((s, i) => compileNode(s, `${at}.select[${i}]`, compile));
  const unionAll = arrayAt(node.unionAll, `${at}.unionAll`).map((s, i) =>
    compileNode(s, `${at}.unionAll[${i}]`, compile),
  );
  // Every branch of a unionAll yields the same columns in the same order.
  const unionNames = unionAll[0]?.names ?? [];
  unionAll.forEach((branch, i) => {
    if (branch.names.join(',') !== unionNames.join(',')) {
      throw new ViewError(
        `${at}.unionAll[${i}] has columns (${branch.names.join(', ')}) where the first branch has (${unionNames.join(', ')})`,
        `${at}.unionAll[${i}]`,
      );
    }
  });
  const names = [...columns.map((c) => c.column.name), ...selects.flatMap((s) => s.names), ...unionNames];
  return { columns, iterate, selects, unionAll, names };
}

/** Every column of the view, in output order (a unionAll's once, from its first branch). */
function columnsOf(node: SelectNode): ViewColumn[] {
  return [
    ...node.columns.map((c) => c.column),
    ...node.selects.flatMap(columnsOf),
    ...(node.unionAll[0] ? columnsOf(node.unionAll[0]) : []),
  ];
}

/** The cross product of row sets (each set's rows merged into each row of the others). */
function cross(sets: Row[][]): Row[] {
  let out: Row[] = [{}];
  for (const set of sets) {
    const next: Row[] = [];
    for (const left of out) for (const right of set) next.push({ ...left, ...right });
    out = next;
    if (out.length === 0) return out;
  }
  return out;
}

function columnValue(compiled: CompiledColumn, focus: unknown, rowIndex: number, resourceId: unknown): unknown {
  const values = compiled.path(focus, { rowIndex });
  if (compiled.column.collection) return values;
  if (values.length > 1) {
    throw new ViewError(
      `${compiled.at} (${compiled.column.name}) found ${values.length} values in ${String(resourceId)}: set collection to true or narrow the path`,
      compiled.at,
    );
  }
  return values.length === 0 ? null : values[0];
}

/** The foci a node runs over: each result of forEach, or the depth-first closure of repeat's paths. */
function fociOf(node: SelectNode, input: unknown, rowIndex: number): unknown[] | undefined {
  const iterate = node.iterate;
  if (!iterate) return undefined;
  if (iterate.kind !== 'repeat') return iterate.paths[0](input, { rowIndex });
  const out: unknown[] = [];
  const visit = (from: unknown, depth: number) => {
    if (depth > 64) throw new ViewError(`${iterate.at} nests deeper than 64 levels`, iterate.at);
    for (const path of iterate.paths) {
      for (const item of path(from, { rowIndex })) {
        out.push(item);
        visit(item, depth + 1);
      }
    }
  };
  visit(input, 0);
  return out;
}

function nodeRows(node: SelectNode, input: unknown, rowIndex: number, resourceId: unknown): Row[] {
  const body = (focus: unknown, index: number): Row[] => {
    const own: Row = {};
    for (const c of node.columns) own[c.column.name] = columnValue(c, focus, index, resourceId);
    const sets: Row[][] = [[own]];
    for (const select of node.selects) sets.push(nodeRows(select, focus, index, resourceId));
    if (node.unionAll.length > 0) {
      sets.push(node.unionAll.flatMap((branch) => nodeRows(branch, focus, index, resourceId)));
    }
    return cross(sets);
  };
  const foci = fociOf(node, input, rowIndex);
  if (!foci) return body(input, rowIndex);
  const rows = foci.flatMap((focus, index) => body(focus, index));
  if (rows.length > 0 || node.iterate?.kind !== 'forEachOrNull' || foci.length > 0) return rows;
  // forEachOrNull over nothing: one row, its columns read against an empty focus, null where that finds nothing.
  const empty = body([], 0);
  return empty.length > 0 ? empty : [Object.fromEntries(node.names.map((name) => [name, null]))];
}

/**
 * Checks and compiles a ViewDefinition (throws ViewError naming the element at fault).
 * `isResourceType` tells whether `resource` names a type this server knows.
 */
export function compileView(raw: unknown, isResourceType: (type: string) => boolean = () => true): CompiledView {
  const view = objectAt(raw, 'ViewDefinition');
  if (typeof view.resource !== 'string' || view.resource === '') {
    throw new ViewError('ViewDefinition.resource must name the resource type the view reads', 'resource');
  }
  if (!isResourceType(view.resource)) throw new ViewError(`${view.resource} is not a resource type`, 'resource');
  const literals = constantLiterals(view.constant);
  let needsDecimalText = false;
  const compile: Compile = (expression, at) => {
    if (typeof expression !== 'string' || expression.trim() === '') {
      throw new ViewError(`${at} must be a FHIRPath expression`, at);
    }
    if (/\b(low|high)Boundary\s*\(/.test(expression)) needsDecimalText = true;
    const text = substituteConstants(expression, literals, at);
    try {
      return compilePath(text);
    } catch (err) {
      throw new ViewError(`${at}: ${expression} is not valid FHIRPath (${(err as Error).message})`, at);
    }
  };
  if (arrayAt(view.select, 'select').length === 0) {
    throw new ViewError('ViewDefinition.select must hold at least one select', 'select');
  }
  const root = compileNode({ select: view.select }, 'ViewDefinition', compile);
  const columns = columnsOf(root);
  const seen = new Set<string>();
  for (const column of columns) {
    if (seen.has(column.name)) throw new ViewError(`Column ${column.name} is defined twice`, 'select');
    seen.add(column.name);
  }
  const wheres = arrayAt(view.where, 'where').map((w, i) => {
    const at = `where[${i}].path`;
    return { path: compile(objectAt(w, `where[${i}]`).path, at), at };
  });
  const resourceType = view.resource;
  return {
    resource: resourceType,
    ...(typeof view.name === 'string' ? { name: view.name } : {}),
    columns,
    needsDecimalText,
    rows(resource) {
      if (resource.resourceType !== resourceType) return [];
      const id = resource.id;
      for (const where of wheres) {
        const result = where.path(resource, { rowIndex: 0 });
        if (result.some((v) => typeof v !== 'boolean') || result.length > 1) {
          throw new ViewError(
            `${where.at} must give one boolean; it gave ${JSON.stringify(result)} for ${String(id)}`,
            where.at,
          );
        }
        if (result[0] !== true) return [];
      }
      return nodeRows(root, resource, 0, id).map((row) =>
        Object.fromEntries(columns.map((c) => [c.name, row[c.name] === undefined ? null : row[c.name]])),
      );
    },
  };
}
