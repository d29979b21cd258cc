import {
  formatAddress,
  formatCodeableConcept,
  formatCoding,
  formatDate,
  formatDateTime,
  formatHumanName,
  formatIdentifier,
  formatPeriod,
  formatQuantity,
  formatRange,
  type Address,
  type CodeableConcept,
  type Coding,
  type HumanName,
  type Identifier,
  type Period,
  type Quantity,
  type Range,
  type Resource,
} from '@hearth/core';

import type { FhirPathEngine } from './fhirpath-lazy.js';
import { evalSimplePath } from './simple-path.js';

type Obj = Record<string, unknown>;

/** A short text for any FHIR value, recognising the common data types by their shape. */
export function formatValue(value: unknown): string {
  if (value === undefined || value === null) {
    return '';
  }
  if (Array.isArray(value)) {
    return value.map(formatValue).filter(Boolean).join(', ');
  }
  if (typeof value === 'string') {
    if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(value)) {
      return formatDateTime(value);
    }
    if (/^\d{4}-\d{2}-\d{2}$/.test(value)) {
      return formatDate(value);
    }
    return value;
  }
  if (typeof value !== 'object') {
    return String(value);
  }
  const o = value as Obj;
  if (o.resourceType) {
    return `${o.resourceType}/${o.id ?? ''}`;
  }
  if ('reference' in o || ('display' in o && !('code' in o))) {
    return String(o.display ?? o.reference ?? '');
  }
  if ('family' in o || 'given' in o) {
    return formatHumanName(o as HumanName);
  }
  if ('coding' in o || ('text' in o && Object.keys(o).length === 1)) {
    return formatCodeableConcept(o as CodeableConcept);
  }
  if ('code' in o && 'system' in o && !('value' in o)) {
    return formatCoding(o as Coding);
  }
  if ('value' in o && ('unit' in o || 'code' in o || typeof o.value === 'number')) {
    return formatQuantity(o as Quantity);
  }
  if ('low' in o || 'high' in o) {
    return formatRange(o as Range);
  }
  if ('start' in o || 'end' in o) {
    return formatPeriod(o as Period);
  }
  if ('line' in o || 'city' in o || 'postalCode' in o || 'country' in o) {
    return formatAddress(o as Address);
  }
  if ('system' in o && 'value' in o) {
    return 'use' in o && !('type' in o) && !('assigner' in o)
      ? String(o.value)
      : formatIdentifier(o as Identifier) || String(o.value);
  }
  if ('value' in o) {
    return formatValue(o.value);
  }
  if ('title' in o || 'url' in o) {
    return String(o.title ?? o.url);
  }
  return JSON.stringify(value);
}

/**
 * The values a search parameter's expression finds in a resource: plain paths at once, anything
 * else with the FHIRPath engine when given; undefined when the engine is needed and not given.
 */
export function valuesOf(
  resource: Resource,
  expression: string | undefined,
  engine?: FhirPathEngine,
): unknown[] | undefined {
  if (!expression) {
    return [];
  }
  // 'Resource.id' names the base type; the values are read from the actual type.
  const e = expression.replace(/(^|\|\s*)\(?\s*(Resource|DomainResource)\./g, `$1${resource.resourceType}.`);
  const simple = evalSimplePath(e, resource);
  if (simple || !engine) {
    return simple;
  }
  try {
    return engine(e, resource);
  } catch {
    return [];
  }
}

/** The values a search parameter's expression finds in a resource, as text ('' until the engine is there). */
export function searchParamValue(resource: Resource, expression: string | undefined, engine?: FhirPathEngine): string {
  return formatValue(valuesOf(resource, expression, engine) ?? []);
}
