/**
 * JSON that keeps the written form of numbers. FHIR decimals carry their precision in their text
 * (hl7.org/fhir/R4/datatypes.html#decimal: 1.0 is not 1.00) and may hold more digits than a double;
 * JSON.parse keeps neither and JSON.stringify writes the shortest form. FHIRPath's
 * lowBoundary()/highBoundary() depend on it, and a server should answer a decimal as it was written.
 *
 * A number whose text differs from JavaScript's shortest form (1.0, 1.50, 1e3, 12345678901234567890)
 * has that text kept on the object or array holding it, under an enumerable symbol: spreads
 * (`{ ...resource, id }`) carry it, JSON.stringify and Object.keys ignore it. Every object and array
 * above such a number is marked too, so a writer knows from the top whether the value needs
 * anything but JSON.stringify. A kept text counts only while its holder still holds the number the
 * text stands for. JSON.parse builds the value and one scan of the text finds the loose numbers;
 * a value without any is written by JSON.stringify alone.
 */

const KEPT = Symbol('hearth.decimalTexts');

type Texts = Map<string | number, string>;
type Holder = { [KEPT]?: Texts } & Record<string | number, unknown>;

function textsOf(holder: object): Texts | undefined {
  return (holder as Holder)[KEPT];
}

function mark(holder: object): Texts {
  let texts = (holder as Holder)[KEPT];
  if (!texts) (holder as Holder)[KEPT] = texts = new Map();
  return texts;
}

/** True when parsing `token` and writing it back gives other text (the number's written form would be lost). */
function isLoose(token: string): boolean {
  // Short integers always come back as written; only "-0" does not.
  if (token.length < 16 && !/[.eE]/.test(token)) return token === '-0';
  return String(Number(token)) !== token;
}

/** The index just past the string starting at `at` (its opening quote). */
function stringEnd(text: string, at: number): number {
  let from = at + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote < 0) return text.length;
    let slashes = 0;
    while (text.charCodeAt(quote - 1 - slashes) === 92 /* \ */) slashes++;
    if (slashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

function numberEnd(text: string, at: number): number {
  let end = at + 1;
  for (;;) {
    const c = text.charCodeAt(end);
    // digits . + - e E
    if ((c >= 48 && c <= 57) || c === 46 || c === 43 || c === 45 || c === 101 || c === 69) end++;
    else return end;
  }
}

/** A loose number of JSON text: where it sits (keys and indexes from the top) and how it was written. */
export interface LooseNumber {
  path: (string | number)[];
  text: string;
}

export interface JsonScan {
  /** The text nests objects and arrays deeper than the depth asked for (the scan stopped there). */
  tooDeep: boolean;
  loose: LooseNumber[];
}

/**
 * One pass over JSON text: its loose numbers, with where each sits, and whether it nests deeper
 * than `maxDepth`. The open objects' current keys and the open arrays' indexes are followed as
 * positions (a key is read only when a loose number sits under it), and strings, where most of a
 * resource's text is, are jumped over with indexOf. Malformed text gives a scan of no use, but
 * the parse that follows refuses it.
 */
export function scanJson(text: string, maxDepth = Infinity): JsonScan {
  // Per open container: -1 for an array (its index in `index`), else where the object's current key starts.
  const keyStart: number[] = [];
  const keyEnd: number[] = [];
  const index: number[] = [];
  const loose: LooseNumber[] = [];
  let depth = 0;
  let inValue = false; // in an object: past the current key's colon
  const length = text.length;
  let at = 0;
  while (at < length) {
    const c = text.charCodeAt(at);
    if (c === 34 /* " */) {
      const end = stringEnd(text, at);
      if (depth > 0 && keyStart[depth - 1] !== -1 && !inValue) {
        keyStart[depth - 1] = at;
        keyEnd[depth - 1] = end;
      }
      at = end;
      continue;
    }
    if (c === 45 /* - */ || (c >= 48 && c <= 57)) {
      const end = numberEnd(text, at);
      const token = text.slice(at, end);
      if (depth > 0 && isLoose(token)) {
        const path: (string | number)[] = [];
        for (let level = 0; level < depth; level++) {
          if (keyStart[level] === -1) {
            path.push(index[level]);
          } else {
            const key = text.slice(keyStart[level], keyEnd[level]);
            path.push(key.includes('\\') ? (JSON.parse(key) as string) : key.slice(1, -1));
          }
        }
        loose.push({ path, text: token });
      }
      at = end;
      continue;
    }
    if (c === 123 /* { */ || c === 91 /* [ */) {
      if (depth >= maxDepth) return { tooDeep: true, loose };
      keyStart[depth] = c === 123 ? 0 : -1;
      index[depth] = 0;
      depth++;
      inValue = false;
    } else if (c === 125 /* } */ || c === 93 /* ] */) {
      if (depth > 0) depth--;
      inValue = depth > 0 && keyStart[depth - 1] !== -1;
    } else if (c === 44 /* , */) {
      if (depth > 0 && keyStart[depth - 1] === -1) index[depth - 1]++;
      else inValue = false;
    } else if (c === 58 /* : */) {
      inValue = true;
    }
    at++;
  }
  return { tooDeep: false, loose };
}

/** Gives each loose number's text to the object or array holding it in `value` (parsed from the scanned text), marking the containers above. */
export function keepDecimals(value: unknown, loose: LooseNumber[]): void {
  for (const { path, text } of loose) {
    const containers: object[] = [];
    let holder: unknown = value;
    for (let level = 0; level < path.length - 1; level++) {
      if (typeof holder !== 'object' || holder === null || !Object.hasOwn(holder, path[level])) break;
      containers.push(holder);
      holder = (holder as Holder)[path[level]];
    }
    const key = path[path.length - 1];
    if (containers.length !== path.length - 1 || typeof holder !== 'object' || holder === null) continue;
    if (!Object.hasOwn(holder, key) || (holder as Holder)[key] !== Number(text)) continue;
    for (const container of containers) mark(container);
    mark(holder).set(key, text);
  }
}

/** The text a number was written with, when it was parsed by {@link parseKeepingDecimals} and differs from its shortest form. */
export function decimalText(holder: object, key: string | number): string | undefined {
  const text = textsOf(holder)?.get(key);
  if (text === undefined) return undefined;
  return (holder as Holder)[key] === Number(text) ? text : undefined;
}

/** Whether a value (a resource, a Bundle) holds numbers whose written form is kept. */
export function hasDecimalTexts(value: unknown): boolean {
  return typeof value === 'object' && value !== null && textsOf(value) !== undefined;
}

/**
 * JSON.parse, keeping the text of every number written otherwise than its shortest form (see
 * {@link decimalText}). `parse` (JSON.parse by default, or one that checks more) builds the value;
 * one scan of the text ({@link scanJson}) finds the loose numbers, if any, for {@link keepDecimals}.
 */
export function parseKeepingDecimals(text: string, parse: (text: string) => unknown = JSON.parse): unknown {
  const value = parse(text);
  keepDecimals(value, scanJson(text).loose);
  return value;
}

/** Whether an object or array is marked, or (a resource rebuilt around kept elements) one of its members is. */
function holdsDecimalTexts(value: object): boolean {
  if (textsOf(value)) return true;
  for (const item of Array.isArray(value) ? value : Object.values(value)) {
    if (typeof item === 'object' && item !== null && textsOf(item)) return true;
  }
  return false;
}

function write(value: unknown, top = false): string | undefined {
  if (
    typeof value !== 'object' ||
    value === null ||
    !(top ? holdsDecimalTexts(value) : textsOf(value)) ||
    'toJSON' in value
  ) {
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) {
    const items: string[] = [];
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      items.push((typeof item === 'number' ? decimalText(value, i) : undefined) ?? write(item) ?? 'null');
    }
    return `[${items.join(',')}]`;
  }
  const members: string[] = [];
  for (const key of Object.keys(value)) {
    const item = (value as Holder)[key];
    const text = (typeof item === 'number' ? decimalText(value, key) : undefined) ?? write(item);
    if (text !== undefined) members.push(`${JSON.stringify(key)}:${text}`);
  }
  return `{${members.join(',')}}`;
}

/**
 * JSON.stringify that writes kept numbers as they were written. A value without kept texts is
 * JSON.stringify's alone (after a look at its own members: a resource rebuilt around parsed
 * elements, as a write does with meta, is not marked itself); in one with them, only the marked
 * objects and arrays are walked here.
 */
export function stringifyKeepingDecimals(value: unknown): string {
  return write(value, true) as string;
}

/**
 * A deep copy of a JSON value that keeps its decimals' texts (structuredClone and JSON round trips
 * drop them); structuredClone when it holds none.
 */
export function copyKeepingDecimals<T>(value: T): T {
  return typeof value === 'object' && value !== null && holdsDecimalTexts(value)
    ? (parseKeepingDecimals(stringifyKeepingDecimals(value)) as T)
    : structuredClone(value);
}
