/**
 * The SDK reference, from TypeDoc's JSON output of @hearth/core (its TSDoc): one page per symbol
 * the package exports, at sdk/core.{name}. The FHIR types it re-exports from @hearth/fhir-types get
 * one page listing them, each linked to its resource or data type reference page.
 */
import { frontMatter, table } from './markdown.js';
import type { Page } from './reference.js';

/** The parts of TypeDoc's JSON (typedoc.org/api, JSONOutput) these pages read. */
export interface TdComment {
  summary?: { kind: string; text: string }[];
  blockTags?: { tag: string; content: { kind: string; text: string }[] }[];
}
export interface TdType {
  type: string;
  name?: string;
  value?: unknown;
  types?: TdType[];
  elementType?: TdType;
  elements?: TdType[];
  target?: unknown;
  typeArguments?: TdType[];
  declaration?: TdReflection;
  operator?: string;
  objectType?: TdType;
  indexType?: TdType;
  checkType?: TdType;
  extendsType?: TdType;
  trueType?: TdType;
  falseType?: TdType;
  targetType?: TdType;
  asserts?: boolean;
  package?: string;
}
export interface TdReflection {
  id: number;
  name: string;
  kind: number;
  flags?: {
    isOptional?: boolean;
    isStatic?: boolean;
    isInherited?: boolean;
    isReadonly?: boolean;
    isPrivate?: boolean;
  };
  comment?: TdComment;
  children?: TdReflection[];
  signatures?: TdReflection[];
  parameters?: TdReflection[];
  typeParameters?: TdReflection[];
  type?: TdType;
  defaultValue?: string;
  getSignature?: TdReflection;
  indexSignatures?: TdReflection[];
  extendedTypes?: TdType[];
}

const KIND: Record<number, string> = {
  8: 'Enumeration',
  16: 'Enumeration member',
  32: 'Variable',
  64: 'Function',
  128: 'Class',
  256: 'Interface',
  512: 'Constructor',
  1024: 'Property',
  2048: 'Method',
  262144: 'Accessor',
  2097152: 'Type alias',
};

export function sdkId(name: string): string {
  return `core.${name}`;
}

function text(parts: { kind: string; text: string }[] | undefined): string {
  return (parts ?? [])
    .map((p) => p.text)
    .join('')
    .trim();
}

/** The comment's summary and its tags (@example, @returns, @throws...). */
function commentMarkdown(comment: TdComment | undefined): string {
  if (!comment) return '';
  const blocks = [text(comment.summary)];
  for (const tag of comment.blockTags ?? []) {
    const body = text(tag.content);
    if (tag.tag === '@example')
      blocks.push(`**Example**\n\n${body.startsWith('```') ? body : '```ts\n' + body + '\n```'}`);
    else if (tag.tag === '@deprecated') blocks.push(`**Deprecated.** ${body}`);
    else if (tag.tag !== '@param' && tag.tag !== '@typeParam') blocks.push(`**${tag.tag.slice(1)}:** ${body}`);
  }
  return blocks.filter(Boolean).join('\n\n');
}

/** A one-line summary (the first paragraph, no code fences). */
function summaryLine(comment: TdComment | undefined): string {
  const first = text(comment?.summary).split(/\n\s*\n/)[0] ?? '';
  return first.includes('```') ? '' : first.replace(/\s+/g, ' ');
}

export class TypeRenderer {
  constructor(
    private readonly own: Map<number, string>,
    private readonly ownNames: Set<string>,
  ) {}

  render(t: TdType | undefined, depth = 0): string {
    if (!t) return 'unknown';
    switch (t.type) {
      case 'intrinsic':
        return String(t.name);
      case 'literal':
        return t.value === null ? 'null' : JSON.stringify(t.value);
      case 'reference': {
        const args = t.typeArguments?.length ? `<${t.typeArguments.map((a) => this.render(a, depth)).join(', ')}>` : '';
        return `${t.name}${args}`;
      }
      case 'union': {
        const members = t.types ?? [];
        if (members.length > 8) {
          return `${members
            .slice(0, 4)
            .map((m) => this.render(m, depth))
            .join(' | ')} | … (${members.length} in all)`;
        }
        return members.map((m) => this.render(m, depth)).join(' | ');
      }
      case 'intersection':
        return (t.types ?? []).map((m) => this.render(m, depth)).join(' & ');
      case 'array': {
        const inner = this.render(t.elementType, depth);
        return /[ |&]/.test(inner) ? `(${inner})[]` : `${inner}[]`;
      }
      case 'tuple':
        return `[${(t.elements ?? []).map((e) => this.render(e, depth)).join(', ')}]`;
      case 'typeOperator':
        return `${t.operator} ${this.render(t.targetType, depth)}`;
      case 'indexedAccess':
        return `${this.render(t.objectType, depth)}[${this.render(t.indexType, depth)}]`;
      case 'conditional':
        return `${this.render(t.checkType, depth)} extends ${this.render(t.extendsType, depth)} ? ${this.render(t.trueType, depth)} : ${this.render(t.falseType, depth)}`;
      case 'predicate':
        return `${t.asserts ? 'asserts ' : ''}${t.name}${t.targetType ? ` is ${this.render(t.targetType, depth)}` : ''}`;
      case 'inferred':
        return `infer ${t.name}`;
      case 'reflection':
        return this.reflection(t.declaration, depth);
      default:
        return t.name ?? t.type;
    }
  }

  private reflection(d: TdReflection | undefined, depth: number): string {
    if (!d) return '{}';
    if (d.signatures?.length) return d.signatures.map((s) => this.signature(s, true)).join(' | ');
    if (depth > 1) return '{ … }';
    const members = (d.children ?? []).map(
      (c) => `${c.name}${c.flags?.isOptional ? '?' : ''}: ${this.render(c.type, depth + 1)}`,
    );
    const index = (d.indexSignatures ?? []).map(
      (s) =>
        `[${s.parameters?.[0]?.name ?? 'key'}: ${this.render(s.parameters?.[0]?.type, depth + 1)}]: ${this.render(s.type, depth + 1)}`,
    );
    return `{ ${[...index, ...members].join('; ')} }`;
  }

  signature(s: TdReflection, arrow = false): string {
    const typeParams = s.typeParameters?.length
      ? `<${s.typeParameters.map((p) => p.name + (p.type ? ` extends ${this.render(p.type)}` : '')).join(', ')}>`
      : '';
    const params = (s.parameters ?? [])
      .map((p) => `${p.name}${p.flags?.isOptional || p.defaultValue ? '?' : ''}: ${this.render(p.type)}`)
      .join(', ');
    return arrow
      ? `${typeParams}(${params}) => ${this.render(s.type)}`
      : `${s.name}${typeParams}(${params}): ${this.render(s.type)}`;
  }

  /** Names of own symbols a rendered type mentions, for "See also" links. */
  mentions(rendered: string): string[] {
    const words = new Set(rendered.match(/[A-Za-z_$][\w$]*/g) ?? []);
    return [...words].filter((w) => this.ownNames.has(w));
  }
}

function signatureBlock(r: TypeRenderer, s: TdReflection): string {
  const parts = ['```ts', r.signature(s), '```', '', commentMarkdown(s.comment)];
  const params = s.parameters ?? [];
  if (params.length > 0) {
    parts.push(
      '',
      table(
        ['Parameter', 'Type', 'Description'],
        params.map((p) => [
          `\`${p.name}\`${p.flags?.isOptional ? ' (optional)' : ''}`,
          `\`${r.render(p.type).replace(/\|/g, '\\|')}\``,
          text(p.comment?.summary).replace(/\s+/g, ' ').replace(/\|/g, '\\|'),
        ]),
      ),
    );
  }
  return parts.join('\n');
}

function memberSection(r: TypeRenderer, m: TdReflection): string {
  const heading = `### ${m.flags?.isStatic ? 'static ' : ''}${m.name}`;
  if (m.signatures?.length) return [heading, '', ...m.signatures.map((s) => signatureBlock(r, s))].join('\n');
  if (m.getSignature)
    return [
      heading,
      '',
      '```ts',
      `get ${m.name}(): ${r.render(m.getSignature.type)}`,
      '```',
      '',
      commentMarkdown(m.getSignature.comment),
    ].join('\n');
  return [
    heading,
    '',
    '```ts',
    `${m.flags?.isReadonly ? 'readonly ' : ''}${m.name}${m.flags?.isOptional ? '?' : ''}: ${r.render(m.type)}`,
    '```',
    '',
    commentMarkdown(m.comment),
  ].join('\n');
}

function symbolPage(r: TypeRenderer, sym: TdReflection, position: number): Page {
  const kind = KIND[sym.kind] ?? 'Symbol';
  const comment = sym.comment ?? sym.signatures?.[0]?.comment;
  const body: string[] = [`# ${sym.name}`, '', `*${kind}* exported by \`@hearth/core\`.`, ''];
  if (sym.signatures?.length) {
    body.push(...sym.signatures.map((s) => signatureBlock(r, s)));
  } else if (sym.kind === 2097152 || sym.kind === 32) {
    const decl =
      sym.kind === 32 ? `const ${sym.name}: ${r.render(sym.type)}` : `type ${sym.name} = ${r.render(sym.type)}`;
    body.push('```ts', decl, '```', '', commentMarkdown(sym.comment));
  } else {
    body.push(commentMarkdown(comment));
    if (sym.extendedTypes?.length)
      body.push('', `Extends \`${sym.extendedTypes.map((t) => r.render(t)).join(', ')}\`.`);
  }
  const members = (sym.children ?? []).filter((c) => !c.flags?.isPrivate && !c.name.startsWith('#'));
  if (members.length > 0) {
    body.push('', sym.kind === 256 ? '## Properties' : '## Members', '');
    body.push(
      ...members
        .map((m) => memberSection(r, m))
        .join('\n\n')
        .split('\n'),
    );
  }
  const rendered = body.join('\n');
  const related = r
    .mentions(rendered)
    .filter((n) => n !== sym.name)
    .sort();
  if (related.length > 0) {
    body.push('', '## See also', '', related.map((n) => `[${n}](${sdkId(n)}.md)`).join(', '));
  }
  return {
    file: `sdk/${sdkId(sym.name)}.md`,
    body: [
      frontMatter({
        id: sdkId(sym.name),
        title: sym.name,
        description: summaryLine(comment) || `${kind} ${sym.name} of the Hearth SDK`,
        sidebar_label: sym.name,
        sidebar_position: position,
      }),
      body.join('\n'),
      '',
    ].join('\n'),
  };
}

/** Pages for the `@hearth/core` module of a TypeDoc project (entry points core + fhir-types). */
export function sdkPages(
  project: TdReflection,
  referenceSlugs: Map<string, string>,
): { pages: Page[]; symbols: string[] } {
  const core = project.children?.find((c) => c.name === '@hearth/core');
  const fhirTypes = project.children?.find((c) => c.name === '@hearth/fhir-types');
  if (!core?.children) throw new Error('TypeDoc output has no @hearth/core module');
  const reexported = new Set((fhirTypes?.children ?? []).map((c) => c.name));
  const own = core.children.filter((c) => !reexported.has(c.name)).sort((a, b) => a.name.localeCompare(b.name));
  const renderer = new TypeRenderer(new Map(own.map((s) => [s.id, s.name])), new Set(own.map((s) => s.name)));
  const pages = own.map((sym, i) => symbolPage(renderer, sym, i + 2));

  const fhirNames = core.children
    .filter((c) => reexported.has(c.name))
    .map((c) => c.name)
    .sort();
  const linked = fhirNames.map((n) => {
    const target = referenceSlugs.get(n);
    return target ? `[${n}](${target})` : `\`${n}\``;
  });
  pages.push({
    file: 'sdk/core.fhir-types.md',
    body: [
      frontMatter({
        id: 'core.fhir-types',
        title: 'FHIR types',
        description: 'The TypeScript types of every FHIR R4 and platform type',
        sidebar_position: 1,
      }),
      '# FHIR types',
      '',
      `\`@hearth/core\` re-exports the TypeScript types of every FHIR R4 and platform type from \`@hearth/fhir-types\` (${fhirNames.length} types, generated from the same definitions as the server's). Their elements are documented on the [FHIR reference](../api/fhir/resources/index.md) pages; backbone types are named after their path (\`PatientContact\`).`,
      '',
      linked.join(', '),
      '',
    ].join('\n'),
  });

  const byKind = new Map<string, string[]>();
  for (const sym of own) {
    const k = KIND[sym.kind] ?? 'Symbol';
    byKind.set(k, [
      ...(byKind.get(k) ?? []),
      `- [${sym.name}](${sdkId(sym.name)}.md)${summaryLine(sym.comment ?? sym.signatures?.[0]?.comment) ? ': ' + summaryLine(sym.comment ?? sym.signatures?.[0]?.comment) : ''}`,
    ]);
  }
  pages.push({
    file: 'sdk/index.md',
    body: [
      frontMatter({
        title: 'TypeScript SDK reference',
        description: 'Every symbol @hearth/core exports',
        slug: '/sdk',
      }),
      '# TypeScript SDK reference',
      '',
      `\`@hearth/core\` (\`packages/core\`) is the SDK: \`HearthClient\` for sign-in, FHIR REST, operations, binaries and project administration; FHIR types; OperationOutcome helpers; search request parsing; FHIRPath; display and validation helpers. It runs in browsers and Node 20. These ${own.length} pages are generated from its TSDoc comments (TypeDoc) at every docs build. Start with [HearthClient](core.HearthClient.md).`,
      '',
      ...[...byKind.entries()].flatMap(([k, items]) => [`## ${k === 'Class' ? 'Classes' : k + 's'}`, '', ...items, '']),
      '## FHIR types',
      '',
      'The FHIR R4 and platform types: [FHIR types](core.fhir-types.md).',
      '',
    ].join('\n'),
  });
  return { pages, symbols: own.map((s) => s.name) };
}
