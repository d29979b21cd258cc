import { badRequest, fail } from '@hearth/core';

/**
 * SCIM filters (RFC 7644 §3.4.2.2): attribute comparisons (eq ne co sw ew gt ge lt le pr),
 * and/or/not with parentheses (not > and > or), and value paths `emails[type eq "work"]`.
 * Parsed once into a tree, then evaluated against SCIM resources as plain JSON.
 */
export type ScimFilter =
  | { kind: 'compare'; path: string[]; op: string; value: unknown }
  | { kind: 'present'; path: string[] }
  | { kind: 'and' | 'or'; left: ScimFilter; right: ScimFilter }
  | { kind: 'not'; inner: ScimFilter }
  | { kind: 'valuePath'; path: string[]; inner: ScimFilter };

type Token = { type: 'word' | 'string' | 'number' | 'punct'; text: string; value?: unknown };

const OPS = new Set(['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le']);

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (/\s/.test(c)) {
      i++;
    } else if ('()[]'.includes(c)) {
      tokens.push({ type: 'punct', text: c });
      i++;
    } else if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') {
        j += text[j] === '\\' ? 2 : 1;
      }
      if (j >= text.length) {
        fail(badRequest('Unterminated string in SCIM filter', 'filter'));
      }
      const raw = text.slice(i, j + 1);
      try {
        tokens.push({ type: 'string', text: raw, value: JSON.parse(raw) });
      } catch {
        fail(badRequest('Invalid string in SCIM filter', 'filter'));
      }
      i = j + 1;
    } else {
      const m = /^[A-Za-z0-9_.:$-]+/.exec(text.slice(i));
      if (!m) {
        fail(badRequest(`Unexpected "${c}" in SCIM filter`, 'filter'));
      }
      const word = m[0];
      if (/^-?\d+(\.\d+)?$/.test(word)) {
        tokens.push({ type: 'number', text: word, value: Number(word) });
      } else {
        tokens.push({ type: 'word', text: word });
      }
      i += word.length;
    }
  }
  return tokens;
}

/** Parses a SCIM filter; a malformed one is a 400 (scimType invalidFilter). */
export function parseScimFilter(text: string): ScimFilter {
  const tokens = tokenize(text);
  let pos = 0;
  const peek = () => tokens[pos];
  const word = (t: Token | undefined, w: string) => t?.type === 'word' && t.text.toLowerCase() === w;
  const expect = (p: string) => {
    if (peek()?.text !== p) {
      fail(badRequest(`Expected "${p}" in SCIM filter`, 'filter'));
    }
    pos++;
  };

  const parseOr = (): ScimFilter => {
    let left = parseAnd();
    while (word(peek(), 'or')) {
      pos++;
      left = { kind: 'or', left, right: parseAnd() };
    }
    return left;
  };
  const parseAnd = (): ScimFilter => {
    let left = parseNot();
    while (word(peek(), 'and')) {
      pos++;
      left = { kind: 'and', left, right: parseNot() };
    }
    return left;
  };
  const parseNot = (): ScimFilter => {
    if (word(peek(), 'not')) {
      pos++;
      expect('(');
      const inner = parseOr();
      expect(')');
      return { kind: 'not', inner };
    }
    if (peek()?.text === '(') {
      pos++;
      const inner = parseOr();
      expect(')');
      return inner;
    }
    return parseAttr();
  };
  const parseAttr = (): ScimFilter => {
    const t = peek();
    if (t?.type !== 'word') {
      fail(badRequest('Expected an attribute in SCIM filter', 'filter'));
    }
    pos++;
    const path = attributePath(t.text);
    if (peek()?.text === '[') {
      pos++;
      const inner = parseOr();
      expect(']');
      return { kind: 'valuePath', path, inner };
    }
    const opToken = peek();
    const op = opToken?.type === 'word' ? opToken.text.toLowerCase() : '';
    pos++;
    if (op === 'pr') {
      return { kind: 'present', path };
    }
    if (!OPS.has(op)) {
      fail(badRequest(`Unknown SCIM operator "${opToken?.text ?? ''}"`, 'filter'));
    }
    const v = peek();
    pos++;
    let value: unknown;
    if (v?.type === 'string' || v?.type === 'number') {
      value = v.value;
    } else if (word(v, 'true') || word(v, 'false')) {
      value = v?.text.toLowerCase() === 'true';
    } else if (word(v, 'null')) {
      value = null;
    } else {
      fail(badRequest('Expected a value in SCIM filter', 'filter'));
    }
    return { kind: 'compare', path, op, value };
  };

  const tree = parseOr();
  if (pos !== tokens.length) {
    fail(badRequest(`Unexpected "${tokens[pos].text}" in SCIM filter`, 'filter'));
  }
  return tree;
}

/** "urn:...:User:name.givenName" → ['name', 'givenName'] (schema prefix dropped, lower-cased). */
function attributePath(text: string): string[] {
  const withoutSchema = text.includes(':') ? text.slice(text.lastIndexOf(':') + 1) : text;
  return withoutSchema.split('.').map((p) => p.toLowerCase());
}

function values(target: unknown, path: string[]): unknown[] {
  if (path.length === 0) {
    return Array.isArray(target) ? target : [target];
  }
  if (Array.isArray(target)) {
    return target.flatMap((t) => values(t, path));
  }
  if (!target || typeof target !== 'object') {
    return [];
  }
  const key = Object.keys(target).find((k) => k.toLowerCase() === path[0]);
  return key === undefined ? [] : values((target as Record<string, unknown>)[key], path.slice(1));
}

function compare(actual: unknown, op: string, expected: unknown): boolean {
  if (typeof actual === 'string' && typeof expected === 'string') {
    const a = actual.toLowerCase();
    const e = expected.toLowerCase();
    switch (op) {
      case 'eq':
        return a === e;
      case 'ne':
        return a !== e;
      case 'co':
        return a.includes(e);
      case 'sw':
        return a.startsWith(e);
      case 'ew':
        return a.endsWith(e);
      case 'gt':
        return a > e;
      case 'ge':
        return a >= e;
      case 'lt':
        return a < e;
      case 'le':
        return a <= e;
    }
  }
  if (op === 'eq') {
    return actual === expected;
  }
  if (op === 'ne') {
    return actual !== expected;
  }
  if (typeof actual === 'number' && typeof expected === 'number') {
    return op === 'gt'
      ? actual > expected
      : op === 'ge'
        ? actual >= expected
        : op === 'lt'
          ? actual < expected
          : op === 'le'
            ? actual <= expected
            : false;
  }
  return false;
}

export function matchesScimFilter(filter: ScimFilter, resource: unknown): boolean {
  switch (filter.kind) {
    case 'and':
      return matchesScimFilter(filter.left, resource) && matchesScimFilter(filter.right, resource);
    case 'or':
      return matchesScimFilter(filter.left, resource) || matchesScimFilter(filter.right, resource);
    case 'not':
      return !matchesScimFilter(filter.inner, resource);
    case 'present':
      return values(resource, filter.path).some((v) => v !== null && v !== undefined && v !== '');
    case 'valuePath':
      return values(resource, filter.path).some((item) => matchesScimFilter(filter.inner, item));
    case 'compare': {
      const found = values(resource, filter.path);
      if (filter.op === 'ne') {
        return !found.some((v) => compare(v, 'eq', filter.value));
      }
      return found.some((v) => compare(v, filter.op, filter.value));
    }
  }
}
