// ASTM E1394 (LIS2-A2) record layer: the records of one transmission (H, P, O, R, C, Q, M, S, L),
// the delimiters the header declares, and their escape sequences. Everything lives inside one
// self-contained function (as the HL7 v2 runtime does) so that the bot sandbox runs the very same
// code: a bot's `require('@hearth/core')` gives it parseAstmTransmission and the rest. Nothing
// inside may refer to anything outside.

/** The four delimiters of a message, declared by its header: `H|\^&` gives field `|`, repeat `\`, component `^`, escape `&`. */
export interface AstmDelimiters {
  field: string;
  repeat: string;
  component: string;
  escape: string;
}

/**
 * One record. `fields[0]` is the record type (ASTM field 1), so `fields[n - 1]` is ASTM field n;
 * each field is a list of repeats, each repeat a list of components, values unescaped.
 */
export interface AstmRecord {
  /** The record type letter: H header, P patient, O order, R result, C comment, Q request, M manufacturer, S scientific, L terminator. */
  type: string;
  fields: string[][][];
  /** The record's text as received (without its CR). */
  raw: string;
}

export interface AstmResult {
  record: AstmRecord;
  comments: AstmRecord[];
}

export interface AstmOrder {
  record: AstmRecord;
  comments: AstmRecord[];
  results: AstmResult[];
}

export interface AstmPatient {
  record: AstmRecord;
  comments: AstmRecord[];
  orders: AstmOrder[];
}

/** One message: a header, what follows it, up to its terminator. */
export interface AstmMessage {
  delimiters: AstmDelimiters;
  header: AstmRecord;
  patients: AstmPatient[];
  /** Request-information (Q) records: a host query. */
  queries: AstmRecord[];
  /** Manufacturer (M) and scientific (S) records, and comments on the header. */
  other: AstmRecord[];
  terminator?: AstmRecord;
}

export interface AstmTransmission {
  /** Every record in order. */
  records: AstmRecord[];
  /** The records grouped by header: patient → order → result, comments under what they follow. */
  messages: AstmMessage[];
}

export function astmRuntime() {
  /** `H|\\^&`: field `|`, repeat `\\`, component `^`, escape `&`. */
  const defaultAstmDelimiters: AstmDelimiters = { field: '|', repeat: '\\', component: '^', escape: '&' };

  /** Reads the delimiters from a header record's text (`H|\^&...`); undefined when it is not one. */
  function astmDelimitersOf(headerText: string): AstmDelimiters | undefined {
    if (headerText[0] !== 'H' || headerText.length < 5) return undefined;
    const [field, repeat, component, escape] = headerText.slice(1, 5);
    const all = new Set([field, repeat, component, escape]);
    if (all.size !== 4 || [...all].some((c) => /[A-Za-z0-9\r\n]/.test(c))) return undefined;
    return { field, repeat, component, escape };
  }

  /** Replaces the escape sequences of E1394 (&F& &S& &R& &E&, and &Xhh..& hexadecimal) by what they stand for. */
  function unescapeAstm(value: string, d: AstmDelimiters): string {
    if (!value.includes(d.escape)) return value;
    const e = d.escape;
    let out = '';
    let i = 0;
    while (i < value.length) {
      const c = value[i];
      const end = c === e ? value.indexOf(e, i + 1) : -1;
      if (end < 0) {
        out += c;
        i += 1;
        continue;
      }
      const code = value.slice(i + 1, end);
      const decoded = decodeEscape(code, d);
      if (decoded === undefined) {
        out += c; // not an escape sequence: keep the character
        i += 1;
      } else {
        out += decoded;
        i = end + 1;
      }
    }
    return out;
  }

  function decodeEscape(code: string, d: AstmDelimiters): string | undefined {
    switch (code) {
      case 'F':
        return d.field;
      case 'S':
        return d.component;
      case 'R':
        return d.repeat;
      case 'E':
        return d.escape;
    }
    if (/^X([0-9A-Fa-f]{2})+$/.test(code)) {
      return code
        .slice(1)
        .match(/../g)!
        .map((h) => String.fromCharCode(parseInt(h, 16)))
        .join('');
    }
    return undefined;
  }

  /** Escapes the delimiters inside a value so that it can be written into a record. */
  function escapeAstm(value: string, d: AstmDelimiters): string {
    let out = '';
    for (const c of value) {
      if (c === d.escape) out += `${d.escape}E${d.escape}`;
      else if (c === d.field) out += `${d.escape}F${d.escape}`;
      else if (c === d.component) out += `${d.escape}S${d.escape}`;
      else if (c === d.repeat) out += `${d.escape}R${d.escape}`;
      else out += c;
    }
    return out;
  }

  /** Parses one record's text with the given delimiters. A header keeps its delimiter field (H.2) as one value. */
  function parseAstmRecord(text: string, d: AstmDelimiters): AstmRecord {
    const raw = text.replace(/\r$/, '');
    const parts = raw.split(d.field);
    const type = (parts[0] ?? '').trim().toUpperCase();
    const fields = parts.map((part, index): string[][] => {
      if (index === 0) return [[type]];
      if (type === 'H' && index === 1) return [[part]];
      return part.split(d.repeat).map((repeat) => repeat.split(d.component).map((c) => unescapeAstm(c, d)));
    });
    return { type, fields, raw };
  }

  /**
   * A value of a record, numbered as in E1394: field n (1 = the record type), component and repeat
   * from 1. Undefined when absent or empty.
   */
  function astmValue(record: AstmRecord, field: number, component = 1, repeat = 1): string | undefined {
    const value = record.fields[field - 1]?.[repeat - 1]?.[component - 1];
    return value === undefined || value === '' ? undefined : value;
  }

  /** The records of a transmission's text (records separated by CR, LF or CRLF; delimiters from each header). */
  function parseAstmTransmission(text: string): AstmTransmission {
    const records: AstmRecord[] = [];
    const messages: AstmMessage[] = [];
    let delimiters = defaultAstmDelimiters;
    let message: AstmMessage | undefined;
    let patient: AstmPatient | undefined;
    let order: AstmOrder | undefined;
    let result: AstmResult | undefined;
    // A record's CR may be followed by LF when a transmission was saved to a file.
    for (const line of text.split(/\r\n|\r|\n/)) {
      if (line.trim() === '') continue;
      const header = astmDelimitersOf(line);
      if (header) delimiters = header;
      const record = parseAstmRecord(line, delimiters);
      records.push(record);
      if (record.type === 'H') {
        message = { delimiters, header: record, patients: [], queries: [], other: [] };
        messages.push(message);
        patient = order = result = undefined;
        continue;
      }
      if (!message) continue; // records before any header belong to no message
      switch (record.type) {
        case 'P':
          patient = { record, comments: [], orders: [] };
          message.patients.push(patient);
          order = result = undefined;
          break;
        case 'O':
          order = { record, comments: [], results: [] };
          // An order without a patient record before it still belongs somewhere: an empty patient.
          if (!patient) {
            patient = { record: parseAstmRecord('P|1', delimiters), comments: [], orders: [] };
            message.patients.push(patient);
          }
          patient.orders.push(order);
          result = undefined;
          break;
        case 'R':
          result = { record, comments: [] };
          if (order) order.results.push(result);
          else message.other.push(record);
          break;
        case 'C':
          (result ?? order ?? patient ?? { comments: message.other }).comments.push(record);
          break;
        case 'Q':
          message.queries.push(record);
          break;
        case 'L':
          message.terminator = record;
          patient = order = result = undefined;
          break;
        default:
          message.other.push(record);
      }
    }
    return { records, messages };
  }

  /**
   * Writes one record: `fields[0]` is the record type; each further field is a value, a list of
   * components, or a list of repeats of component lists. Values are escaped; a header's delimiter
   * field is written from `d`.
   */
  function formatAstmRecord(fields: (string | string[] | string[][] | undefined)[], d = defaultAstmDelimiters): string {
    const [type, ...rest] = fields;
    const out = [String(type ?? '')];
    rest.forEach((field, index) => {
      if (type === 'H' && index === 0) {
        out.push(`${d.repeat}${d.component}${d.escape}`);
        return;
      }
      if (field === undefined) out.push('');
      else if (typeof field === 'string') out.push(escapeAstm(field, d));
      else if (field.every((f) => typeof f === 'string'))
        out.push((field as string[]).map((c) => escapeAstm(c, d)).join(d.component));
      else out.push((field as string[][]).map((r) => r.map((c) => escapeAstm(c, d)).join(d.component)).join(d.repeat));
    });
    return out.join(d.field);
  }

  /** Joins records into a transmission's text: each record followed by CR, as the low-level protocol frames them. */
  function formatAstmTransmission(records: string[]): string {
    return records.map((r) => `${r}\r`).join('');
  }

  return {
    defaultAstmDelimiters,
    astmDelimitersOf,
    unescapeAstm,
    escapeAstm,
    parseAstmRecord,
    astmValue,
    parseAstmTransmission,
    formatAstmRecord,
    formatAstmTransmission,
  };
}
