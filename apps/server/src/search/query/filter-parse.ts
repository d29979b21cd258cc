import { badRequest, fail, unstorableCharacter } from '@hearth/core';

/**
 * The `_filter` grammar (hl7.org/fhir/R4/search_filter.html):
 *   filter    = paramExp | logExp | "not" "(" filter ")" | "(" filter ")"
 *   logExp    = filter ("and" | "or") filter ...   ("and" binds tighter than "or")
 *   paramExp  = paramPath SP compareOp SP compValue
 *   paramPath = paramName ("[" filter "]")? ("." paramPath)?
 *   compValue = JSON string | token (no whitespace, ")" or "]")
 */
export type FilterNode =
  | { kind: 'and' | 'or'; left: FilterNode; right: FilterNode }
  | { kind: 'not'; inner: FilterNode }
  | { kind: 'param'; path: PathLink[]; op: FilterOp; value: string };

/** One link of a parameter path: the parameter and an optional filter on what it references. */
export interface PathLink {
  name: string;
  filter?: FilterNode;
}

export const FILTER_OPS = [
  'eq',
  'ne',
  'co',
  'sw',
  'ew',
  'gt',
  'lt',
  'ge',
  'le',
  'ap',
  'sa',
  'eb',
  'pr',
  'po',
  'ss',
  'sb',
  'in',
  'ni',
  're',
] as const;
export type FilterOp = (typeof FILTER_OPS)[number];

const MAX_DEPTH = 32;

class Parser {
  private pos = 0;
  private depth = 0;
  constructor(private readonly text: string) {}

  private error(message: string): never {
    fail(badRequest(`_filter: ${message} at position ${this.pos + 1}`, '_filter'));
  }

  private skipSpace(): void {
    while (this.pos < this.text.length && /\s/.test(this.text[this.pos])) this.pos++;
  }

  private peekWord(): string {
    this.skipSpace();
    const m = /^[A-Za-z_][A-Za-z0-9_:-]*/.exec(this.text.slice(this.pos));
    return m ? m[0] : '';
  }

  private expect(c: string): void {
    this.skipSpace();
    if (this.text[this.pos] !== c) this.error(`expected "${c}"`);
    this.pos++;
  }

  atEnd(): boolean {
    this.skipSpace();
    return this.pos >= this.text.length;
  }

  /** filter := and ("or" and)* */
  parseOr(): FilterNode {
    if (++this.depth > MAX_DEPTH) this.error('too deeply nested');
    let left = this.parseAnd();
    while (this.peekWord().toLowerCase() === 'or') {
      this.pos += 2;
      left = { kind: 'or', left, right: this.parseAnd() };
    }
    this.depth--;
    return left;
  }

  private parseAnd(): FilterNode {
    let left = this.parseUnary();
    while (this.peekWord().toLowerCase() === 'and') {
      this.pos += 3;
      left = { kind: 'and', left, right: this.parseUnary() };
    }
    return left;
  }

  private parseUnary(): FilterNode {
    this.skipSpace();
    if (this.text[this.pos] === '(') {
      this.pos++;
      const inner = this.parseOr();
      this.expect(')');
      return inner;
    }
    const word = this.peekWord();
    if (word.toLowerCase() === 'not') {
      const save = this.pos;
      this.pos += 3;
      this.skipSpace();
      if (this.text[this.pos] === '(') {
        this.pos++;
        const inner = this.parseOr();
        this.expect(')');
        return { kind: 'not', inner };
      }
      this.pos = save; // a parameter called "not"
    }
    return this.parseParam();
  }

  private parsePath(): PathLink[] {
    const links: PathLink[] = [];
    for (;;) {
      const name = this.peekWord();
      if (!name) this.error('expected a parameter name');
      this.pos += name.length;
      const link: PathLink = { name };
      if (this.text[this.pos] === '[') {
        this.pos++;
        link.filter = this.parseOr();
        this.expect(']');
      }
      links.push(link);
      if (this.text[this.pos] !== '.') return links;
      this.pos++;
    }
  }

  private parseParam(): FilterNode {
    const path = this.parsePath();
    const op = this.peekWord().toLowerCase() as FilterOp;
    if (!FILTER_OPS.includes(op)) this.error(`unknown operator "${op}"`);
    this.pos += op.length;
    this.skipSpace();
    return { kind: 'param', path, op, value: this.parseValue() };
  }

  private parseValue(): string {
    if (this.text[this.pos] === '"') {
      // A JSON string: escapes as in JSON.
      let end = this.pos + 1;
      while (end < this.text.length && this.text[end] !== '"') end += this.text[end] === '\\' ? 2 : 1;
      if (end >= this.text.length) this.error('unterminated string');
      const raw = this.text.slice(this.pos, end + 1);
      this.pos = end + 1;
      let value: string;
      try {
        value = JSON.parse(raw) as string;
      } catch {
        this.error('invalid string');
      }
      // Its escapes are decoded only here, past the request's own check of what can be stored.
      const bad = unstorableCharacter(value);
      if (bad) this.error(`the string holds ${bad}`);
      return value;
    }
    const m = /^[^\s)\]]+/.exec(this.text.slice(this.pos));
    if (!m) this.error('expected a value');
    this.pos += m[0].length;
    return m[0];
  }
}

/** Parses a `_filter` expression; a syntax error is a 400 naming `_filter` and the position. */
export function parseFilterExpression(text: string): FilterNode {
  const parser = new Parser(text);
  const node = parser.parseOr();
  if (!parser.atEnd()) {
    fail(badRequest('_filter: unexpected text after the expression', '_filter'));
  }
  return node;
}

/** The value sets an expression's `in` / `ni` comparisons name. */
export function filterValueSets(node: FilterNode): string[] {
  switch (node.kind) {
    case 'and':
    case 'or':
      return [...filterValueSets(node.left), ...filterValueSets(node.right)];
    case 'not':
      return filterValueSets(node.inner);
    default:
      return [
        ...(node.op === 'in' || node.op === 'ni' ? [node.value] : []),
        ...node.path.flatMap((l) => (l.filter ? filterValueSets(l.filter) : [])),
      ];
  }
}

/** The `ss` / `sb` comparisons of an expression (their values are `system|code`). */
export function filterSubsumptions(node: FilterNode): { op: 'ss' | 'sb'; value: string }[] {
  switch (node.kind) {
    case 'and':
    case 'or':
      return [...filterSubsumptions(node.left), ...filterSubsumptions(node.right)];
    case 'not':
      return filterSubsumptions(node.inner);
    default:
      return [
        ...(node.op === 'ss' || node.op === 'sb' ? [{ op: node.op, value: node.value }] : []),
        ...node.path.flatMap((l) => (l.filter ? filterSubsumptions(l.filter) : [])),
      ];
  }
}
