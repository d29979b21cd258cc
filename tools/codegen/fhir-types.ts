/**
 * Generates packages/fhir-types/src: a TypeScript type for every FHIR R4 resource, data type and
 * backbone element, plus Hearth's platform types, from the same type schema the server validates
 * with (@hearth/definitions), and TSDoc comments from the StructureDefinitions' text.
 *
 *   npm run generate -w @hearth/fhir-types      (runs generate-fhir-types.ts)
 *
 * Shapes follow the FHIR JSON representation (hl7.org/fhir/R4/json.html): choice elements
 * `value[x]` become one property per type (`valueString`, `valueQuantity`, ...), required codes
 * become unions of their codes, References carry their allowed target types.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  buildSchemaFromFiles,
  r4DefinitionsDir,
  type ElementSchema,
  type FhirSchema,
  type TypeSchema,
} from '@hearth/definitions';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const outDir = join(root, 'packages', 'fhir-types', 'src');
const platformDir = join(root, 'packages', 'definitions', 'src', 'platform');

/** JSON number primitives; every other primitive is a string in JSON (hl7.org/fhir/R4/json.html#primitive). */
const NUMBER_PRIMITIVES = new Set(['integer', 'decimal', 'positiveInt', 'unsignedInt', 'integer64']);

/** Generic types: a Bundle of T, a Reference to T. */
const GENERIC_PARAM: Record<string, string> = {
  Bundle: 'T = Resource',
  'Bundle.entry': 'T = Resource',
  Reference: 'T = Resource',
};

interface ElementText {
  short?: string;
  definition?: string;
}

interface StructureDefinitionJson {
  resourceType: string;
  name?: string;
  description?: string;
  snapshot?: { element: (ElementText & { path: string })[] };
  differential?: { element: (ElementText & { path: string })[] };
}

/** Element path → its short and definition text, from HL7's and the platform's definitions. */
function loadDocs(): Map<string, ElementText> {
  const docs = new Map<string, ElementText>();
  const add = (sd: StructureDefinitionJson) => {
    if (sd.resourceType !== 'StructureDefinition') {
      return;
    }
    for (const el of sd.snapshot?.element ?? sd.differential?.element ?? []) {
      if (!docs.has(el.path)) {
        docs.set(el.path, { short: el.short, definition: el.definition });
      }
    }
  };
  for (const file of readdirSync(platformDir).filter((f) => f.endsWith('.json'))) {
    const json = JSON.parse(readFileSync(join(platformDir, file), 'utf8')) as StructureDefinitionJson & {
      element?: (ElementText & { path: string })[];
    };
    if (json.resourceType === 'StructureDefinition') {
      add(json);
    } else if (Array.isArray(json.element)) {
      for (const el of json.element) {
        docs.set(el.path, { short: el.short, definition: el.definition });
      }
    }
  }
  for (const file of ['profiles-types.json', 'profiles-resources.json']) {
    const bundle = JSON.parse(readFileSync(join(r4DefinitionsDir(), file), 'utf8')) as {
      entry: { resource: StructureDefinitionJson }[];
    };
    for (const entry of bundle.entry) {
      add(entry.resource);
    }
  }
  return docs;
}

/** 'Patient.contact.name' → 'PatientContactName'. */
export function typeNameOf(schemaName: string): string {
  return schemaName
    .split('.')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** Text made safe for a TSDoc block: no comment terminators, no accidental tags. */
function docText(text: string): string {
  return (
    text
      .replace(/\r\n?/g, '\n')
      // The definitions link to spec pages relatively ('codesystem.html'); point them at the R4 spec.
      .replace(/\]\((?!https?:|#|mailto:)([^)\s]+)\)/g, '](https://hl7.org/fhir/R4/$1)')
      .replace(/\*\//g, '*\\/')
      .replace(/@/g, '\\@')
      .replace(/[{}]/g, (c) => `\\${c}`)
      .trim()
  );
}

function docComment(text: string | undefined, indent: string): string {
  if (!text) {
    return '';
  }
  const lines = docText(text).split('\n');
  if (lines.length === 1) {
    return `${indent}/** ${lines[0]} */\n`;
  }
  return `${indent}/**\n${lines.map((l) => `${indent} *${l ? ` ${l}` : ''}`).join('\n')}\n${indent} */\n`;
}

function quoteKey(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : `'${name}'`;
}

function quoteLiteral(code: string): string {
  return `'${code.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

class Generator {
  private readonly resources: string[];
  /** Types each file refers to, so that it can import them. */
  private used = new Set<string>();

  constructor(
    private readonly schema: FhirSchema,
    private readonly docs: Map<string, ElementText>,
  ) {
    this.resources = Object.values(schema.types)
      .filter((t) => t.kind === 'resource' && !t.abstract)
      .map((t) => t.name)
      .sort();
  }

  /** The top-level (non-backbone) types that get a file: resources and complex data types. */
  fileTypes(): TypeSchema[] {
    return (
      Object.values(this.schema.types)
        // Abstract resources (Resource, DomainResource) become the union type instead; the
        // abstract data types (Element, BackboneElement) are kept as the base shapes they are.
        .filter((t) => (t.kind === 'resource' && !t.abstract) || t.kind === 'complex-type')
        .filter((t) => !t.name.includes('.'))
        .sort((a, b) => a.name.localeCompare(b.name))
    );
  }

  resourceNames(): string[] {
    return this.resources;
  }

  private isKnownType(name: string): boolean {
    const t = this.schema.types[name];
    return t !== undefined && t.kind !== 'primitive-type';
  }

  /** The TypeScript type of one element type code. */
  private tsType(code: string, el: ElementSchema, targetProfile: string[] | undefined, owner: string): string {
    const t = this.schema.types[code];
    if (!t) {
      // FHIRPath system types appear on a few elements (Element.id, Extension.url).
      return code.toLowerCase().endsWith('boolean') ? 'boolean' : 'string';
    }
    if (t.kind === 'primitive-type') {
      if (code === 'boolean') {
        return 'boolean';
      }
      if (NUMBER_PRIMITIVES.has(code)) {
        return 'number';
      }
      if (code === 'code' && el.binding?.strength === 'required') {
        const codes = this.schema.valueSets[el.binding.valueSet];
        if (codes && codes.length > 0) {
          const unique = [...new Set(codes.map((c) => c.slice(c.indexOf('|') + 1)))];
          return unique.map(quoteLiteral).join(' | ');
        }
      }
      return 'string';
    }
    if (code === 'Resource' || code === 'DomainResource') {
      if (owner === 'Bundle.entry' && el.path === 'Bundle.entry.resource') {
        return 'T';
      }
      this.used.add('Resource');
      return 'Resource';
    }
    const name = typeNameOf(code);
    this.used.add(name);
    if (owner === 'Bundle' && code === 'Bundle.entry') {
      return 'BundleEntry<T>';
    }
    if (code === 'Reference' && targetProfile?.length) {
      const targets = [
        ...new Set(targetProfile.map((p) => p.slice(p.lastIndexOf('/') + 1)).filter((n) => this.isKnownType(n))),
      ];
      if (targets.length > 0 && !targets.includes('Resource')) {
        targets.forEach((n) => this.used.add(n));
        return `Reference<${targets.join(' | ')}>`;
      }
    }
    return name;
  }

  private property(key: string, el: ElementSchema, owner: string, indent: string): string {
    const text = this.docs.get(el.path);
    const doc = docComment(text?.definition ?? text?.short, indent);
    const choice = key.endsWith('[x]');
    let out = '';
    const types = el.type.length > 0 ? el.type : [{ code: 'Element' }];
    for (const type of types) {
      const base = this.tsType(type.code, el, type.targetProfile, owner);
      const name = choice ? key.slice(0, -3) + capitalize(type.code) : key;
      const needsParens = base.includes('|') || base.includes('<');
      const tsType = el.isArray ? (needsParens && base.includes('|') ? `(${base})[]` : `${base}[]`) : base;
      const optional = choice || el.min < 1 ? '?' : '';
      out += `${doc}${indent}${quoteKey(name)}${optional}: ${tsType};\n`;
    }
    return out;
  }

  private typeBody(t: TypeSchema, indent: string): string {
    let body = '';
    if (t.kind === 'resource') {
      body += `${indent}/** This is a ${t.name} resource */\n${indent}readonly resourceType: '${t.name}';\n`;
    }
    for (const [key, el] of Object.entries(t.elements)) {
      if (key === 'resourceType') {
        continue;
      }
      body += this.property(key, el, t.name, indent);
    }
    return body;
  }

  /** Every backbone type nested under a top-level type, in definition order. */
  private backbonesOf(name: string): TypeSchema[] {
    return Object.values(this.schema.types).filter((t) => t.kind === 'backbone' && t.name.startsWith(`${name}.`));
  }

  /** One file: the type and its backbone types, with imports of what they use. */
  file(t: TypeSchema): string {
    this.used = new Set();
    const parts: string[] = [];
    const own = new Set<string>();
    for (const type of [t, ...this.backbonesOf(t.name)]) {
      const name = typeNameOf(type.name);
      own.add(name);
      const generic = GENERIC_PARAM[type.name] ? `<${GENERIC_PARAM[type.name]}>` : '';
      if (generic && type.name !== 'Bundle') {
        this.used.add('Resource');
      }
      const text = this.docs.get(type.name);
      const platform = type.platform ? '\n\nA Hearth platform type.' : '';
      const doc = docComment(`${text?.definition ?? text?.short ?? type.name}${platform}`, '');
      const body = this.typeBody(type, '  ');
      // Resources are object type aliases, not interfaces: like plain JSON, they are then
      // assignable to index-signature shapes such as `Record<string, unknown>` or core's
      // generic `Resource` (interfaces are not, see TypeScript issue #15300). Bundle stays an
      // interface: its type parameter defaults to the Resource union, which includes Bundle, and
      // only an interface may refer to itself that way.
      const lint =
        type.name === 'Reference'
          ? '// eslint-disable-next-line @typescript-eslint/no-unused-vars -- T names the allowed targets (see readReference)\n'
          : '';
      parts.push(
        type.kind === 'resource' && type.name !== 'Bundle'
          ? `${doc}export type ${name}${generic} = {\n${body}};\n`
          : `${doc}${lint}export interface ${name}${generic} {\n${body}}\n`,
      );
    }
    // Several types live in one file; import each from its file, merging imports per file.
    const byFile = new Map<string, string[]>();
    for (const n of [...this.used].filter((x) => !own.has(x)).sort()) {
      const f = this.fileOf(n);
      byFile.set(f, [...(byFile.get(f) ?? []), n]);
    }
    const importLines = [...byFile.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([f, names]) => `import type { ${names.join(', ')} } from './${f}.js';`);
    return `${HEADER}\n${importLines.join('\n')}${importLines.length ? '\n\n' : ''}${parts.join('\n')}`;
  }

  /** The file a generated type name is declared in. */
  fileOf(typeName: string): string {
    if (!this.fileByTypeName) {
      this.fileByTypeName = new Map([['Resource', 'Resource']]);
      for (const t of this.fileTypes()) {
        for (const type of [t, ...this.backbonesOf(t.name)]) {
          this.fileByTypeName.set(typeNameOf(type.name), t.name);
        }
      }
    }
    const file = this.fileByTypeName.get(typeName);
    if (!file) {
      throw new Error(`No file declares ${typeName}`);
    }
    return file;
  }
  private fileByTypeName: Map<string, string> | undefined;

  /** Resource.ts: the union of every resource and its type-level helpers. */
  resourceFile(): string {
    const imports = this.resources.map((n) => `import type { ${n} } from './${n}.js';`).join('\n');
    const map = this.resources.map((n) => `  ${n}: ${n};`).join('\n');
    const union = this.resources.map((n) => `  | ${n}`).join('\n');
    return `${HEADER}
${imports}

/** Every resource type by its name: the FHIR R4 resources and Hearth's platform resources. */
export interface ResourceTypeMap {
${map}
}

/**
 * Any resource: the union of every resource type. Narrow it by \`resourceType\`.
 * (Spelled out rather than derived from ResourceTypeMap: Bundle's type parameter defaults to it.)
 */
export type Resource =
${union};

/** The name of a resource type, such as \`'Patient'\`. */
export type ResourceType = Resource['resourceType'];

/** The resource type named K: \`ExtractResource<'Patient'>\` is \`Patient\`. */
export type ExtractResource<K extends ResourceType> = ResourceTypeMap[K];
`;
  }

  indexFile(files: string[]): string {
    const doc = [
      '/**',
      ' * TypeScript types for every FHIR R4 resource and data type, and the Hearth platform types.',
      ' * @module @hearth/fhir-types',
      ' */',
    ].join('\n');
    return `${HEADER}\n${doc}\n${files.map((f) => `export type * from './${f}.js';`).join('\n')}\n`;
  }

  /** Checks that no two schema types map to the same TypeScript name. */
  checkNames(): void {
    const seen = new Map<string, string>();
    for (const t of Object.values(this.schema.types)) {
      if (t.kind === 'primitive-type' || t.kind === 'logical') {
        continue;
      }
      const n = typeNameOf(t.name);
      const other = seen.get(n);
      if (other && other !== t.name) {
        throw new Error(`Type name collision: ${other} and ${t.name} both map to ${n}`);
      }
      seen.set(n, t.name);
    }
  }
}

const HEADER = `// Generated by tools/codegen/fhir-types.ts from the FHIR R4 and Hearth platform definitions.
// Do not edit by hand: run \`npm run generate -w @hearth/fhir-types\`.
`;

/**
 * Writes the generated sources into `dir` (emptied first), formatted with the repository's
 * Prettier settings. Returns the number of files and of resource types.
 */
export async function generateFhirTypes(dir: string = outDir): Promise<{ files: number; resourceTypes: number }> {
  const schema = buildSchemaFromFiles();
  const generator = new Generator(schema, loadDocs());
  generator.checkNames();
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const files: string[] = [];
  for (const t of generator.fileTypes()) {
    writeFileSync(join(dir, `${t.name}.ts`), generator.file(t));
    files.push(t.name);
  }
  writeFileSync(join(dir, 'Resource.ts'), generator.resourceFile());
  files.push('Resource');
  files.sort();
  writeFileSync(join(dir, 'index.ts'), generator.indexFile(files));
  const prettier = join(root, 'node_modules', '.bin', 'prettier');
  // Asynchronous: a test runner's worker must keep answering while prettier formats ~200 files.
  const { stderr } = await promisify(execFile)(
    prettier,
    ['--write', '--log-level', 'warn', '--config', join(root, '.prettierrc.json'), dir],
    { maxBuffer: 16 * 1024 * 1024 },
  );
  if (stderr) process.stderr.write(stderr);
  return { files: files.length + 1, resourceTypes: generator.resourceNames().length };
}
