// HL7 v2 in its pipe-delimited encoding (ER7): delimiters and escapes, the message model, the ACK.
// Everything lives inside one self-contained function so that the bot sandbox can run the very
// same code: the server evaluates `hl7Runtime.toString()` in the isolate, and a bot receiving
// `x-application/hl7-v2+er7` gets a real Hl7Message. Nothing inside may refer to anything outside.

export interface Hl7Encoding {
  field: string;
  component: string;
  repetition: string;
  /** Empty when the message declares no escape character: values are then taken literally. */
  escape: string;
  /** Empty when the message declares none: a component is then not split further. */
  subcomponent: string;
  /** HL7 v2.7's truncation character, kept so MSH-2 serialises as it was read. */
  truncation: string;
}

/** Fully split field values: repetitions → components → subcomponents, unescaped. */
export type Hl7FieldValues = string[][][];

/** AA/AE/AR: original mode (application accept/error/reject); CA/CE/CR: enhanced mode commit. */
export type Hl7AckCode = 'AA' | 'AE' | 'AR' | 'CA' | 'CE' | 'CR';

export interface Hl7AckOptions {
  code: Hl7AckCode;
  /** MSA-3, a text message for the sender (why a message was refused). */
  text?: string;
  /** MSH-10 of the ACK; a fresh id by default. */
  controlId?: string;
  /** MSH-7 of the ACK; now by default. */
  now?: Date;
}

export function hl7Runtime() {
  // HL7 v2 encoding characters and escape sequences (HL7 v2.5 chapter 2.7, "Use of escape
  // sequences in text fields"). A message names its own delimiters in MSH-1 and MSH-2.

  const DEFAULT_ENCODING: Hl7Encoding = {
    field: '|',
    component: '^',
    repetition: '~',
    escape: '\\',
    subcomponent: '&',
    truncation: '',
  };

  /** MSH-2 as written: component, repetition, escape, subcomponent (and v2.7's truncation). */
  function encodingCharacters(encoding: Hl7Encoding): string {
    return encoding.component + encoding.repetition + encoding.escape + encoding.subcomponent + encoding.truncation;
  }

  /** Reads the delimiters from MSH-1 (the character after `MSH`) and MSH-2. */
  function readEncoding(headerSegment: string): Hl7Encoding {
    const field = headerSegment.charAt(3);
    if (field === '' || /[A-Za-z0-9\r\n]/.test(field)) {
      throw new Error('HL7 header segment has no field separator after its name (MSH-1)');
    }
    const end = headerSegment.indexOf(field, 4);
    const chars = headerSegment.slice(4, end === -1 ? undefined : end);
    const taken = new Set([field]);
    for (const char of chars) {
      if (taken.has(char)) {
        throw new Error(`HL7 encoding characters (MSH-2) repeat '${char}'`);
      }
      taken.add(char);
    }
    return {
      field,
      component: chars.charAt(0),
      repetition: chars.charAt(1),
      escape: chars.charAt(2),
      subcomponent: chars.charAt(3),
      truncation: chars.charAt(4),
    };
  }

  function hex(code: number): string {
    return code.toString(16).toUpperCase().padStart(2, '0');
  }

  /**
   * Escapes a value for the message: delimiters become \F\ \S\ \T\ \R\ \E\, and line breaks
   * (which would end the segment) become hexadecimal \X0D\ / \X0A\.
   */
  function escapeHl7(value: string, encoding: Hl7Encoding): string {
    const e = encoding.escape;
    if (e === '') {
      return value;
    }
    let out = '';
    for (const char of value) {
      switch (char) {
        case encoding.field:
          out += `${e}F${e}`;
          break;
        case encoding.component:
          out += `${e}S${e}`;
          break;
        case encoding.subcomponent:
          out += `${e}T${e}`;
          break;
        case encoding.repetition:
          out += `${e}R${e}`;
          break;
        case e:
          out += `${e}E${e}`;
          break;
        case encoding.truncation:
          out += `${e}P${e}`;
          break;
        case '\r':
        case '\n':
          out += `${e}X${hex(char.charCodeAt(0))}${e}`;
          break;
        default:
          out += char;
      }
    }
    return out;
  }

  /** Decodes `\Xhhhh\`: the bytes as UTF-8 when they are valid UTF-8, else one character per byte. */
  function decodeHex(digits: string): string | undefined {
    if (digits.length === 0 || digits.length % 2 !== 0 || !/^[0-9A-Fa-f]+$/.test(digits)) {
      return undefined;
    }
    const bytes = new Uint8Array(digits.length / 2);
    for (let i = 0; i < bytes.length; i++) {
      bytes[i] = parseInt(digits.slice(i * 2, i * 2 + 2), 16);
    }
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      return String.fromCharCode(...bytes);
    }
  }

  /**
   * Reverses escapeHl7. Sequences it does not interpret (formatting such as \H\, \N\, \.br\,
   * character-set switches \C..\, \M..\, local \Z..\) are kept as written, escape characters and all.
   */
  function unescapeHl7(value: string, encoding: Hl7Encoding): string {
    const e = encoding.escape;
    if (e === '' || !value.includes(e)) {
      return value;
    }
    let out = '';
    let i = 0;
    while (i < value.length) {
      const char = value[i];
      const close = char === e ? value.indexOf(e, i + 1) : -1;
      if (close === -1) {
        out += char;
        i++;
        continue;
      }
      const sequence = value.slice(i + 1, close);
      const decoded = decodeSequence(sequence, encoding);
      if (decoded === undefined) {
        out += value.slice(i, close + 1);
      } else {
        out += decoded;
      }
      i = close + 1;
    }
    return out;
  }

  function decodeSequence(sequence: string, encoding: Hl7Encoding): string | undefined {
    switch (sequence) {
      case 'F':
        return encoding.field;
      case 'S':
        return encoding.component;
      case 'T':
        return encoding.subcomponent;
      case 'R':
        return encoding.repetition;
      case 'E':
        return encoding.escape;
      case 'P':
        return encoding.truncation || undefined;
    }
    return sequence.startsWith('X') ? decodeHex(sequence.slice(1)) : undefined;
  }
  // An HL7 v2 message in its pipe-delimited encoding (ER7): segments of fields, a field of
  // repetitions, a repetition of components, a component of subcomponents. Each segment keeps its
  // fields as written (escaped), so a message serialises back to exactly what was read; the
  // accessors unescape and the setters escape.

  /** Segments whose first field is the field separator itself (MSH-1) and the second MSH-2. */
  const HEADER_SEGMENTS = new Set(['MSH', 'FHS', 'BHS']);

  function split(text: string, separator: string): string[] {
    return separator === '' ? [text] : text.split(separator);
  }

  class Hl7Segment {
    /** `raw[0]` is the name; `raw[n]` is field n as written (for MSH, MSH-1 and MSH-2 are the delimiters). */
    readonly raw: string[];

    constructor(
      readonly encoding: Hl7Encoding,
      name: string,
      rawFields: string[] = [],
    ) {
      if (!/^[A-Z][A-Z0-9]{2}$/.test(name)) {
        throw new Error(`'${name}' is not an HL7 segment name (three capital letters or digits)`);
      }
      this.raw = HEADER_SEGMENTS.has(name)
        ? [name, encoding.field, encodingCharacters(encoding), ...rawFields.slice(3)]
        : [name, ...rawFields.slice(1)];
    }

    /** Reads one segment's text with the message's delimiters. */
    static parse(text: string, encoding: Hl7Encoding): Hl7Segment {
      const parts = text.split(encoding.field);
      const name = parts[0];
      if (HEADER_SEGMENTS.has(name)) {
        // "MSH|^~\&|A" splits into MSH, ^~\&, A: the separator itself is MSH-1, so shift by one.
        return new Hl7Segment(encoding, name, [name, encoding.field, ...parts.slice(1)]);
      }
      return new Hl7Segment(encoding, name, parts);
    }

    get name(): string {
      return this.raw[0];
    }

    /** The number of the last field present (trailing empty fields count when written). */
    get fieldCount(): number {
      return this.raw.length - 1;
    }

    isHeader(): boolean {
      return HEADER_SEGMENTS.has(this.name);
    }

    /** Field n exactly as written, escapes and delimiters included; '' when absent. */
    getRaw(field: number): string {
      return this.raw[field] ?? '';
    }

    /** Replaces field n with already-encoded text (fields before it are added empty). */
    setRaw(field: number, text: string): this {
      if (!Number.isInteger(field) || field < 1) {
        throw new Error(`HL7 field numbers start at 1 (got ${field})`);
      }
      if (this.isHeader() && field <= 2) {
        throw new Error(`${this.name}-1 and ${this.name}-2 are the message's delimiters; they cannot be set`);
      }
      while (this.raw.length <= field) {
        this.raw.push('');
      }
      this.raw[field] = text;
      return this;
    }

    /**
     * One value, unescaped: field n, its repetition (0-based), component and subcomponent
     * (1-based, as HL7 numbers them). Absent parts read as ''.
     */
    get(field: number, component = 1, subcomponent = 1, repetition = 0): string {
      if (this.isHeader() && field <= 2) {
        return this.getRaw(field);
      }
      const rep = split(this.getRaw(field), this.encoding.repetition)[repetition] ?? '';
      const comp = split(rep, this.encoding.component)[component - 1] ?? '';
      const sub = split(comp, this.encoding.subcomponent)[subcomponent - 1] ?? '';
      return unescapeHl7(sub, this.encoding);
    }

    /** Field n wholly unescaped, delimiters kept (e.g. `DOE^JOHN` for PID-5). */
    getField(field: number): string {
      if (this.isHeader() && field <= 2) {
        return this.getRaw(field);
      }
      const e = this.encoding;
      return split(this.getRaw(field), e.repetition)
        .map((rep) =>
          split(rep, e.component)
            .map((comp) =>
              split(comp, e.subcomponent)
                .map((sub) => unescapeHl7(sub, e))
                .join(e.subcomponent),
            )
            .join(e.component),
        )
        .join(e.repetition);
    }

    /** Field n split into repetitions, components and subcomponents, each unescaped. */
    getValues(field: number): Hl7FieldValues {
      const e = this.encoding;
      return split(this.getRaw(field), e.repetition).map((rep) =>
        split(rep, e.component).map((comp) => split(comp, e.subcomponent).map((sub) => unescapeHl7(sub, e))),
      );
    }

    /** Sets field n to one plain value (escaped, so delimiters in it are data). */
    set(field: number, value: string): this {
      return this.setRaw(field, escapeHl7(value, this.encoding));
    }

    /** Sets field n from its components (one repetition). */
    setComponents(field: number, components: string[]): this {
      return this.setValues(field, [components.map((c) => [c])]);
    }

    /** Sets field n from repetitions → components → subcomponents (each escaped). */
    setValues(field: number, values: Hl7FieldValues): this {
      const e = this.encoding;
      const text = values
        .map((rep) => rep.map((comp) => comp.map((sub) => escapeHl7(sub, e)).join(e.subcomponent)).join(e.component))
        .join(e.repetition);
      return this.setRaw(field, text);
    }

    toString(): string {
      if (this.isHeader()) {
        return [this.name + this.raw[1] + this.raw[2], ...this.raw.slice(3)].join(this.encoding.field);
      }
      return this.raw.join(this.encoding.field);
    }
  }

  class Hl7Message {
    constructor(
      readonly encoding: Hl7Encoding,
      readonly segments: Hl7Segment[],
    ) {}

    /**
     * Reads a message. Segments end with CR (LF and CRLF are accepted too, as many systems send
     * them); the delimiters come from the first segment, which must be MSH (or FHS/BHS for a batch).
     */
    static parse(text: string): Hl7Message {
      const lines = text.split(/\r\n|\r|\n/).filter((line) => line.length > 0);
      if (lines.length === 0) {
        throw new Error('HL7 message is empty');
      }
      const first = lines[0].slice(0, 3);
      if (!HEADER_SEGMENTS.has(first)) {
        throw new Error(`HL7 message must start with an MSH segment (found '${lines[0].slice(0, 3)}')`);
      }
      const encoding = readEncoding(lines[0]);
      const segments = lines.map((line, index) => {
        try {
          return Hl7Segment.parse(line, encoding);
        } catch (error) {
          throw new Error(`HL7 segment ${index + 1}: ${(error as Error).message}`);
        }
      });
      return new Hl7Message(encoding, segments);
    }

    /** A new message with an MSH segment carrying the given delimiters. */
    static create(encoding: Hl7Encoding = DEFAULT_ENCODING): Hl7Message {
      return new Hl7Message(encoding, [new Hl7Segment(encoding, 'MSH')]);
    }

    /** Appends a segment and returns it for setting its fields. */
    addSegment(name: string): Hl7Segment {
      const segment = new Hl7Segment(this.encoding, name);
      this.segments.push(segment);
      return segment;
    }

    getSegment(name: string, occurrence = 0): Hl7Segment | undefined {
      return this.getSegments(name)[occurrence];
    }

    getSegments(name: string): Hl7Segment[] {
      return this.segments.filter((segment) => segment.name === name);
    }

    get header(): Hl7Segment {
      return this.segments[0];
    }

    /**
     * A value by its usual notation: `PID-5` (first component), `PID-5.2`, `PID-5.2.1`,
     * `PID-3[1].1` (second repetition), `OBX(2)-5` (third OBX). '' when absent.
     */
    get(path: string): string {
      const match = /^([A-Z][A-Z0-9]{2})(?:\((\d+)\))?-(\d+)(?:\[(\d+)\])?(?:\.(\d+))?(?:\.(\d+))?$/.exec(path);
      if (!match) {
        throw new Error(`'${path}' is not an HL7 path such as PID-5.1 or OBX(2)-5`);
      }
      const [, name, occurrence, field, repetition, component, subcomponent] = match;
      const segment = this.getSegment(name, Number(occurrence ?? 0));
      return (
        segment?.get(Number(field), Number(component ?? 1), Number(subcomponent ?? 1), Number(repetition ?? 0)) ?? ''
      );
    }

    /** MSH-10, the message control id. */
    get controlId(): string {
      return this.header.get(10);
    }

    /** MSH-9 as `type^trigger` (e.g. `ADT^A01`). */
    get messageType(): string {
      const type = this.header.get(9, 1);
      const trigger = this.header.get(9, 2);
      return trigger ? `${type}^${trigger}` : type;
    }

    /** MSH-12, the version (e.g. `2.5.1`). */
    get version(): string {
      return this.header.get(12);
    }

    /** The message as ER7 text, each segment terminated by CR (HL7 v2.5 2.5.2). */
    toString(): string {
      return this.segments.map((segment) => `${segment.toString()}\r`).join('');
    }
  }
  // The general acknowledgement (HL7 v2.5 2.9.2, "ACK"): the receiver answers with its own MSH,
  // sender and receiver swapped, and an MSA naming the original's control id.

  /** HL7's DTM as YYYYMMDDHHMMSS+0000 (UTC). */
  function hl7Timestamp(date: Date): string {
    const pad = (n: number) => String(n).padStart(2, '0');
    return (
      `${date.getUTCFullYear()}${pad(date.getUTCMonth() + 1)}${pad(date.getUTCDate())}` +
      `${pad(date.getUTCHours())}${pad(date.getUTCMinutes())}${pad(date.getUTCSeconds())}+0000`
    );
  }

  /** 20 characters, MSH-10's length limit before v2.7. */
  function newControlId(): string {
    // The bot sandbox has no Web Crypto: there, time and Math.random make it unique enough.
    const crypto = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
    const id = crypto?.randomUUID
      ? crypto.randomUUID().replace(/-/g, '')
      : Date.now().toString(16) + Math.random().toString(16).slice(2) + Math.random().toString(16).slice(2);
    return id.slice(0, 20);
  }

  /** Builds the ACK for a message: MSH-3/4 and MSH-5/6 swapped, MSA-2 = its MSH-10. */
  function buildAck(message: Hl7Message, options: Hl7AckOptions): Hl7Message {
    const original = message.header;
    const ack = Hl7Message.create(message.encoding);
    const msh = ack.header;
    msh.setRaw(3, original.getRaw(5));
    msh.setRaw(4, original.getRaw(6));
    msh.setRaw(5, original.getRaw(3));
    msh.setRaw(6, original.getRaw(4));
    msh.set(7, hl7Timestamp(options.now ?? new Date()));
    const trigger = original.get(9, 2);
    msh.setComponents(9, trigger ? ['ACK', trigger, 'ACK'] : ['ACK']);
    msh.set(10, options.controlId ?? newControlId());
    msh.setRaw(11, original.getRaw(11));
    msh.setRaw(12, original.getRaw(12));
    const msa = ack.addSegment('MSA');
    msa.set(1, options.code);
    msa.set(2, message.controlId);
    if (options.text !== undefined) {
      msa.set(3, options.text);
    }
    return ack;
  }

  return {
    DEFAULT_ENCODING,
    encodingCharacters,
    readEncoding,
    escapeHl7,
    unescapeHl7,
    Hl7Segment,
    Hl7Message,
    hl7Timestamp,
    buildAck,
  };
}
