// Test helper: FHIR XML (as in HL7's test suites) to FHIR JSON, using the R4 element definitions for
// cardinality and primitive types (hl7.org/fhir/R4/xml.html, json.html). Enough for test vectors:
// elements, value/url/id attributes, primitive extensions, contained resources and narrative.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Resource } from '@hearth/core';
import { childPathOf, primitiveJsonKind, resolveProperty } from '../resources/patch/element-info.js';

/** HL7 fhir-test-cases r4/patch, in the shared data next to the repository (optional: tests skip without it). */
export const PATCH_SUITE_DIR = resolve(import.meta.dirname, '../../../../../shared/data/fhir-test-cases/patch-r4');

export interface FhirPatchCase {
  name: string;
  input: Resource;
  diff: unknown;
  output?: Resource;
  error?: string;
}

/** The FHIRPath Patch cases of fhir-patch-tests.xml, converted to JSON. */
export function loadFhirPatchCases(file = `${PATCH_SUITE_DIR}/fhir-patch-tests.xml`): FhirPatchCase[] {
  const root = parseXml(readFileSync(file, 'utf8'));
  const child = (el: XmlElement, name: string) => el.children.find((c) => c.name === name);
  return root.children[0].children
    .filter((c) => c.name === 'case')
    .map((c) => {
      const output = child(c, 'output')?.children[0];
      return {
        name: c.attrs.name,
        input: resourceToJson(child(c, 'input')!.children[0]) as Resource,
        diff: resourceToJson(child(c, 'diff')!.children[0]),
        output: output ? (resourceToJson(output) as Resource) : undefined,
        error: child(c, 'error')?.attrs.msg,
      };
    });
}

export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  /** The element's source text, for XHTML narrative (kept as a string in JSON). */
  outer: string;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decode(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, e: string) => {
    if (e[0] === '#') {
      return String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : Number(e.slice(1)));
    }
    return ENTITIES[e] ?? m;
  });
}

/** Parses an XML document into elements (comments, processing instructions and text are skipped). */
export function parseXml(source: string): XmlElement {
  // XML 1.0 section 2.11: line ends are normalised to \n before parsing.
  const xml = source.replace(/\r\n?/g, '\n');
  const root: XmlElement = { name: '#root', attrs: {}, children: [], outer: '' };
  const stack: { el: XmlElement; start: number }[] = [{ el: root, start: 0 }];
  const tag =
    /<!--[\s\S]*?-->|<\?[\s\S]*?\?>|<!\[CDATA\[[\s\S]*?\]\]>|<(\/?)([A-Za-z_][\w.:-]*)((?:\s+[\w.:-]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>/g;
  let m: RegExpExecArray | null;
  while ((m = tag.exec(xml))) {
    const [text, closing, name, attrText, selfClosing] = m;
    if (!name) {
      continue;
    }
    if (closing) {
      const open = stack.pop();
      if (!open || open.el.name !== name) {
        throw new Error(`Mismatched </${name}> at ${m.index}`);
      }
      open.el.outer = xml.slice(open.start, m.index + text.length);
      continue;
    }
    const attrs: Record<string, string> = {};
    for (const a of attrText.matchAll(/([\w.:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) {
      attrs[a[1]] = decode(a[2] ?? a[3] ?? '');
    }
    const el: XmlElement = { name, attrs, children: [], outer: text };
    stack[stack.length - 1].el.children.push(el);
    if (!selfClosing) {
      stack.push({ el, start: m.index });
    }
  }
  return root;
}

/** Converts a FHIR resource element (<Patient xmlns="http://hl7.org/fhir">) to JSON. */
export function resourceToJson(el: XmlElement): Record<string, unknown> {
  return { resourceType: el.name, ...elementToJson(el, el.name) };
}

function elementToJson(el: XmlElement, typePath: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(el.attrs)) {
    if (name === 'id' || name === 'url') {
      out[name] = value;
    }
  }
  for (const child of el.children) {
    const name = child.name;
    if (name === 'div') {
      // Quotes need no escaping in XHTML text; JSON serialisers write them plainly.
      out.div = child.outer.replace(/&quot;/g, '"').replace(/&apos;/g, "'");
      continue;
    }
    const prop = resolveProperty(typePath, name);
    if (!prop) {
      throw new Error(`Unknown element ${typePath}.${name}`);
    }
    const type = prop.type ?? prop.info.types[0];
    const set = (key: string, value: unknown) => {
      if (prop.info.isArray) {
        const list = (out[key] as unknown[] | undefined) ?? [];
        list.push(value);
        out[key] = list;
      } else {
        out[key] = value;
      }
    };
    const kind = prop.info.contentReference ? undefined : primitiveJsonKind(type);
    if (kind) {
      const raw = child.attrs.value;
      const value =
        raw === undefined ? null : kind === 'number' ? Number(raw) : kind === 'boolean' ? raw === 'true' : raw;
      const ext = elementToJson({ ...child, attrs: { id: child.attrs.id } }, 'Element');
      if (child.attrs.id === undefined) {
        delete ext.id;
      }
      set(name, value);
      if (Object.keys(ext).length > 0 || prop.info.isArray) {
        set(`_${name}`, Object.keys(ext).length > 0 ? ext : null);
      }
    } else if (type === 'Resource' || /^[A-Z]/.test(child.children[0]?.name ?? '')) {
      set(name, resourceToJson(child.children[0]));
    } else {
      set(name, elementToJson(child, childPathOf(typePath, prop.name.replace('[x]', ''), prop.info, type)));
    }
  }
  // Lists of primitives without any extension need no _name array.
  for (const key of Object.keys(out)) {
    const list = out[key];
    if (key.startsWith('_') && Array.isArray(list) && list.every((x) => x === null)) {
      delete out[key];
    }
  }
  return out;
}
