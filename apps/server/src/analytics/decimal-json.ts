/**
 * JSON parsing that keeps the written precision of decimals. FHIR decimals carry their precision
 * in their text (hl7.org/fhir/R4/datatypes.html#decimal: 1.0 is not 1.00), which JSON.parse loses;
 * FHIRPath's lowBoundary()/highBoundary() depend on it. The text of each decimal that has a fraction
 * or an exponent is kept beside its holder object (weakly, so it goes with the parsed value).
 */

const decimalTexts = new WeakMap<object, Map<string | number, string>>();

/** The text a decimal was written with, when it was parsed by {@link parseKeepingDecimals}. */
export function decimalText(holder: object, key: string | number): string | undefined {
  return decimalTexts.get(holder)?.get(key);
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

  private value(holder?: object, key?: string | number): unknown {
    this.space();
    const c = this.text[this.at];
    if (c === '{') return this.object();
    if (c === '[') return this.array();
    if (c === '"') return this.string();
    if (c === '-' || (c >= '0' && c <= '9')) return this.number(holder, key);
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
      out[key] = this.value(out, key);
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
    this.at++;
    while (this.at < this.text.length && this.text[this.at] !== '"') {
      this.at += this.text[this.at] === '\\' ? 2 : 1;
    }
    if (this.at >= this.text.length) this.error('unterminated string');
    this.at++;
    return JSON.parse(this.text.slice(start, this.at)) as string;
  }

  private number(holder?: object, key?: string | number): number {
    const match = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(this.text.slice(this.at, this.at + 400));
    if (!match) this.error('malformed number');
    const text = match[0];
    this.at += text.length;
    if (holder && key !== undefined && (match[2] || match[3])) {
      let texts = decimalTexts.get(holder);
      if (!texts) decimalTexts.set(holder, (texts = new Map()));
      texts.set(key, text);
    }
    return Number(text);
  }
}

/** JSON.parse, remembering the text of every decimal (see {@link decimalText}). */
export function parseKeepingDecimals(text: string): unknown {
  return new Parser(text).parse();
}
