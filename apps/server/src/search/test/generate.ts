/**
 * Generates, for one search parameter of one resource type, a resource carrying a value at the
 * parameter's expression and the search value that must find it. Used by the test that walks
 * every R4 SearchParameter; the values are synthetic but typed by the definitions.
 */
import { getTypeSchema } from '@hearth/definitions';
import type { ParamDef } from '../registry/params.js';

type Json = Record<string, unknown>;

export interface Generated {
  resource: Json;
  /** The query value (already a FHIR search value, not URL-encoded). */
  value: string;
}

interface Segment {
  name: string;
  ofType?: string;
  where?: [string, string];
  resolveIs?: string;
  extensionUrl?: string;
}

/** Splits one alternative ('(Observation.value.ofType(Quantity))') into path segments. */
function segments(expression: string): { type: string; path: Segment[] } | undefined {
  let e = expression.trim();
  while (e.startsWith('(') && e.endsWith(')') && balanced(e.slice(1, -1))) e = e.slice(1, -1).trim();
  const as = /^(.*)\s+as\s+([A-Za-z]+)\)?$/.exec(e);
  if (as) e = `${as[1]}.ofType(${as[2]})`;
  if (e.startsWith('(')) {
    // '(Observation.value.ofType(CodeableConcept)).text': unwrap the group.
    const close = matching(e);
    if (close < 0) return undefined;
    e = e.slice(1, close) + e.slice(close + 1);
  }
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < e.length; i++) {
    if (e[i] === '(') depth++;
    else if (e[i] === ')') depth--;
    else if (e[i] === '.' && depth === 0) {
      parts.push(e.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(e.slice(start));
  const [type, ...rest] = parts.map((p) => p.trim());
  const path: Segment[] = [];
  for (const p of rest) {
    let m: RegExpExecArray | null;
    if ((m = /^ofType\((\w+)\)$/.exec(p)) || (m = /^as\((\w+)\)$/.exec(p))) {
      if (!path.length) return undefined;
      path[path.length - 1].ofType = m[1];
    } else if ((m = /^where\(resolve\(\) is (\w+)\)$/.exec(p))) {
      if (!path.length) return undefined;
      path[path.length - 1].resolveIs = m[1];
    } else if ((m = /^where\((\w+)\s*=\s*'([^']*)'\)$/.exec(p))) {
      if (!path.length) return undefined;
      path[path.length - 1].where = [m[1], m[2]];
    } else if ((m = /^extension\('([^']*)'\)$/.exec(p))) {
      path.push({ name: 'extension', extensionUrl: m[1] });
    } else if (/^\w+$/.test(p)) {
      path.push({ name: p });
    } else {
      return undefined;
    }
  }
  return { type, path };
}

function balanced(s: string): boolean {
  let depth = 0;
  for (const c of s) {
    if (c === '(') depth++;
    else if (c === ')' && --depth < 0) return false;
  }
  return depth === 0;
}

function matching(s: string): number {
  let depth = 0;
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '(') depth++;
    else if (s[i] === ')' && --depth === 0) return i;
  }
  return -1;
}

function elementOf(type: string, name: string): { types: string[]; isArray: boolean; choice: boolean } | undefined {
  const schema = getTypeSchema(type);
  if (!schema) return undefined;
  const direct = schema.elements[name];
  if (direct) return { types: direct.type.map((t) => t.code), isArray: direct.isArray, choice: false };
  const choice = schema.elements[`${name}[x]`];
  if (choice) return { types: choice.type.map((t) => t.code), isArray: choice.isArray, choice: true };
  return undefined;
}

const upper = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** A leaf value of `fhirType` for a parameter of `paramType`, and the search value that finds it. */
function leaf(
  fhirType: string,
  paramType: string,
  n: number,
  seg?: Segment,
  target?: string,
): [unknown, string] | undefined {
  const code = `c${n}`;
  const sys = 'http://example.org/sys';
  switch (fhirType) {
    case 'CodeableConcept':
      return [
        { coding: [{ system: sys, code }], text: `Text ${code}` },
        paramType === 'string' ? `text ${code}` : `${sys}|${code}`,
      ];
    case 'Coding':
      return [{ system: sys, code, display: `Disp ${code}` }, paramType === 'string' ? `disp` : `${sys}|${code}`];
    case 'Identifier':
      return [{ system: sys, value: `v${n}` }, paramType === 'string' ? `v${n}` : `${sys}|v${n}`];
    case 'ContactPoint':
      return [{ system: seg?.where?.[1] ?? 'phone', value: `555-${n}` }, `555-${n}`];
    case 'HumanName':
      return [{ family: `Fam${n}`, given: [`Giv${n}`] }, `fam${n}`];
    case 'Address':
      return [
        { line: [`${n} Main St`], city: `City${n}`, state: 'ST', postalCode: `P${n}`, country: 'CO', use: 'home' },
        paramType === 'token' ? 'home' : `city${n}`,
      ];
    case 'Reference': {
      const t = seg?.resolveIs ?? target ?? 'Patient';
      return [{ reference: `${t}/r${n}` }, `${t}/r${n}`];
    }
    case 'Quantity':
    case 'Age':
    case 'Duration':
    case 'Distance':
    case 'Count':
    case 'SimpleQuantity':
    case 'MoneyQuantity':
      return [
        { value: 5.5, system: 'http://unitsofmeasure.org', code: 'mg', unit: 'mg' },
        '5.5|http://unitsofmeasure.org|mg',
      ];
    case 'Money':
      return [{ value: 12.5, currency: 'USD' }, '12.5|urn:iso:std:iso:4217|USD'];
    case 'Range':
      return [
        {
          low: { value: 1, system: 'http://unitsofmeasure.org', code: 'mg' },
          high: { value: 9, system: 'http://unitsofmeasure.org', code: 'mg' },
        },
        paramType === 'number' ? 'ge1' : 'ge1|http://unitsofmeasure.org|mg',
      ];
    case 'Period':
      return [{ start: '2021-03-04T05:06:07Z', end: '2021-03-05T05:06:07Z' }, 'ge2021-03-04'];
    case 'Timing':
      return [{ event: ['2021-03-04T05:06:07Z'] }, '2021-03-04'];
    case 'date':
      return ['2021-03-04', '2021-03-04'];
    case 'dateTime':
    case 'instant':
      return ['2021-03-04T05:06:07Z', '2021-03-04'];
    case 'boolean':
      return [true, 'true'];
    case 'integer':
    case 'positiveInt':
    case 'unsignedInt':
      return [7, paramType === 'token' ? '7' : '7'];
    case 'decimal':
      return [42.5, '42.5'];
    case 'uri':
    case 'url':
    case 'canonical':
    case 'oid':
    case 'uuid': {
      if (paramType === 'reference') {
        const t = target ?? 'Questionnaire';
        return [`http://example.org/fhir/${t}/u${n}`, `http://example.org/fhir/${t}/u${n}`];
      }
      const v =
        fhirType === 'oid'
          ? `urn:oid:1.2.${n}`
          : fhirType === 'uuid'
            ? `urn:uuid:00000000-0000-0000-0000-${String(n).padStart(12, '0')}`
            : `http://example.org/u/${n}`;
      return [v, paramType === 'string' ? v.slice(0, 12) : v];
    }
    case 'code':
    case 'id':
    case 'string':
    case 'markdown':
      return [paramType === 'string' ? `Sval${n}` : code, paramType === 'string' ? `sval${n}` : code];
    case 'Attachment':
      return [{ url: `http://example.org/a/${n}`, contentType: 'text/plain' }, `http://example.org/a/${n}`];
    case 'Annotation':
      return [{ text: `Note ${n}` }, `note`];
    case 'SampledData':
      return undefined;
    default:
      return undefined;
  }
}

/** Builds `path` under `node` (of `type`), ending in a generated leaf; returns the search value. */
function build(
  node: Json,
  type: string,
  path: Segment[],
  param: ParamDef,
  n: number,
  paramType = param.type,
): string | undefined {
  const [seg, ...rest] = path;
  const el = elementOf(type, seg.name);
  if (!el) return undefined;
  let chosen = seg.ofType ? el.types.find((t) => t.toLowerCase() === seg.ofType!.toLowerCase()) : undefined;
  if (seg.ofType && !chosen) {
    // ofType(Quantity) on an Age-typed element and the like.
    chosen = el.types[0];
  }
  chosen ??= pickType(el.types, paramType, rest.length === 0);
  if (!chosen) return undefined;
  const key = el.choice ? seg.name + upper(chosen) : seg.name;
  const put = (value: unknown) => {
    node[key] = el.isArray ? [value] : value;
  };
  if (seg.extensionUrl !== undefined) {
    const ext: Json = { url: seg.extensionUrl };
    put(ext);
    if (rest.length === 0) {
      const [v, q] = leaf('CodeableConcept', paramType, n) ?? [];
      ext.valueCodeableConcept = v;
      return q;
    }
    return build(ext, 'Extension', rest, param, n, paramType);
  }
  if (rest.length === 0) {
    const generated = leaf(chosen, paramType, n, seg, param.target?.[0]);
    if (!generated) return undefined;
    const [value, query] = generated;
    if (seg.where && value && typeof value === 'object') (value as Json)[seg.where[0]] = seg.where[1];
    put(value);
    return query;
  }
  const child: Json = {};
  if (seg.where) child[seg.where[0]] = seg.where[1];
  put(child);
  return build(child, chosen, rest, param, n, paramType);
}

function pickType(types: string[], paramType: string, isLeaf: boolean): string | undefined {
  if (!isLeaf) return types[0];
  const preferred: Record<string, string[]> = {
    date: ['dateTime', 'date', 'instant', 'Period', 'Timing'],
    quantity: ['Quantity', 'Age', 'Duration', 'Money', 'Range', 'SimpleQuantity'],
    reference: ['Reference', 'canonical', 'uri'],
    number: ['decimal', 'integer', 'positiveInt', 'unsignedInt', 'Range'],
    token: ['CodeableConcept', 'Coding', 'Identifier', 'code', 'boolean', 'string', 'id', 'uri', 'ContactPoint'],
    string: ['string', 'HumanName', 'Address', 'markdown'],
    uri: ['uri', 'url', 'canonical'],
  };
  return (preferred[paramType] ?? []).find((t) => types.includes(t)) ?? types[0];
}

/** A resource with a value for `param`, or undefined when this generator cannot make one. */
export function generateFor(param: ParamDef, n: number): Generated | undefined {
  const resourceType = param.resourceType;
  const resource: Json = { resourceType };
  if (!param.expression) return undefined;
  const alternatives = param.expression.split(' | ');
  if (param.type === 'composite') {
    return generateComposite(param, resource, n);
  }
  if (param.type === 'special') {
    if (param.code !== 'near') return undefined;
    resource.position = { latitude: 10.5, longitude: 20.25 };
    return { resource, value: '10.5|20.25|1|km' };
  }
  if (param.code === 'deceased' && resourceType === 'Patient') {
    return { resource: { resourceType, deceasedBoolean: true }, value: 'true' };
  }
  for (const alt of alternatives) {
    const parsed = segments(/^[a-z]/.test(alt.trim()) ? `${resourceType}.${alt.trim()}` : alt);
    if (!parsed || parsed.path.length === 0) continue;
    if (parsed.type !== resourceType && parsed.type !== 'Resource' && parsed.type !== 'DomainResource') continue;
    const candidate: Json = { resourceType };
    const value = build(candidate, resourceType, parsed.path, param, n);
    if (value !== undefined) return { resource: candidate, value };
  }
  return undefined;
}

function generateComposite(param: ParamDef, resource: Json, n: number): Generated | undefined {
  const base = segments(param.expression!.split(' | ')[0]);
  if (!base) return undefined;
  let node = resource;
  let type = param.resourceType;
  for (const seg of base.path) {
    const el = elementOf(type, seg.name);
    if (!el) return undefined;
    const child: Json = {};
    node[seg.name] = el.isArray ? [child] : child;
    node = child;
    type = el.types[0];
  }
  const values: string[] = [];
  for (const component of param.components ?? []) {
    const parsed = segments(`Root.${component.expression.split(' | ')[0]}`);
    if (!parsed) return undefined;
    const v = build(node, type, parsed.path, { ...param, type: component.type }, n, component.type);
    if (v === undefined) return undefined;
    values.push(v.replace(/\$/g, '\\$'));
  }
  return { resource, value: values.join('$') };
}
