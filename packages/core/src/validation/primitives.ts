/**
 * Checks of FHIR primitive values in their JSON form (hl7.org/fhir/R4/datatypes.html#primitive
 * and hl7.org/fhir/R4/json.html#primitive). The regular expressions are the R4 ones, anchored.
 */

const YEAR = '([0-9]([0-9]([0-9][1-9]|[1-9]0)|[1-9]00)|[1-9]000)';
const MONTH = '(0[1-9]|1[0-2])';
const DAY = '(0[1-9]|[1-2][0-9]|3[0-1])';
const TIME = '([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\\.[0-9]+)?';
const ZONE = '(Z|(\\+|-)((0[0-9]|1[0-3]):[0-5][0-9]|14:00))';
// The spec's regexes use XML Schema's \s, which is only space, tab, CR and LF (JavaScript's \s
// also matches U+00A0 and other Unicode spaces, which FHIR codes and URIs may contain).
const WS = '[ \\t\\n\\r]';
const NOT_WS = '[^ \\t\\n\\r]';
const ONLY_WS = /^[ \t\n\r]*$/;

export const validationRegexes = {
  base64Binary: new RegExp(`^(${WS}*([0-9a-zA-Z+/=]){4}${WS}*)+$`),
  boolean: /^(true|false)$/,
  canonical: new RegExp(`^${NOT_WS}*$`),
  code: new RegExp(`^${NOT_WS}+(${WS}${NOT_WS}+)*$`),
  date: new RegExp(`^${YEAR}(-${MONTH}(-${DAY})?)?$`),
  dateTime: new RegExp(`^${YEAR}(-${MONTH}(-${DAY}(T${TIME}${ZONE})?)?)?$`),
  decimal: /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/,
  id: /^[A-Za-z0-9\-.]{1,64}$/,
  instant: new RegExp(`^${YEAR}-${MONTH}-${DAY}T${TIME}${ZONE}$`),
  integer: /^-?([0]|([1-9][0-9]*))$/,
  oid: /^urn:oid:[0-2](\.(0|[1-9][0-9]*))+$/,
  positiveInt: /^\+?[1-9][0-9]*$/,
  /** Any character but the controls below U+0020 other than tab, carriage return and line feed. */
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  string: /^[^\u0000-\u0008\u000B\u000C\u000E-\u001F]+$/,
  time: new RegExp(`^${TIME}$`),
  unsignedInt: /^([0]|([1-9][0-9]*))$/,
  uri: new RegExp(`^${NOT_WS}*$`),
  url: new RegExp(`^${NOT_WS}*$`),
  uuid: /^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
} as const;

/** The primitive types of FHIR R4 (hl7.org/fhir/R4/datatypes.html#primitive), by their type names. */
export const FHIR_PRIMITIVE_TYPES: ReadonlySet<string> = new Set([
  'boolean',
  'integer',
  'string',
  'decimal',
  'uri',
  'url',
  'canonical',
  'base64Binary',
  'instant',
  'date',
  'dateTime',
  'time',
  'code',
  'oid',
  'id',
  'markdown',
  'unsignedInt',
  'positiveInt',
  'uuid',
  'xhtml',
]);

/** hl7.org/fhir/R4/datatypes.html#string: 1 MB, counted in characters (1024 * 1024). */
const MAX_STRING_LENGTH = 1024 * 1024;

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

/** Types whose JSON form is a number. */
const NUMBER_TYPES = new Set(['decimal', 'integer', 'positiveInt', 'unsignedInt']);

/** Large base64 content (documents, images) is checked with a scan, not a backtracking regex. */
function isBase64(value: string): boolean {
  let count = 0;
  let padding = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 32 || c === 9 || c === 10 || c === 13) {
      continue;
    }
    const isData = (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 47;
    if (c === 61) {
      padding++;
    } else if (!isData || padding > 0) {
      return false;
    }
    count++;
  }
  return count > 0 && count % 4 === 0 && padding <= 2;
}

function describe(value: unknown): string {
  if (typeof value === 'string') {
    return JSON.stringify(value.length > 40 ? value.slice(0, 40) + '...' : value);
  }
  return Array.isArray(value)
    ? 'an array'
    : value === null
      ? 'null'
      : typeof value === 'object'
        ? 'an object'
        : String(value);
}

/**
 * Returns why `value` is not a valid JSON value of the primitive type `type`, or undefined if it
 * is. Unknown type names are accepted (the schema decides which names are primitives).
 */
export function checkPrimitive(type: string, value: unknown): string | undefined {
  if (type === 'boolean') {
    return typeof value === 'boolean' ? undefined : `Expected a boolean (true or false), got ${describe(value)}`;
  }
  if (NUMBER_TYPES.has(type)) {
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      return `Expected a number for ${type}, got ${describe(value)}`;
    }
    if (type === 'decimal') {
      return undefined;
    }
    if (!Number.isInteger(value) || value < INT32_MIN || value > INT32_MAX) {
      return `Invalid ${type} ${value}: expected a 32-bit integer`;
    }
    if (type === 'positiveInt' && value < 1) {
      return `Invalid positiveInt ${value}: expected 1 or more`;
    }
    if (type === 'unsignedInt' && value < 0) {
      return `Invalid unsignedInt ${value}: expected 0 or more`;
    }
    return undefined;
  }
  if (typeof value !== 'string') {
    return `Expected a string for ${type}, got ${describe(value)}`;
  }
  if (value.length === 0) {
    return `Invalid empty ${type}: a primitive is either absent or has a value`;
  }
  if (value.length > MAX_STRING_LENGTH && type !== 'base64Binary' && type !== 'xhtml') {
    // datatypes.html#string: "Strings SHALL NOT exceed 1MB in size" (content travels as base64Binary).
    return `Invalid ${type}: ${value.length} characters, more than the 1 MB a string may hold`;
  }
  switch (type) {
    case 'string':
    case 'markdown':
      if (ONLY_WS.test(value)) {
        return `Invalid ${type}: it has only whitespace`;
      }
      return validationRegexes.string.test(value) ? undefined : `Invalid ${type}: it contains control characters`;
    case 'xhtml':
      // The narrative is a <div> in the XHTML namespace (hl7.org/fhir/R4/narrative.html#xhtml).
      return /^\s*<div[\s>/]/.test(value) && /(<\/div>|\/>)\s*$/.test(value)
        ? undefined
        : 'Invalid xhtml: expected a <div> element';
    case 'base64Binary':
      return isBase64(value) ? undefined : `Invalid base64Binary ${describe(value)}`;
    case 'id':
    case 'code':
    case 'date':
    case 'dateTime':
    case 'instant':
    case 'time':
    case 'uri':
    case 'url':
    case 'canonical':
    case 'oid':
    case 'uuid':
      return validationRegexes[type].test(value) ? undefined : `Invalid ${type} ${describe(value)}`;
    default:
      return undefined;
  }
}
