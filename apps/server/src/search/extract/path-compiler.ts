/**
 * A compiler for the small FHIRPath subset that search parameter expressions use
 * (hl7.org/fhir/R4/searchparameter-registry.html): paths, `|`, `as`/`ofType()`/`is`,
 * `where(resolve() is T)`, `where(x = 'literal')`, `extension('url')` and `%resource`.
 * Compiled once into closures over the type schema, it extracts a typical Patient's values in a
 * few microseconds where a general FHIRPath engine takes about half a millisecond; anything
 * outside the subset returns undefined and is left to the fhirpath package (see evaluate.ts).
 */
import { getTypeSchema, type TypeSchema } from '@hearth/definitions';

/** A value with its FHIR type ('HumanName', 'dateTime', 'Observation.component'), when known. */
export interface TypedValue {
  value: unknown;
  type?: string;
}

/** Evaluates a compiled expression from a context (the resource, or a composite's element). */
export type Evaluator = (context: TypedValue[], resource: Record<string, unknown>) => TypedValue[];

type Token = { kind: 'id' | 'str' | 'sym' | 'env'; text: string };

const PRIMITIVES = new Set([
  'boolean',
  'integer',
  'string',
  'decimal',
  'uri',
  'url',
  'canonical',
  'base64Binary',
  'instant',
  'date',
  'dateTime',
  'time',
  'code',
  'oid',
  'id',
  'markdown',
  'unsignedInt',
  'positiveInt',
  'uuid',
  'xhtml',
]);

function tokenize(expr: string): Token[] | undefined {
  const tokens: Token[] = [];
  let i = 0;
  while (i < expr.length) {
    const c = expr[i];
    if (/\s/.test(c)) {
      i++;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(expr.slice(i))!;
      tokens.push({ kind: 'id', text: m[0] });
      i += m[0].length;
    } else if (c === '`') {
      const end = expr.indexOf('`', i + 1);
      if (end < 0) return undefined;
      tokens.push({ kind: 'id', text: expr.slice(i + 1, end) });
      i = end + 1;
    } else if (c === "'") {
      let j = i + 1;
      let s = '';
      while (j < expr.length && expr[j] !== "'") {
        if (expr[j] === '\\') {
          j++;
        }
        s += expr[j];
        j++;
      }
      if (j >= expr.length) return undefined;
      tokens.push({ kind: 'str', text: s });
      i = j + 1;
    } else if (c === '%') {
      const m = /^%[A-Za-z_]+/.exec(expr.slice(i));
      if (!m) return undefined;
      tokens.push({ kind: 'env', text: m[0].slice(1) });
      i += m[0].length;
    } else if ('.()|='.includes(c)) {
      tokens.push({ kind: 'sym', text: c });
      i++;
    } else {
      return undefined;
    }
  }
  return tokens;
}

class Unsupported extends Error {}

/** Step functions transform a collection. */
type Step = (nodes: TypedValue[], resource: Record<string, unknown>) => TypedValue[];

class Parser {
  private pos = 0;
  constructor(private readonly tokens: Token[]) {}

  private peek(): Token | undefined {
    return this.tokens[this.pos];
  }
  private next(): Token {
    const t = this.tokens[this.pos++];
    if (!t) throw new Unsupported();
    return t;
  }
  private expectSym(s: string): void {
    const t = this.next();
    if (t.kind !== 'sym' || t.text !== s) throw new Unsupported();
  }
  done(): boolean {
    return this.pos >= this.tokens.length;
  }

  /** union := typed ('|' typed)* */
  parseUnion(): Step {
    const parts = [this.parseTyped()];
    while (this.peek()?.kind === 'sym' && this.peek()?.text === '|') {
      this.next();
      parts.push(this.parseTyped());
    }
    if (parts.length === 1) return parts[0];
    return (nodes, res) => parts.flatMap((p) => p(nodes, res));
  }

  /** typed := invocation (('as' | 'is') TypeName)? */
  private parseTyped(): Step {
    const inner = this.parseInvocation();
    const t = this.peek();
    if (t?.kind === 'id' && (t.text === 'as' || t.text === 'is')) {
      this.next();
      const typeName = this.next();
      if (typeName.kind !== 'id') throw new Unsupported();
      if (t.text === 'is') throw new Unsupported();
      const filter = ofType(typeName.text);
      return (nodes, res) => filter(inner(nodes, res), res);
    }
    return inner;
  }

  /** invocation := term ('.' member)* */
  private parseInvocation(): Step {
    const steps: Step[] = [this.parseTerm()];
    while (this.peek()?.kind === 'sym' && this.peek()?.text === '.') {
      this.next();
      steps.push(this.parseMember());
    }
    return (nodes, res) => {
      let current = nodes;
      for (const step of steps) {
        current = step(current, res);
        if (current.length === 0) break;
      }
      return current;
    };
  }

  private parseTerm(): Step {
    const t = this.next();
    if (t.kind === 'sym' && t.text === '(') {
      const inner = this.parseUnion();
      this.expectSym(')');
      return inner;
    }
    if (t.kind === 'env') {
      if (t.text !== 'resource' && t.text !== 'rootResource') throw new Unsupported();
      return (_nodes, res) => [{ value: res, type: String(res.resourceType) }];
    }
    if (t.kind === 'id') {
      if (/^[A-Z]/.test(t.text) && (t.text === 'Resource' || t.text === 'DomainResource' || isKnownType(t.text))) {
        const name = t.text;
        // A leading type name filters the context (hl7.org/fhirpath/#path-selection).
        return (nodes) => nodes.filter((n) => isOfType(n, name));
      }
      this.pos--;
      return this.parseMember();
    }
    throw new Unsupported();
  }

  private parseMember(): Step {
    const t = this.next();
    if (t.kind !== 'id') throw new Unsupported();
    const name = t.text;
    if (this.peek()?.kind === 'sym' && this.peek()?.text === '(') {
      this.next();
      return this.parseFunction(name);
    }
    return child(name);
  }

  private parseFunction(name: string): Step {
    switch (name) {
      case 'ofType':
      case 'as': {
        const typeName = this.next();
        if (typeName.kind !== 'id') throw new Unsupported();
        this.expectSym(')');
        return ofType(typeName.text);
      }
      case 'extension': {
        const url = this.next();
        if (url.kind !== 'str') throw new Unsupported();
        this.expectSym(')');
        const ext = child('extension');
        return (nodes, res) => ext(nodes, res).filter((n) => (n.value as { url?: string }).url === url.text);
      }
      case 'where':
        return this.parseWhere();
      case 'first': {
        this.expectSym(')');
        return (nodes) => nodes.slice(0, 1);
      }
      case 'resolve': {
        // Only the target's type is known at index time (for `.resolve().resourceType`).
        this.expectSym(')');
        return (nodes, res) =>
          nodes.flatMap((n) => {
            const type = referenceTargetType(n.value, res);
            return type ? [{ value: { resourceType: type }, type: 'Reference.target' }] : [];
          });
      }
      default:
        throw new Unsupported();
    }
  }

  /** where(resolve() is T) | where(path = 'literal') */
  private parseWhere(): Step {
    const t = this.peek();
    if (t?.kind === 'id' && t.text === 'resolve') {
      this.next();
      this.expectSym('(');
      this.expectSym(')');
      const is = this.next();
      if (is.kind !== 'id' || is.text !== 'is') throw new Unsupported();
      const typeName = this.next();
      if (typeName.kind !== 'id') throw new Unsupported();
      this.expectSym(')');
      const type = typeName.text;
      return (nodes, res) => nodes.filter((n) => referenceTargetType(n.value, res) === type);
    }
    const path = this.parseInvocation();
    this.expectSym('=');
    const lit = this.next();
    if (lit.kind !== 'str' && lit.kind !== 'id') throw new Unsupported();
    const expected = lit.text;
    this.expectSym(')');
    return (nodes, res) =>
      nodes.filter((n) => path([n], res).some((v) => v.value !== undefined && String(v.value) === expected));
  }
}

/** Compiles an expression of the subset; undefined when it uses anything else. */
export function compilePath(expression: string): Evaluator | undefined {
  const tokens = tokenize(expression);
  if (!tokens) return undefined;
  try {
    const parser = new Parser(tokens);
    const step = parser.parseUnion();
    if (!parser.done()) return undefined;
    return (context, resource) => step(context, resource);
  } catch (err) {
    if (err instanceof Unsupported) return undefined;
    throw err;
  }
}

function isKnownType(name: string): boolean {
  return getTypeSchema(name) !== undefined;
}

const schemaCache = new Map<string, TypeSchema | null>();
function schemaOf(type: string | undefined): TypeSchema | undefined {
  if (!type) return undefined;
  let s = schemaCache.get(type);
  if (s === undefined) {
    s = getTypeSchema(type) ?? null;
    schemaCache.set(type, s);
  }
  return s ?? undefined;
}

/** The type of an element value: a contained resource is typed by its resourceType. */
function typeOfValue(declared: string | undefined, value: unknown): string | undefined {
  if ((declared === 'Resource' || declared === 'DomainResource') && value && typeof value === 'object') {
    return String((value as { resourceType?: unknown }).resourceType ?? declared);
  }
  return declared;
}

function push(out: TypedValue[], raw: unknown, type: string | undefined): void {
  if (raw === undefined || raw === null) return;
  if (Array.isArray(raw)) {
    for (const item of raw) {
      if (item !== undefined && item !== null) out.push({ value: item, type: typeOfValue(type, item) });
    }
  } else {
    out.push({ value: raw, type: typeOfValue(type, raw) });
  }
}

function upperFirst(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** How a child name reads on one type: a plain element, a choice's typed names, or nothing. */
type ChildPlan = { kind: 'direct'; type?: string } | { kind: 'choice'; keys: [string, string][] } | { kind: 'none' };

/** Navigates to a child element, expanding choice elements (value -> valueQuantity, ...). */
function child(name: string): Step {
  const plans = new Map<string, ChildPlan>();
  const planFor = (type: string): ChildPlan | undefined => {
    let plan = plans.get(type);
    if (!plan) {
      const schema = schemaOf(type);
      if (!schema) return undefined;
      const el = Object.hasOwn(schema.elements, name) ? schema.elements[name] : undefined;
      const choice = schema.elements[`${name}[x]`];
      plan = el
        ? { kind: 'direct', type: el.type.length === 1 ? el.type[0].code : undefined }
        : choice
          ? { kind: 'choice', keys: choice.type.map((t) => [name + upperFirst(t.code), t.code]) }
          : { kind: 'none' };
      plans.set(type, plan);
    }
    return plan;
  };
  return (nodes) => {
    const out: TypedValue[] = [];
    for (const node of nodes) {
      const v = node.value;
      if (!v || typeof v !== 'object' || Array.isArray(v)) continue;
      const obj = v as Record<string, unknown>;
      if (name === 'resourceType') {
        push(out, obj.resourceType, 'code');
        continue;
      }
      const plan = node.type ? planFor(node.type) : undefined;
      if (plan) {
        if (plan.kind === 'direct') {
          push(out, obj[name], plan.type);
        } else if (plan.kind === 'choice') {
          for (const [key, type] of plan.keys) {
            if (obj[key] !== undefined) push(out, obj[key], type);
          }
        }
        continue;
      }
      // No definition (an unknown extension type): read the property, or guess a choice by its name.
      if (obj[name] !== undefined) {
        push(out, obj[name], undefined);
        continue;
      }
      for (const key of Object.keys(obj)) {
        if (key.length > name.length && key.startsWith(name) && /[A-Z]/.test(key[name.length])) {
          const suffix = key.slice(name.length);
          const lower = suffix.charAt(0).toLowerCase() + suffix.slice(1);
          push(out, obj[key], PRIMITIVES.has(lower) ? lower : suffix);
        }
      }
    }
    return out;
  };
}

const typeMatches = new Map<string, boolean>();

/** True when the node's type is `name` or derives from it (Age is a Quantity). */
function isOfType(node: TypedValue, name: string): boolean {
  const start = node.type ?? inferType(node.value);
  if (!start) return false;
  if (start === name) return true;
  const cacheKey = `${start}|${name}`;
  let result = typeMatches.get(cacheKey);
  if (result === undefined) {
    result = false;
    const wanted = name.toLowerCase();
    let t: string | undefined = start;
    for (let depth = 0; t && depth < 8; depth++) {
      if (t.toLowerCase() === wanted) {
        result = true;
        break;
      }
      if ((wanted === 'resource' || wanted === 'domainresource') && schemaOf(t)?.kind === 'resource') {
        result = true;
        break;
      }
      t = schemaOf(t)?.base;
    }
    typeMatches.set(cacheKey, result);
  }
  return result;
}

function inferType(value: unknown): string | undefined {
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'decimal';
  if (typeof value === 'string') return 'string';
  if (value && typeof value === 'object' && 'resourceType' in value) {
    return String((value as { resourceType: unknown }).resourceType);
  }
  return undefined;
}

function ofType(name: string): Step {
  return (nodes) => nodes.filter((n) => isOfType(n, name));
}

/** The type a Reference points at: its `type`, the type in its URL, or a contained resource's type. */
export function referenceTargetType(value: unknown, resource: Record<string, unknown>): string | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const ref = value as { reference?: unknown; type?: unknown };
  if (typeof ref.reference === 'string') {
    const r = ref.reference;
    if (r.startsWith('#')) {
      const contained = (resource.contained as { id?: string; resourceType?: string }[] | undefined) ?? [];
      return contained.find((c) => c.id === r.slice(1))?.resourceType;
    }
    const m = /(?:^|\/)([A-Z][A-Za-z]+)\/[A-Za-z0-9\-.]{1,64}(?:\/_history\/[^/]+)?$/.exec(r);
    if (m) return m[1];
  }
  return typeof ref.type === 'string' ? ref.type : undefined;
}
