/**
 * One search box for patients that reads what was typed: a birth date (2024-01-31, 31/01/2024 or
 * 31.01.2024, day first), a phone number or an identifier (digits, with or without separators:
 * either may match, through `_filter`, hl7.org/fhir/R4/search_filter.html), an identifier with its
 * system (`system|value`) or letters and digits together (MRN-001, a UUID), and otherwise a name.
 */
export interface PatientQuery {
  /** What the box took the text for. */
  kind: 'name' | 'birthdate' | 'identifier' | 'phone-or-identifier';
  /** The search parameters (Patient?...). */
  params: Record<string, string>;
  /** How it reads, for a hint under the box. */
  description: string;
}

const quoted = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

export function interpretPatientQuery(input: string): PatientQuery | undefined {
  const text = input.trim();
  if (!text) return undefined;
  const iso = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  const dayFirst = /^(\d{1,2})[/.](\d{1,2})[/.](\d{4})$/.exec(text);
  if (iso || dayFirst) {
    const [y, m, d] = iso ? [iso[1], iso[2], iso[3]] : [dayFirst![3], dayFirst![2], dayFirst![1]];
    const date = `${y}-${m.padStart(2, '0')}-${d.padStart(2, '0')}`;
    // A real calendar day (31/02 is not one).
    const day = new Date(Date.UTC(Number(y), Number(m) - 1, Number(d)));
    if (day.toISOString().slice(0, 10) === date) {
      return { kind: 'birthdate', params: { birthdate: date }, description: `Born on ${date}` };
    }
  }
  if (text.includes('|')) {
    return { kind: 'identifier', params: { identifier: text }, description: `Identifier ${text}` };
  }
  const digits = text.replace(/\D/g, '');
  if (/^\+?[\d\s().-]+$/.test(text) && digits.length >= 3) {
    return {
      kind: 'phone-or-identifier',
      params: { _filter: `phone eq ${quoted(text)} or identifier eq ${quoted(text)}` },
      description: `Phone number or identifier ${text}`,
    };
  }
  if (/\d/.test(text) && !/\s/.test(text)) {
    return { kind: 'identifier', params: { identifier: text }, description: `Identifier ${text}` };
  }
  return { kind: 'name', params: { name: text }, description: `Name contains "${text}"` };
}
