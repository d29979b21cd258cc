/** Resources and common data types as short human-readable text. */
import type { Address, CodeableConcept, Coding, HumanName, Quantity, Range } from '@hearth/fhir-types';
import type { Resource } from './fhir-types.js';
import { formatHumanName, selectHumanName } from './names.js';
import { getReferenceString } from './references.js';

/** A Coding as its display, else its code. */
export function formatCoding(coding: Coding | undefined, withCode = false): string {
  if (!coding) {
    return '';
  }
  const text = coding.display ?? coding.code ?? '';
  return withCode && coding.display && coding.code ? `${coding.display} (${coding.code})` : text;
}

/** A CodeableConcept as its text, else the displays (or codes) of its codings. */
export function formatCodeableConcept(concept: CodeableConcept | undefined): string {
  if (!concept) {
    return '';
  }
  if (concept.text) {
    return concept.text;
  }
  return (concept.coding ?? [])
    .map((c) => formatCoding(c))
    .filter(Boolean)
    .join(', ');
}

/** A Quantity as '< 5.2 mg', with `precision` decimals when given; '%' sticks to its number. */
export function formatQuantity(quantity: Quantity | undefined, precision?: number): string {
  if (!quantity || (quantity.value === undefined && !quantity.unit)) {
    return '';
  }
  const value =
    quantity.value === undefined
      ? ''
      : precision === undefined
        ? String(quantity.value)
        : quantity.value.toFixed(precision);
  const unit = quantity.unit ?? quantity.code ?? '';
  const comparator = quantity.comparator ? `${quantity.comparator} ` : '';
  const sep = unit === '%' || !value ? '' : ' ';
  return `${comparator}${value}${unit ? sep + unit : ''}`.trim();
}

/** A Range as '5 - 10 mg', '>= 5 mg' or '<= 10 mg'. */
export function formatRange(range: Range | undefined, precision?: number): string {
  const low = range?.low?.value !== undefined ? range.low : undefined;
  const high = range?.high?.value !== undefined ? range.high : undefined;
  if (low && high) {
    const lowText = formatQuantity({ ...low, unit: low.unit === high.unit ? undefined : low.unit }, precision);
    return `${lowText} - ${formatQuantity(high, precision)}`;
  }
  if (low) {
    return `>= ${formatQuantity(low, precision)}`;
  }
  return high ? `<= ${formatQuantity(high, precision)}` : '';
}

export interface AddressFormatOptions {
  /** Between lines; default ', '. */
  lineSeparator?: string;
  /** Add the address's use, e.g. '(home)'. */
  use?: boolean;
}

/** An Address as '1 Main St, Springfield, IL 62701, US' (or its `text` when it has one). */
export function formatAddress(address: Address | undefined, options: AddressFormatOptions = {}): string {
  if (!address) {
    return '';
  }
  const sep = options.lineSeparator ?? ', ';
  let text = address.text;
  if (!text) {
    const cityLine = [address.city, [address.state, address.postalCode].filter(Boolean).join(' ')]
      .filter(Boolean)
      .join(', ');
    text = [...(address.line ?? []), cityLine, address.country].filter(Boolean).join(sep);
  }
  return options.use && address.use ? `${text} (${address.use})` : text;
}

const NAMED_BY_HUMAN_NAME = new Set(['Patient', 'Practitioner', 'RelatedPerson', 'Person']);

/**
 * A short name for a resource: a person's name, an organization's or bot's name, a device's
 * name, a title, a code's text; else 'Type/id'.
 */
export function getDisplayString(resource: Resource | { resourceType: string; id?: string } | undefined): string {
  if (!resource) {
    return '';
  }
  const r = resource as Resource;
  if (NAMED_BY_HUMAN_NAME.has(r.resourceType) && Array.isArray(r.name)) {
    const text = formatHumanName(selectHumanName(r.name as HumanName[]));
    if (text) {
      return text;
    }
  }
  if (r.resourceType === 'User') {
    const text = [r.firstName, r.lastName].filter((p) => typeof p === 'string' && p).join(' ');
    if (text) {
      return text;
    }
    if (typeof r.email === 'string') {
      return r.email;
    }
  }
  if (typeof r.name === 'string' && r.name) {
    return r.name;
  }
  if (r.resourceType === 'Device' && Array.isArray(r.deviceName)) {
    const deviceName = (r.deviceName as { name?: string }[]).find((d) => d.name)?.name;
    if (deviceName) {
      return deviceName;
    }
  }
  // A Subscription's reason is required and says what it is for; its criteria is the fallback.
  if (r.resourceType === 'Subscription') {
    for (const key of ['reason', 'criteria'] as const) {
      if (typeof r[key] === 'string' && r[key]) {
        return r[key] as string;
      }
    }
  }
  for (const key of ['title', 'description'] as const) {
    if (typeof r[key] === 'string' && r[key]) {
      return r[key] as string;
    }
  }
  if (r.code && typeof r.code === 'object') {
    const text = formatCodeableConcept(r.code as CodeableConcept);
    if (text) {
      return text;
    }
  }
  return getReferenceString(resource);
}
