// FHIRPath Patch: a Parameters resource of add, insert, delete, replace and move operations whose
// paths are FHIRPath expressions (hl7.org/fhir/R4/fhirpatch.html).
import fhirpath from 'fhirpath';
import r4Model from 'fhirpath/fhir-context/r4/index.js';
import { badRequest, fail, unprocessable, type Resource } from '@hearth/core';
import { copyKeepingDecimals } from '../../storage/decimal-json.js';
import { childPathOf, elementInfo, type ElementInfo } from './element-info.js';

interface ParameterPart {
  name?: unknown;
  part?: unknown;
  [key: string]: unknown;
}

/** Where a node found by FHIRPath lives in the JSON: parent[key], or parent[key][index] for a list item. */
interface Location {
  parent: Record<string, unknown>;
  key: string;
  index: number | null;
  /** Type path of the parent ('Patient', 'HumanName', 'Patient.contact'). */
  parentPath: string;
}

/** fhirpath.js's internal node, kept when resolveInternalTypes is false. */
interface FhirPathNode {
  data: unknown;
  parentResNode: FhirPathNode | null;
  path: string | null;
  propName: string | null;
  index: number | null;
  fhirNodeDataType: string | null;
}

const OPERATION_TYPES = new Set(['add', 'insert', 'delete', 'replace', 'move']);

/** True when a PATCH body is a FHIRPath Patch document. */
export function isFhirPathPatch(body: unknown): boolean {
  return (
    typeof body === 'object' && body !== null && (body as { resourceType?: unknown }).resourceType === 'Parameters'
  );
}

/** Applies a FHIRPath Patch Parameters resource to a copy of `resource`. */
export function applyFhirPathPatch<T extends Resource>(resource: T, parameters: unknown): T {
  const ops = readOperations(parameters);
  const doc = copyKeepingDecimals(resource) as T & Record<string, unknown>;
  ops.forEach((op, i) => applyOperation(doc, op, `Parameters.parameter[${i}]`));
  pruneEmpty(doc);
  return doc;
}

interface PatchOperation {
  type: string;
  path: string;
  name?: string;
  value?: ParameterPart;
  index?: number;
  source?: number;
  destination?: number;
}

function readOperations(parameters: unknown): PatchOperation[] {
  const params = parameters as { parameter?: unknown };
  if (params.parameter === undefined) {
    return [];
  }
  if (!Array.isArray(params.parameter)) {
    fail(badRequest('Parameters.parameter must be an array', 'Parameters.parameter'));
  }
  return params.parameter.map((p: unknown, i: number) => {
    const where = `Parameters.parameter[${i}]`;
    const param = p as ParameterPart;
    if (typeof p !== 'object' || p === null || param.name !== 'operation' || !Array.isArray(param.part)) {
      fail(badRequest('Each FHIRPath Patch parameter must be an "operation" with parts', where));
    }
    const parts = new Map<string, ParameterPart>();
    for (const part of param.part as ParameterPart[]) {
      if (typeof part !== 'object' || part === null || typeof part.name !== 'string') {
        fail(badRequest('Each part of an operation needs a name', `${where}.part`));
      }
      parts.set(part.name, part);
    }
    const str = (name: string): string | undefined => {
      const part = parts.get(name);
      const v = part?.valueCode ?? part?.valueString ?? part?.valueUri;
      if (part && typeof v !== 'string') {
        fail(badRequest(`Part "${name}" must have a string value`, `${where}.part`));
      }
      return v as string | undefined;
    };
    const int = (name: string): number | undefined => {
      const part = parts.get(name);
      if (!part) {
        return undefined;
      }
      const v = part.valueInteger ?? part.valueUnsignedInt ?? part.valuePositiveInt;
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) {
        fail(badRequest(`Part "${name}" must be a non-negative integer`, `${where}.part`));
      }
      return v;
    };
    const type = str('type');
    const path = str('path');
    if (!type || !OPERATION_TYPES.has(type)) {
      fail(badRequest(`Operation type must be one of ${[...OPERATION_TYPES].join(', ')}`, `${where}.part`));
    }
    if (!path) {
      fail(badRequest('Operation needs a path', `${where}.part`));
    }
    return {
      type,
      path,
      name: str('name'),
      value: parts.get('value'),
      index: int('index'),
      source: int('source'),
      destination: int('destination'),
    };
  });
}

/** FHIRPath keywords that are also element names (Narrative.div, ValueSet.expansion.contains). */
const KEYWORD_MEMBER = /\.(div|mod|and|or|xor|implies|as|is|in|contains)(?![\w(`])/g;

/**
 * Patch paths name elements plainly ('Patient.text.div'), but FHIRPath reads `div` after a dot as
 * a keyword; such member names are quoted as identifiers (`div`) outside string literals.
 */
export function quoteKeywordMembers(path: string): string {
  return path
    .split(/('(?:[^'\\]|\\.)*')/)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(KEYWORD_MEMBER, '.`$1`')))
    .join('');
}

function evaluate(doc: Resource, path: string, where: string): FhirPathNode[] {
  try {
    const expression = quoteKeywordMembers(path);
    return fhirpath.evaluate(doc, expression, undefined, r4Model, { resolveInternalTypes: false }) as FhirPathNode[];
  } catch (err) {
    fail(badRequest(`Invalid FHIRPath "${path}": ${(err as Error).message.split('\n')[0]}`, where));
  }
}

function applyOperation(doc: Resource & Record<string, unknown>, op: PatchOperation, where: string): void {
  switch (op.type) {
    case 'add': {
      if (!op.name || !op.value) {
        fail(badRequest('An add operation needs a name and a value', where));
      }
      const nodes = evaluate(doc, op.path, where);
      if (nodes.length !== 1 || !isObject(nodes[0].data)) {
        fail(
          unprocessable(
            nodes.length === 0
              ? `No content found at ${op.path} when adding`
              : `${op.path} must identify exactly one element to add to (found ${nodes.length})`,
            where,
          ),
        );
      }
      const container = nodes[0].data as Record<string, unknown>;
      const parentPath = typePathOf(nodes[0]);
      const { key, info, childPath } = childKey(parentPath, op.name, op.value);
      const value = readValue(op.value, childPath, where);
      const existing = container[key];
      if (info?.isArray || (!info && Array.isArray(existing))) {
        container[key] = [...(Array.isArray(existing) ? existing : []), value];
      } else {
        container[key] = value;
      }
      return;
    }
    case 'insert': {
      if (op.index === undefined || !op.value) {
        fail(badRequest('An insert operation needs an index and a value', where));
      }
      const list = locateList(doc, op.path, where);
      if (op.index > list.items.length) {
        fail(unprocessable(`Index ${op.index} is beyond the end of ${op.path} (${list.items.length} items)`, where));
      }
      const childPath = listItemPath(list.parentPath, list.key);
      list.items.splice(op.index, 0, readValue(op.value, childPath, where));
      list.parent[list.key] = list.items;
      return;
    }
    case 'delete': {
      const nodes = evaluate(doc, op.path, where);
      if (nodes.length === 0) {
        return; // Nothing there: deleting is idempotent.
      }
      if (nodes.length > 1) {
        fail(unprocessable(`${op.path} matched ${nodes.length} elements; delete takes exactly one`, where));
      }
      removeAt(locate(nodes[0], op.path, where));
      return;
    }
    case 'replace': {
      if (!op.value) {
        fail(badRequest('A replace operation needs a value', where));
      }
      const nodes = evaluate(doc, op.path, where);
      if (nodes.length !== 1) {
        fail(unprocessable(`${op.path} matched ${nodes.length} elements; replace takes exactly one`, where));
      }
      const loc = locate(nodes[0], op.path, where);
      const childPath = listItemPath(loc.parentPath, loc.key);
      const value = readValue(op.value, childPath, where);
      if (loc.index === null) {
        loc.parent[loc.key] = value;
      } else {
        (loc.parent[loc.key] as unknown[])[loc.index] = value;
      }
      return;
    }
    case 'move': {
      if (op.source === undefined || op.destination === undefined) {
        fail(badRequest('A move operation needs a source and a destination', where));
      }
      const list = locateList(doc, op.path, where);
      if (op.source >= list.items.length || op.destination >= list.items.length) {
        fail(unprocessable(`Move indexes must be below the size of ${op.path} (${list.items.length})`, where));
      }
      const [item] = list.items.splice(op.source, 1);
      list.items.splice(op.destination, 0, item);
      const ext = list.parent[`_${list.key}`];
      if (Array.isArray(ext) && ext.length > op.source) {
        const [e] = ext.splice(op.source, 1);
        ext.splice(op.destination, 0, e);
      }
      return;
    }
  }
}

/** The element name as stored in JSON: a choice element 'value' with a Quantity is 'valueQuantity'. */
function childKey(
  parentPath: string,
  name: string,
  valuePart: ParameterPart,
): { key: string; info?: ElementInfo; childPath: string } {
  if (/^(__proto__|constructor|prototype)$/.test(name) || !/^[A-Za-z][A-Za-z0-9_]*$/.test(name)) {
    fail(badRequest(`Invalid element name "${name}"`));
  }
  const info = elementInfo(parentPath, name);
  if (info) {
    return { key: name, info, childPath: childPathOf(parentPath, name, info) };
  }
  const choice = elementInfo(parentPath, `${name}[x]`);
  const valueKey = Object.keys(valuePart).find((k) => k.startsWith('value'));
  if (choice && valueKey) {
    const suffix = valueKey.slice('value'.length);
    return { key: `${name}${suffix}`, info: { ...choice, isArray: false }, childPath: suffix };
  }
  return { key: name, childPath: `${parentPath}.${name}` };
}

function listItemPath(parentPath: string, key: string): string {
  const info = elementInfo(parentPath, key);
  return info ? childPathOf(parentPath, key, info) : `${parentPath}.${key}`;
}

/** A parameter's value: value[x] as given, or an anonymous (backbone) element built from its parts. */
function readValue(part: ParameterPart, typePath: string, where: string): unknown {
  const valueKey = Object.keys(part).find((k) => k.startsWith('value'));
  if (valueKey) {
    return part[valueKey];
  }
  if (part.resource !== undefined) {
    return part.resource;
  }
  if (!Array.isArray(part.part)) {
    fail(badRequest('A value part needs a value[x] or parts', where));
  }
  const out: Record<string, unknown> = {};
  for (const sub of part.part as ParameterPart[]) {
    if (typeof sub?.name !== 'string') {
      fail(badRequest('Each part of an anonymous value needs a name', where));
    }
    const { key, info, childPath } = childKey(typePath, sub.name, sub);
    const value = readValue(sub, childPath, where);
    if (info?.isArray) {
      out[key] = [...((out[key] as unknown[]) ?? []), value];
    } else {
      out[key] = value;
    }
  }
  return out;
}

function typePathOf(node: FhirPathNode): string {
  const data = node.data as { resourceType?: unknown } | undefined;
  if (data && typeof data.resourceType === 'string') {
    return data.resourceType;
  }
  return node.path ?? node.fhirNodeDataType ?? '';
}

function locate(node: FhirPathNode, path: string, where: string): Location {
  const parentNode = node.parentResNode;
  if (!parentNode || !isObject(parentNode.data) || !node.propName) {
    fail(unprocessable(`${path} does not identify an element that can be changed`, where));
  }
  const parent = parentNode.data as Record<string, unknown>;
  const prop = node.propName;
  let key = prop;
  if (!(prop in parent)) {
    // A choice element: fhirpath names it 'value', JSON names it 'valueQuantity'.
    const candidates = Object.keys(parent).filter(
      (k) => k.startsWith(prop) && k.length > prop.length && /[A-Z]/.test(k[prop.length]),
    );
    if (candidates.length !== 1) {
      fail(unprocessable(`${path} does not identify an element that can be changed`, where));
    }
    key = candidates[0];
  }
  const index = Array.isArray(parent[key]) ? node.index : null;
  return { parent, key, index, parentPath: typePathOf(parentNode) };
}

function removeAt(loc: Location): void {
  const { parent, key, index } = loc;
  if (index === null) {
    delete parent[key];
    delete parent[`_${key}`];
    return;
  }
  (parent[key] as unknown[]).splice(index, 1);
  const ext = parent[`_${key}`];
  if (Array.isArray(ext)) {
    ext.splice(index, 1);
  }
}

/** The list a path names, even when it is still empty (then found through the path's parent). */
function locateList(
  doc: Resource,
  path: string,
  where: string,
): { parent: Record<string, unknown>; key: string; items: unknown[]; parentPath: string } {
  const nodes = evaluate(doc, path, where);
  if (nodes.length > 0) {
    const loc = locate(nodes[0], path, where);
    const items = loc.parent[loc.key];
    if (!Array.isArray(items) || nodes.some((n) => n.parentResNode?.data !== loc.parent)) {
      fail(unprocessable(`${path} does not identify one list`, where));
    }
    return { parent: loc.parent, key: loc.key, items, parentPath: loc.parentPath };
  }
  const m = /^(.*)\.([A-Za-z][A-Za-z0-9]*)$/.exec(path);
  if (!m) {
    fail(unprocessable(`No list found at ${path}`, where));
  }
  const parents = evaluate(doc, m[1], where);
  if (parents.length !== 1 || !isObject(parents[0].data)) {
    fail(unprocessable(`No list found at ${path}`, where));
  }
  const parent = parents[0].data as Record<string, unknown>;
  const items: unknown[] = [];
  return { parent, key: m[2], items, parentPath: typePathOf(parents[0]) };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** FHIR JSON has no empty objects or arrays (hl7.org/fhir/R4/json.html): deletes may leave some behind. */
export function pruneEmpty(value: unknown): boolean {
  if (Array.isArray(value)) {
    for (let i = value.length - 1; i >= 0; i--) {
      if (pruneEmpty(value[i])) {
        value.splice(i, 1);
      }
    }
    return value.length === 0;
  }
  if (isObject(value)) {
    for (const key of Object.keys(value)) {
      const child = value[key];
      if ((isObject(child) || Array.isArray(child)) && pruneEmpty(child)) {
        delete value[key];
      }
    }
    return Object.keys(value).length === 0;
  }
  return false;
}
