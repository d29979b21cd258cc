/**
 * The FHIR reference pages, rebuilt from the definitions at every docs build: one page per
 * resource type (R4 and platform) under api/fhir/resources/, one per data type under
 * api/fhir/datatypes/, with elements (cardinality, type, binding, description), search
 * parameters (type, expression) and the operations the server registers for the type.
 */
import {
  getR4ResourceTypes,
  getSchema,
  PLATFORM_RESOURCE_TYPES,
  PLATFORM_STRUCTURE_DEFINITIONS,
  readR4File,
  type ElementSchema,
  type TypeSchema,
} from '@hearth/definitions';
import { baseSearchParameters } from '../../../server/src/search/registry/registry.js';
import type { OperationCatalogEntry } from '../../../server/src/operations/docs.js';
import { cell, firstSentence, frontMatter, table, unlinkRelative } from './markdown.js';

export interface Page {
  /** Path under the content folder, with `.md`. */
  file: string;
  body: string;
}

interface SdElement {
  path: string;
  short?: string;
  definition?: string;
}
interface StructureDefinition {
  name: string;
  type?: string;
  description?: string;
  snapshot?: { element: SdElement[] };
  differential?: { element: SdElement[] };
}

/** Element descriptions by path, and each type's description, from the StructureDefinitions. */
function descriptions(): { elements: Map<string, string>; types: Map<string, string> } {
  const elements = new Map<string, string>();
  const types = new Map<string, string>();
  const bundles = ['profiles-resources.json', 'profiles-types.json'].map(
    (f) => readR4File<{ entry: { resource: StructureDefinition & { resourceType: string } }[] }>(f).entry,
  );
  const sds: StructureDefinition[] = bundles
    .flat()
    .map((e) => e.resource)
    .filter((r) => r.resourceType === 'StructureDefinition');
  for (const sd of [...sds, ...(PLATFORM_STRUCTURE_DEFINITIONS as unknown as StructureDefinition[])]) {
    const name = sd.type ?? sd.name;
    if (sd.description && !types.has(name)) types.set(name, unlinkRelative(sd.description));
    const list = sd.snapshot?.element ?? sd.differential?.element ?? [];
    for (const el of list) {
      const text = el.short ?? firstSentence(el.definition);
      if (text && !elements.has(el.path)) elements.set(el.path, text);
    }
  }
  return { elements, types };
}

export function slug(typeName: string): string {
  return typeName.toLowerCase();
}

interface LinkTargets {
  resources: Set<string>;
  datatypes: Set<string>;
}

/** A type name as a link to its page, relative to a page in api/fhir/<folder>/. */
function typeLink(code: string, targets: LinkTargets): string {
  if (targets.resources.has(code)) return `[${code}](../resources/${slug(code)}.md)`;
  if (targets.datatypes.has(code)) return `[${code}](../datatypes/${slug(code)}.md)`;
  return code;
}

function elementType(el: ElementSchema, targets: LinkTargets): string {
  if (el.contentReference) return `see ${el.contentReference.replace(/^#/, '')}`;
  return el.type
    .map((t) => {
      const base = t.code.includes('.') ? 'BackboneElement' : typeLink(t.code, targets);
      const profiles = (t.targetProfile ?? []).map((p) => p.split('/').pop() as string);
      return profiles.length > 0 ? `${base}(${profiles.map((p) => typeLink(p, targets)).join(' \\| ')})` : base;
    })
    .join(' \\| ');
}

function bindingText(el: ElementSchema): string {
  if (!el.binding) return '';
  return `${el.binding.strength}: ${el.binding.valueSet}`;
}

/** Rows for a type's elements, the nested (backbone) elements under their parent, depth first. */
function elementRows(
  type: TypeSchema,
  types: Record<string, TypeSchema>,
  described: Map<string, string>,
  targets: LinkTargets,
): string[][] {
  const rows: string[][] = [];
  const visit = (t: TypeSchema, depth: number): void => {
    for (const el of Object.values(t.elements)) {
      const name = el.path.split('.').slice(1).join('.');
      if (
        name === '' ||
        ['id', 'meta', 'implicitRules', 'language', 'text', 'contained', 'extension', 'modifierExtension'].includes(
          name,
        )
      ) {
        if (depth === 0 && type.kind === 'resource') continue; // inherited: listed once below the table
      }
      const flags = [el.isSummary ? 'Σ' : '', el.isModifier ? '?!' : ''].join('');
      rows.push([
        `\`${name}\`${flags ? ` ${flags}` : ''}`,
        `${el.min}..${el.max}`,
        elementType(el, targets),
        cell(bindingText(el)),
        cell(described.get(el.path)),
      ]);
      const nested = el.type.find((ty) => ty.code.includes('.') && types[ty.code]);
      if (nested && !el.contentReference) visit(types[nested.code], depth + 1);
    }
  };
  visit(type, 0);
  return rows;
}

interface SearchParam {
  code?: string;
  type?: string;
  base?: string[];
  expression?: string;
  description?: string;
}

/** The parameters that apply to a type: its own, then those of every resource. */
function searchParamsFor(typeName: string, all: SearchParam[]): { own: SearchParam[]; common: SearchParam[] } {
  const own = all.filter((p) => p.base?.includes(typeName));
  const common = all.filter((p) => p.base?.some((b) => b === 'Resource' || b === 'DomainResource'));
  return { own: own.sort((a, b) => String(a.code).localeCompare(String(b.code))), common };
}

/** The part of a shared expression (`Patient.name | Person.name`) that concerns this type. */
function expressionFor(typeName: string, expression: string | undefined): string {
  if (!expression) return '';
  const parts = expression.split(/\s+\|\s+/);
  const mine = parts.filter((p) => new RegExp(`^\\(?${typeName}[.)]`).test(p));
  return (mine.length > 0 ? mine : parts).join(' | ');
}

function operationsFor(typeName: string, ops: OperationCatalogEntry[]): OperationCatalogEntry[] {
  return ops.filter((op) =>
    op.resourceTypes ? op.resourceTypes.includes(typeName) : op.levels.some((l) => l !== 'system'),
  );
}

function operationRows(typeName: string, ops: OperationCatalogEntry[]): string[][] {
  return ops.map((op) => {
    const paths = op.levels
      .filter((l) => l !== 'system')
      .map((l) => (l === 'type' ? `\`${typeName}/$${op.name}\`` : `\`${typeName}/{id}/$${op.name}\``));
    return [`[\`$${op.name}\`](../../../operations.md)`, paths.join(', '), op.methods.join(', '), cell(op.description)];
  });
}

const INHERITED_NOTE =
  "Every resource also has `id`, `meta` (with Hearth's `meta.project`, `meta.author`, `meta.compartment`), " +
  '`implicitRules` and `language`; domain resources add `text`, `contained`, `extension` and `modifierExtension`. ' +
  'Σ: in the summary (`_summary=true`); ?!: a modifier element.';

function resourcePage(
  type: TypeSchema,
  ctx: {
    types: Record<string, TypeSchema>;
    described: ReturnType<typeof descriptions>;
    targets: LinkTargets;
    params: SearchParam[];
    ops: OperationCatalogEntry[];
    position: number;
  },
): Page {
  const name = type.name;
  const platform = type.platform === true;
  const description = ctx.described.types.get(name) ?? '';
  const { own, common } = searchParamsFor(name, ctx.params);
  const ops = operationsFor(name, ctx.ops);
  const lines = [
    frontMatter({
      id: slug(name),
      title: name,
      description: firstSentence(description) || `The ${name} resource in Hearth`,
      sidebar_label: name,
      sidebar_position: ctx.position,
    }),
    `# ${name}`,
    '',
    platform
      ? `A Hearth platform resource (defined in \`packages/definitions/src/platform/${name}.json\`, canonical \`${type.url ?? ''}\`).`
      : `A FHIR R4 resource ([specification](https://hl7.org/fhir/R4/${slug(name)}.html)).`,
    '',
    description,
    '',
    `REST: \`/fhir/R4/${name}\` (create, search), \`/fhir/R4/${name}/{id}\` (read, update, patch, delete), \`/fhir/R4/${name}/{id}/_history\`.`,
    '',
    '## Elements',
    '',
    INHERITED_NOTE,
    '',
    table(
      ['Element', 'Card.', 'Type', 'Binding', 'Description'],
      elementRows(type, ctx.types, ctx.described.elements, ctx.targets),
    ),
    '',
    '## Search parameters',
    '',
    own.length === 0
      ? `${name} has no search parameters of its own; the common ones below apply.`
      : table(
          ['Code', 'Type', 'Expression', 'Description'],
          own.map((p) => [
            `\`${p.code}\``,
            String(p.type),
            cell(expressionFor(name, p.expression)),
            cell(firstSentence(p.description)),
          ]),
        ),
    '',
    `Common to every resource: ${common.map((p) => `\`${p.code}\``).join(', ')}. How to search: [basic search](../../../search/basic.md).`,
    '',
    '## Operations',
    '',
    ops.length === 0
      ? `No operation is registered for ${name} beyond those of every server ([operations](../../../operations.md)).`
      : table(['Operation', 'Paths', 'Methods', 'Description'], operationRows(name, ops)),
    '',
  ];
  return { file: `api/fhir/resources/${slug(name)}.md`, body: lines.join('\n') };
}

function datatypePage(
  type: TypeSchema,
  ctx: {
    types: Record<string, TypeSchema>;
    described: ReturnType<typeof descriptions>;
    targets: LinkTargets;
    position: number;
  },
): Page {
  const name = type.name;
  const description = ctx.described.types.get(name) ?? '';
  const rows = elementRows(type, ctx.types, ctx.described.elements, ctx.targets);
  const lines = [
    frontMatter({
      id: slug(name),
      title: name,
      description: firstSentence(description) || `The ${name} data type`,
      sidebar_label: name,
      sidebar_position: ctx.position,
    }),
    `# ${name}`,
    '',
    type.kind === 'primitive-type'
      ? `A FHIR R4 primitive type ([specification](https://hl7.org/fhir/R4/datatypes.html#${name})). Hearth checks its format when it validates a resource (\`validationRegexes\` in the [SDK](../../../sdk/core.validationRegexes.md)).`
      : type.platform
        ? 'A Hearth platform data type.'
        : `A FHIR R4 data type ([specification](https://hl7.org/fhir/R4/datatypes.html#${name})).`,
    '',
    description,
    '',
    ...(rows.length > 0
      ? ['## Elements', '', table(['Element', 'Card.', 'Type', 'Binding', 'Description'], rows), '']
      : []),
  ];
  return { file: `api/fhir/datatypes/${slug(name)}.md`, body: lines.join('\n') };
}

/** Every reference page, plus the index pages that list them. */
export function referencePages(ops: OperationCatalogEntry[]): {
  pages: Page[];
  resources: string[];
  datatypes: string[];
  platform: string[];
} {
  const schema = getSchema();
  const types = schema.types;
  const r4 = getR4ResourceTypes().filter((t) => types[t]);
  // IdentityProvider is a data type in the schema (see PLATFORM_RESOURCE_TYPES); it gets a data type page.
  const platform = PLATFORM_RESOURCE_TYPES.filter((t) => types[t]?.kind === 'resource');
  const resources = [...r4, ...platform].sort();
  const datatypes = Object.values(types)
    .filter((t) => (t.kind === 'complex-type' || t.kind === 'primitive-type') && !t.name.includes('.'))
    .map((t) => t.name)
    .sort((a, b) => a.localeCompare(b));
  const targets: LinkTargets = { resources: new Set(resources), datatypes: new Set(datatypes) };
  const described = descriptions();
  const params = baseSearchParameters() as SearchParam[];
  const pages: Page[] = [];
  resources.forEach((name, i) =>
    pages.push(resourcePage(types[name], { types, described, targets, params, ops, position: i + 1 })),
  );
  datatypes.forEach((name, i) => pages.push(datatypePage(types[name], { types, described, targets, position: i + 1 })));

  const list = (names: string[], folder: string) =>
    names.map((n) => `- [${n}](${folder}/${slug(n)}.md): ${cell(firstSentence(described.types.get(n)))}`).join('\n');
  pages.push({
    file: 'api/fhir/resources/index.md',
    body: [
      frontMatter({
        title: 'FHIR resources',
        description: 'Every resource type Hearth stores',
        slug: '/api/fhir/resources',
      }),
      '# FHIR resources',
      '',
      `Hearth stores every concrete FHIR R4 resource type (${r4.length}) and its ${platform.length} platform types, each in a table of its own. Every page below is generated from the definitions (\`@hearth/definitions\`), the search parameters the server loads and its operation registry at each docs build.`,
      '',
      '## Platform resources',
      '',
      list(platform, '.'),
      '',
      '## FHIR R4 resources',
      '',
      list(r4, '.'),
      '',
    ].join('\n'),
  });
  pages.push({
    file: 'api/fhir/datatypes/index.md',
    body: [
      frontMatter({
        title: 'FHIR data types',
        description: 'The data types resources are built from',
        slug: '/api/fhir/datatypes',
      }),
      '# FHIR data types',
      '',
      'The primitive and complex data types of FHIR R4 and of the platform, generated from the definitions.',
      '',
      list(datatypes, '.'),
      '',
    ].join('\n'),
  });
  pages.push({
    file: 'api/fhir/platform.md',
    body: [
      frontMatter({
        title: 'Platform resources',
        description: "Hearth's own resource types: projects, users, bots, clients",
        slug: '/api/fhir/platform',
      }),
      '# Platform resources',
      '',
      'Besides FHIR R4, Hearth stores its own resource types: the things a platform needs that FHIR does not define (projects, memberships, client applications, bots, access policies, sign-in records). They are served by the same FHIR API (`/fhir/R4/Project`, ...), searched the same way, validated against their StructureDefinitions (`packages/definitions/src/platform/`), and their canonical URLs start with `https://hearth.dev/fhir/`. Who may read or write them is described under [access](../../access.md).',
      '',
      list(platform, 'resources'),
      '',
      '`IdentityProvider` is a data type embedded in ClientApplication and DomainConfiguration: [IdentityProvider](datatypes/identityprovider.md).',
      '',
    ].join('\n'),
  });
  return { pages, resources, datatypes, platform: [...platform] };
}
