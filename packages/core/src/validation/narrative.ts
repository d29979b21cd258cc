/**
 * The narrative's XHTML (hl7.org/fhir/R4/narrative.html#xhtml; txt-1 and txt-2, whose
 * `htmlChecks()` the fhirpath package lacks): well-formed XML, a root <div> in the XHTML
 * namespace, only the basic HTML formatting elements and their attributes, only XML's own
 * entities, no scripts, event attributes or javascript: links, and some text or an image.
 * A stored narrative is shown by browsers, so this is also a security rule: anything outside the
 * subset is refused, not cleaned.
 */
import { SaxesParser, type SaxesTagNS } from 'saxes';
import type { OperationOutcomeIssue } from '../fhir-types.js';
import { createIssue } from '../outcome.js';

const XHTML_NS = 'http://www.w3.org/1999/xhtml';
const XML_NS = 'http://www.w3.org/XML/1998/namespace';

/** The elements of chapters 7-11 and 15 of HTML 4 that a narrative may use (as the reference validator lists them). */
const ELEMENTS = new Set([
  'p', 'br', 'div', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'a', 'span', 'b', 'em', 'i', 'strong', 'small', 'big',
  'tt', 'dfn', 'q', 'var', 'abbr', 'acronym', 'cite', 'blockquote', 'hr', 'address', 'bdo', 'kbd', 'sub', 'sup',
  'ul', 'ol', 'li', 'dl', 'dt', 'dd', 'pre', 'table', 'caption', 'colgroup', 'col', 'thead', 'tr', 'tfoot',
  'tbody', 'th', 'td', 'code', 'samp', 'img', 'map', 'area', 'ins', 'del', 's', 'u', 'strike', 'center', 'font',
]); // prettier-ignore

/** Attributes any element may carry. */
const COMMON_ATTRIBUTES = new Set([
  'title', 'style', 'class', 'id', 'lang', 'dir', 'accesskey', 'tabindex',
  // tables (chapter 11)
  'span', 'width', 'align', 'valign', 'char', 'charoff', 'abbr', 'axis', 'headers', 'scope', 'rowspan', 'colspan',
]); // prettier-ignore

/** Attributes of one element only. */
const ELEMENT_ATTRIBUTES: Record<string, Set<string>> = {
  a: new Set(['href', 'name', 'type', 'hreflang', 'rel', 'rev', 'shape', 'coords', 'charset']),
  img: new Set(['src', 'alt', 'border', 'height', 'usemap', 'longdesc', 'ismap', 'hspace', 'vspace']),
  area: new Set(['shape', 'coords', 'href', 'nohref', 'alt']),
  map: new Set(['name']),
  blockquote: new Set(['cite']),
  q: new Set(['cite']),
  ins: new Set(['cite', 'datetime']),
  del: new Set(['cite', 'datetime']),
  table: new Set(['summary', 'border', 'frame', 'rules', 'cellspacing', 'cellpadding', 'bgcolor']),
  td: new Set(['nowrap', 'bgcolor', 'height']),
  th: new Set(['nowrap', 'bgcolor', 'height']),
  tr: new Set(['bgcolor']),
  ol: new Set(['type', 'start', 'compact']),
  ul: new Set(['type', 'compact']),
  li: new Set(['type', 'value']),
  pre: new Set(['space']),
  font: new Set(['size', 'color', 'face']),
  hr: new Set(['size', 'noshade']),
  br: new Set(['clear']),
};

/** URL schemes that run code or fetch content when a browser follows or loads them. */
const UNSAFE_URL = /^\s*(?:javascript|vbscript|livescript|data(?!:\s*image\/(?:png|gif|jpeg|webp)[;,]))\s*:/i;
/** CSS that runs code (old IE expressions and behaviours, Firefox bindings) or imports style sheets. */
const UNSAFE_STYLE = /expression\s*\(|javascript\s*:|vbscript\s*:|behavior\s*:|-moz-binding|@import/i;

class NarrativeProblem extends Error {}

/**
 * The internal hyperlinks (`href="#x"`) of every narrative of one validated instance and the
 * anchors they may point to: `id` and `<a name>` in any of its narratives, and the ids of its
 * resources (contained ones, a Bundle's entries). Collected while walking, judged at the end, since
 * a link may point to an anchor of a narrative met later.
 */
export class NarrativeLinks {
  private readonly anchors = new Set<string>();
  private readonly links: { fragment: string; path: string }[] = [];

  addAnchor(name: string): void {
    this.anchors.add(name);
  }

  addLink(fragment: string, path: string): void {
    this.links.push({ fragment, path });
  }

  /**
   * A link to no anchor is a warning, not an error: a reader following it lands nowhere, but the
   * R4 specification's own v3 CodeSystems and ValueSets (ActCode, RoleCode, ...) carry such links.
   */
  check(issues: OperationOutcomeIssue[]): void {
    for (const { fragment, path } of this.links) {
      if (!this.anchors.has(fragment)) {
        issues.push(
          createIssue(
            'value',
            `The narrative's hyperlink '#${fragment}' points to no anchor or resource id`,
            path,
            'warning',
          ),
        );
      }
    }
  }
}

/** Checks a Narrative's div; the issues name `path` (the div element). */
export function checkNarrativeXhtml(
  div: string,
  path: string,
  issues: OperationOutcomeIssue[],
  links?: NarrativeLinks,
): void {
  const problems: string[] = [];
  let depth = 0;
  let content = false;
  const parser = new SaxesParser({ xmlns: true, position: false });
  parser.on('doctype', () => problems.push('a DOCTYPE is not allowed'));
  parser.on('processinginstruction', () => problems.push('processing instructions are not allowed'));
  parser.on('text', (text) => {
    if (text.trim() !== '') {
      content = true;
    }
  });
  parser.on('cdata', (text) => {
    if (text.trim() !== '') {
      content = true;
    }
  });
  parser.on('opentag', (tag) => {
    if (depth === 0 && (tag.local !== 'div' || tag.uri !== XHTML_NS)) {
      problems.push('the narrative is a <div> in the XHTML namespace (http://www.w3.org/1999/xhtml)');
    }
    depth++;
    checkElement(tag, problems);
    if (links) {
      collectLinks(tag, path, links);
    }
    if (tag.local === 'img') {
      content = true;
    }
  });
  parser.on('closetag', () => {
    depth--;
  });
  parser.on('error', (err) => {
    throw new NarrativeProblem(err.message);
  });
  try {
    parser.write(div).close();
  } catch (err) {
    problems.push(`it is not well-formed XML: ${(err as Error).message}`);
  }
  for (const problem of new Set(problems)) {
    issues.push(createIssue('invariant', `Invalid narrative XHTML (txt-1): ${problem}`, path));
  }
  if (problems.length === 0 && !content) {
    // A warning: several R4 examples (ActivityDefinition-blood-tubes-supply, ...) have an empty div.
    issues.push(createIssue('invariant', 'The narrative has no text or image (txt-2)', path, 'warning'));
  }
}

function collectLinks(tag: SaxesTagNS, path: string, links: NarrativeLinks): void {
  for (const attribute of Object.values(tag.attributes)) {
    if (attribute.uri) {
      continue;
    }
    if (attribute.local === 'id' || (attribute.local === 'name' && (tag.local === 'a' || tag.local === 'map'))) {
      links.addAnchor(attribute.value);
    } else if (attribute.local === 'href' && attribute.value.startsWith('#') && attribute.value.length > 1) {
      links.addLink(decodeFragment(attribute.value.slice(1)), path);
    }
  }
}

function decodeFragment(fragment: string): string {
  try {
    return decodeURIComponent(fragment);
  } catch {
    return fragment;
  }
}

function checkElement(tag: SaxesTagNS, problems: string[]): void {
  const name = tag.local;
  if (tag.uri !== XHTML_NS) {
    problems.push(`<${tag.name}> is not an XHTML element`);
    return;
  }
  if (!ELEMENTS.has(name)) {
    problems.push(`<${name}> is not allowed in a narrative`);
    return;
  }
  for (const attribute of Object.values(tag.attributes)) {
    const local = attribute.local;
    const value = attribute.value;
    if (attribute.prefix === 'xmlns' || attribute.name === 'xmlns') {
      if (value !== XHTML_NS) {
        problems.push(`<${name}> declares another namespace (${value})`);
      }
      continue;
    }
    if (attribute.uri === XML_NS) {
      if (local !== 'lang' && local !== 'space') {
        problems.push(`the attribute xml:${local} is not allowed`);
      }
      continue;
    }
    if (attribute.uri || (!COMMON_ATTRIBUTES.has(local) && !ELEMENT_ATTRIBUTES[name]?.has(local))) {
      problems.push(
        /^on/i.test(local)
          ? `event attributes such as ${attribute.name} are not allowed`
          : `the attribute ${attribute.name} is not allowed on <${name}>`,
      );
      continue;
    }
    if ((local === 'href' || local === 'src' || local === 'cite' || local === 'longdesc') && UNSAFE_URL.test(value)) {
      problems.push(`<${name} ${local}> has an unsafe URL (${value.slice(0, 40)})`);
    }
    if (local === 'style' && UNSAFE_STYLE.test(value)) {
      problems.push(`the style of <${name}> runs code or loads content (${value.slice(0, 40)})`);
    }
  }
}
