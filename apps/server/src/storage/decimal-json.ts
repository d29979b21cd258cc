/**
 * JSON that keeps the written form of numbers. FHIR decimals carry their precision in their text
 * (hl7.org/fhir/R4/datatypes.html#decimal: 1.0 is not 1.00) and may hold more digits than a double;
 * JSON.parse keeps neither and JSON.stringify writes the shortest form. FHIRPath's
 * lowBoundary()/highBoundary() depend on it, and a server should answer a decimal as it was written.
 *
 * A number whose text differs from JavaScript's shortest form (1.0, 1.50, 1e3, 12345678901234567890)
 * has that text kept on the object or array holding it, under an enumerable symbol: spreads
 * (`{ ...resource, id }`) carry it, JSON.stringify and Object.keys ignore it. Every object and array
 * above such a number is marked too, so a writer knows from the root alone whether the value needs
 * anything but JSON.stringify. A kept text counts only while its holder still holds the number the
 * text stands for. Text without such numbers (nearly all of it) is parsed and written natively.
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

/**
 * Whether JSON text holds a number that JSON.parse + JSON.stringify would not give back as written.
 * Jumps over strings (where most of a resource's text is) with indexOf.
 */
export function hasLooseNumbers(text: string): boolean {
  const length = text.length;
  let at = 0;
  while (at < length) {
    const c = text.charCodeAt(at);
    if (c === 34 /* " */) {
      at = stringEnd(text, at);
    } else if (c === 45 /* - */ || (c >= 48 && c <= 57)) {
      const end = numberEnd(text, at);
      if (isLoose(text.slice(at, end))) return true;
      at = end;
    } else {
      at++;
    }
  }
  return false;
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

class Parser {
  private at = 0;
  constructor(private readonly text: string) {}

  parse(): unknown {
    const value = this.value();
    this.space();
    if (this.at < this.text.length) this.error('unexpected text after the value');
    return value;
  }

  private error(message: string): never {
    throw new SyntaxError(`JSON at position ${this.at}: ${message}`);
  }

  private space(): void {
    while (this.at < this.text.length && ' \t\n\r'.includes(this.text[this.at])) this.at++;
  }

  /** Parses a value into holder[key]; a container that holds kept texts marks its holder. */
  private value(holder?: object, key?: string | number): unknown {
    this.space();
    const c = this.text[this.at];
    let value: unknown;
    if (c === '{') value = this.object();
    else if (c === '[') value = this.array();
    else if (c === '"') return this.string();
    else if (c === '-' || (c >= '0' && c <= '9')) return this.number(holder, key);
    else return this.word();
    if (holder && textsOf(value as object)) mark(holder);
    return value;
  }

  private word(): unknown {
    for (const [word, value] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const) {
      if (this.text.startsWith(word, this.at)) {
        this.at += word.length;
        return value;
      }
    }
    return this.error('unexpected character');
  }

  private object(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    this.at++;
    this.space();
    if (this.text[this.at] === '}') {
      this.at++;
      return out;
    }
    for (;;) {
      this.space();
      if (this.text[this.at] !== '"') this.error('expected a property name');
      const key = this.string();
      this.space();
      if (this.text[this.at++] !== ':') this.error('expected :');
      const value = this.value(out, key);
      // A property named __proto__ is data here, as with JSON.parse, not the object's prototype.
      if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true });
      else out[key] = value;
      this.space();
      const next = this.text[this.at++];
      if (next === '}') return out;
      if (next !== ',') this.error('expected , or }');
    }
  }

  private array(): unknown[] {
    const out: unknown[] = [];
    this.at++;
    this.space();
    if (this.text[this.at] === ']') {
      this.at++;
      return out;
    }
    for (;;) {
      out.push(this.value(out, out.length));
      this.space();
      const next = this.text[this.at++];
      if (next === ']') return out;
      if (next !== ',') this.error('expected , or ]');
    }
  }

  private string(): string {
    const start = this.at;
    this.at = stringEnd(this.text, start);
    return JSON.parse(this.text.slice(start, this.at)) as string;
  }

  private number(holder?: object, key?: string | number): number {
    const match = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(this.text.slice(this.at, this.at + 400));
    if (!match) this.error('malformed number');
    const text = match[0];
    this.at += text.length;
    if (holder && key !== undefined && isLoose(text)) mark(holder).set(key, text);
    return Number(text);
  }
}

/**
 * JSON.parse, keeping the text of every number written otherwise than its shortest form (see
 * {@link decimalText}). Text without such numbers goes to `parse` (JSON.parse by default) as is:
 * one scan is all it costs. The kept-text parse assumes `parse` has accepted the text when given
 * one that checks more (prototype keys): it is called first.
 */
export function parseKeepingDecimals(text: string, parse: (text: string) => unknown = JSON.parse): unknown {
  const value = parse(text);
  return hasLooseNumbers(text) ? new Parser(text).parse() : value;
}

function write(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || !textsOf(value) || 'toJSON' in value) {
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
 * JSON.stringify's alone; in one with them, only the marked objects and arrays are walked here.
 */
export function stringifyKeepingDecimals(value: unknown): string {
  return hasDecimalTexts(value) ? (write(value) as string) : JSON.stringify(value);
}
