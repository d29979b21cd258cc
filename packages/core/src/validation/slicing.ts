/**
 * Slicing (hl7.org/fhir/R4/profiling.html#slicing): which slice each value of a sliced element
 * belongs to, by the discriminators value, pattern, type, profile and exists, and the rules on
 * the whole (closed, openAtEnd, ordered) and on each slice (its min and max).
 */
import type { Discriminator, ProfileNode } from './profile-tree.js';
import { childItems, deepEqual, isObject, matchesPattern, type Item } from './profile-values.js';
import type { ValidatorSchema } from './schema.js';

export interface SlicingContext {
  schema: ValidatorSchema;
  /** What the discriminator paths lead to in each slice, found once (per validator) for every value sorted. */
  discriminators: DiscriminatorCache;
  /** Whether the value conforms to the profile (validates without errors). */
  conforms(item: Item, profileUrl: string): boolean;
  /** Whether a coded value is in the value set; undefined when that cannot be told. */
  inValueSet(valueSet: string, item: Item): boolean | undefined;
}

export interface SliceProblem {
  text: string;
  expression: string;
}

/** Path steps, split at the dots outside parentheses: "extension('http://x.org/a').value". */
export function pathSteps(path: string): string[] {
  const steps: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < path.length; i++) {
    const c = path[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === '.' && depth === 0) {
      steps.push(path.slice(start, i));
      start = i + 1;
    }
  }
  steps.push(path.slice(start));
  return steps.filter((s) => s !== '');
}

const FUNCTION = /^(\w+)\((?:'([^']*)'|([A-Za-z]+))?\)$/;

/** The child node for a name step: 'value' also finds 'value[x]'. */
function childNode(node: ProfileNode | undefined, name: string): ProfileNode | undefined {
  return node?.children.get(name) ?? node?.children.get(`${name}[x]`);
}

/** The url an extension slice is for: its fixed url, or the profile of its type. */
export function extensionUrl(slice: ProfileNode): string | undefined {
  const fixed = slice.children.get('url')?.fixed?.value;
  if (typeof fixed === 'string') {
    return fixed;
  }
  return slice.types?.find((t) => t.code === 'Extension')?.profiles[0]?.split('|')[0];
}

/**
 * The nodes of a slice that a discriminator path leads to, and the url it fixes when it is an
 * extension's url. Usually one node; where the path runs through an element the slice slices
 * again without saying anything of the next step itself (bp's SystolicBP slices
 * `code.coding` into SBPCode, which fixes `code`), the nodes of those slices.
 */
function discriminatorNodes(slice: ProfileNode, path: string, cache: DiscriminatorCache): DiscriminatorNodes {
  let bySlice = cache.get(slice);
  if (!bySlice) {
    bySlice = new Map();
    cache.set(slice, bySlice);
  }
  let found = bySlice.get(path);
  if (!found) {
    found = findDiscriminatorNodes(slice, path);
    bySlice.set(path, found);
  }
  return found;
}

export interface DiscriminatorNodes {
  /** The path's steps ('code', 'coding', "extension('…')"). */
  steps: string[];
  nodes: ProfileNode[];
  impliedUrl?: string;
}

/** What discriminatorNodes finds, by slice and path: the same for every value sorted into slices. */
export type DiscriminatorCache = WeakMap<ProfileNode, Map<string, DiscriminatorNodes>>;

function findDiscriminatorNodes(slice: ProfileNode, path: string): DiscriminatorNodes {
  const steps = pathSteps(path);
  let nodes: ProfileNode[] = [slice];
  let parent: ProfileNode | undefined;
  for (const step of steps) {
    if (step === '$this') continue;
    const fn = FUNCTION.exec(step);
    if (fn?.[1] === 'extension') {
      const extension = childNode(nodes[0], 'extension');
      parent = extension?.slices.find((s) => extensionUrl(s) === fn[2]) ?? extension;
      nodes = parent ? [parent] : [];
      continue;
    }
    if (fn?.[1] === 'ofType') continue;
    if (fn) return { steps, nodes: [] }; // resolve() and other functions: not followed
    parent = nodes[0];
    nodes = nodes.flatMap((n) => {
      const child = childNode(n, step);
      return child ? [child] : n.slices.flatMap((s) => childNode(s, step) ?? []);
    });
  }
  const impliedUrl = path.endsWith('url') && parent && !nodes[0]?.fixed ? extensionUrl(parent) : undefined;
  return { steps, nodes, impliedUrl };
}

/** The values a discriminator path selects in an instance value; undefined when it cannot be followed. */
function discriminatorItems(item: Item, steps: string[], schema: ValidatorSchema): Item[] | undefined {
  let items: Item[] = [item];
  for (const step of steps) {
    if (step === '$this') continue;
    const fn = FUNCTION.exec(step);
    if (fn?.[1] === 'extension') {
      items = items
        .flatMap((i) => childItems(i, 'extension', 'Extension', schema))
        .filter((i) => isObject(i.value) && i.value.url === fn[2]);
    } else if (fn?.[1] === 'ofType') {
      const type = fn[3] ?? fn[2];
      items = items.filter((i) => i.type === type);
    } else if (fn) {
      return undefined;
    } else {
      items = items.flatMap((i) => {
        const direct = childItems(i, step, undefined, schema);
        return direct.length > 0 ? direct : childItems(i, `${step}[x]`, undefined, schema);
      });
    }
  }
  return items;
}

function matchesDiscriminator(slice: ProfileNode, item: Item, d: Discriminator, ctx: SlicingContext): boolean {
  const { steps, nodes, impliedUrl } = discriminatorNodes(slice, d.path, ctx.discriminators);
  const values = discriminatorItems(item, steps, ctx.schema);
  const node = nodes[0];
  if (!values) {
    return false;
  }
  switch (d.type) {
    case 'value':
    case 'pattern': {
      if (impliedUrl !== undefined) {
        return values.some((v) => v.value === impliedUrl);
      }
      // The slice gives nothing to tell it apart by when no node fixes, patterns or binds the value.
      return nodes.some((n) => valueMatches(n, values, ctx));
    }
    case 'exists':
      return node && node.max === 0 ? values.length === 0 : node && node.min > 0 ? values.length > 0 : true;
    case 'type': {
      const types = node?.types?.map((t) => t.code);
      return !types || values.some((v) => v.type !== undefined && types.includes(v.type));
    }
    case 'profile': {
      const profiles = node?.types?.flatMap((t) => t.profiles) ?? [];
      return profiles.length > 0 && values.some((v) => profiles.some((p) => ctx.conforms(v, p)));
    }
  }
}

/** Whether one of `values` has the value a node fixes, matches its pattern or is in its required value set. */
function valueMatches(node: ProfileNode, values: Item[], ctx: SlicingContext): boolean {
  if (node.fixed) {
    return values.some((v) => deepEqual(v.value, node.fixed!.value));
  }
  if (node.pattern) {
    return values.some((v) => matchesPattern(v.value, node.pattern!.value));
  }
  if (node.binding?.strength === 'required') {
    return values.some((v) => ctx.inValueSet(node.binding!.valueSet, v) === true);
  }
  return false;
}

function sliceMatches(slice: ProfileNode, item: Item, discriminators: Discriminator[], ctx: SlicingContext): boolean {
  return discriminators.length > 0 && discriminators.every((d) => matchesDiscriminator(slice, item, d, ctx));
}

/**
 * Sorts the values of a sliced element into its slices and checks the slicing's rules and the
 * slices' cardinalities. Values in no slice are returned apart.
 */
export function assignSlices(
  node: ProfileNode,
  items: Item[],
  ctx: SlicingContext,
  parentExpression: string,
  problems: SliceProblem[],
): Map<ProfileNode, Item[]> {
  const slicing = node.slicing!;
  const bySlice = new Map<ProfileNode, Item[]>(node.slices.map((s) => [s, []]));
  let lastSlice = -1;
  let lastMatched = -1;
  let firstUnmatched = -1;
  items.forEach((item, position) => {
    const index = node.slices.findIndex((s) => sliceMatches(s, item, slicing.discriminators, ctx));
    if (index < 0) {
      if (slicing.rules === 'closed') {
        problems.push({
          text: `This element does not match any known slice of ${node.id} and slicing is closed`,
          expression: item.expression,
        });
      }
      if (firstUnmatched < 0) firstUnmatched = position;
      return;
    }
    bySlice.get(node.slices[index])!.push(item);
    if (slicing.ordered && index < lastSlice) {
      problems.push({
        text: `Slice ${node.slices[index].sliceName} is out of order: the slices of ${node.id} are ordered`,
        expression: item.expression,
      });
    }
    lastSlice = Math.max(lastSlice, index);
    lastMatched = position;
  });
  if (slicing.rules === 'openAtEnd' && firstUnmatched >= 0 && firstUnmatched < lastMatched) {
    problems.push({
      text: `Values outside the slices of ${node.id} must come after all the sliced values (openAtEnd)`,
      expression: items[firstUnmatched].expression,
    });
  }
  for (const [slice, matched] of bySlice) {
    if (matched.length < slice.min) {
      problems.push({
        text: `Slice ${node.id}:${slice.sliceName}: minimum required = ${slice.min}, but only found ${matched.length}`,
        expression: matched[0]?.expression.replace(/\[\d+\]$/, '') ?? `${parentExpression}.${node.name}`,
      });
    }
    if (matched.length > slice.max) {
      problems.push({
        text: `Slice ${node.id}:${slice.sliceName}: maximum allowed = ${slice.max}, but found ${matched.length}`,
        expression: matched[slice.max].expression,
      });
    }
  }
  return bySlice;
}
