// The fee schedule: the project's active ChargeItemDefinitions (hl7.org/fhir/R4/chargeitemdefinition.html),
// each pricing the codes of its `code`. A definition applies to a charge when its effective period
// holds the date of service and its applicability expressions (text/fhirpath, evaluated on the
// ChargeItem being priced) are all true; its propertyGroups add up the price components.
import fhirpath from 'fhirpath';
import r4Model from 'fhirpath/fhir-context/r4/index.js';
import type { ChargeItemDefinition, Coding, Resource } from '@hearth/core';
import type { Repository } from '../storage/repository.js';
import { searchAll } from './common.js';

type Json = Record<string, unknown>;

export interface Price {
  /** The price of one unit, in cents. */
  unitCents: number;
  currency: string;
  /** The definition that priced it (its canonical URL, else ChargeItemDefinition/{id}). */
  definition: string;
}

export interface FeeSchedule {
  /** The price of one unit of this code for this charge, or undefined when nothing prices it. */
  price(coding: Coding, charge: Json, serviceDate: string | undefined): Price | undefined;
  /** Whether any definition names this code (whatever its applicability). */
  knows(coding: Coding): boolean;
}

/** Reads the active definitions once per operation. */
export async function loadFeeSchedule(repo: Repository): Promise<FeeSchedule> {
  const definitions = await searchAll<ChargeItemDefinition>(repo, 'ChargeItemDefinition', 'status=active');
  // The newest definition first: a schedule revised for a new year wins over last year's.
  definitions.sort((a, b) => String(b.date ?? '').localeCompare(String(a.date ?? '')) || idCompare(a, b));
  const byCode = new Map<string, ChargeItemDefinition[]>();
  for (const d of definitions) {
    for (const c of d.code?.coding ?? []) {
      const key = `${c.system ?? ''}|${c.code ?? ''}`;
      byCode.set(key, [...(byCode.get(key) ?? []), d]);
    }
  }
  return {
    knows: (coding) => byCode.has(`${coding.system ?? ''}|${coding.code ?? ''}`),
    price(coding, charge, serviceDate) {
      for (const d of byCode.get(`${coding.system ?? ''}|${coding.code ?? ''}`) ?? []) {
        if (!inEffect(d, serviceDate) || !allTrue(d.applicability as Json[] | undefined, charge)) continue;
        const price = priceOf(d, charge);
        if (price) return price;
      }
      return undefined;
    },
  };
}

function idCompare(a: Resource, b: Resource): number {
  return String(a.id).localeCompare(String(b.id));
}

function inEffect(d: ChargeItemDefinition, date: string | undefined): boolean {
  const period = d.effectivePeriod;
  if (!period || !date) return true;
  const day = date.slice(0, 10);
  if (period.start && day < period.start.slice(0, 10)) return false;
  if (period.end && day > period.end.slice(0, 10)) return false;
  return true;
}

/**
 * Every applicability condition holds. A condition that is not FHIRPath, or an expression that
 * fails or gives no boolean, does not hold: a fee that cannot be shown to apply is not charged.
 */
function allTrue(conditions: Json[] | undefined, charge: Json): boolean {
  for (const c of conditions ?? []) {
    if (c.expression === undefined) continue;
    if (c.language !== 'text/fhirpath' || typeof c.expression !== 'string') return false;
    try {
      const result = fhirpath.evaluate(charge, c.expression, { chargeItem: charge }, r4Model) as unknown[];
      if (result.length !== 1 || result[0] !== true) return false;
    } catch {
      return false;
    }
  }
  return true;
}

/**
 * The unit price from the applicable property groups: base amounts (times their factor), plus
 * surcharges and tax, minus deductions and discounts (an amount, or a factor of the base);
 * informational components count for nothing. No base amount: no price.
 */
function priceOf(d: ChargeItemDefinition, charge: Json): Price | undefined {
  let base = 0;
  let hasBase = false;
  let currency: string | undefined;
  const others: { type: string; amount?: number; factor?: number }[] = [];
  for (const group of d.propertyGroup ?? []) {
    if (!allTrue(group.applicability as Json[] | undefined, charge)) continue;
    for (const component of group.priceComponent ?? []) {
      const amount = component.amount ? Math.round((component.amount.value ?? 0) * 100) : undefined;
      currency ??= component.amount?.currency;
      if (component.type === 'base') {
        if (amount === undefined) continue;
        base += Math.round(amount * (component.factor ?? 1));
        hasBase = true;
      } else if (component.type !== 'informational') {
        others.push({ type: component.type, amount, factor: component.factor });
      }
    }
  }
  if (!hasBase) return undefined;
  let unit = base;
  for (const o of others) {
    const value = o.amount ?? Math.round(base * (o.factor ?? 0));
    unit += o.type === 'deduction' || o.type === 'discount' ? -Math.abs(value) : value;
  }
  return {
    unitCents: Math.max(0, unit),
    currency: currency ?? 'USD',
    definition: d.url ? `${d.url}${d.version ? `|${d.version}` : ''}` : `ChargeItemDefinition/${String(d.id)}`,
  };
}
