// The inputs of the billing operations: a Parameters body (POST) or the query string. Each value
// is checked for its type here, so that a wrong one is a 400 naming the parameter.
import { badRequest, fail, unprocessable } from '@hearth/core';
import type { OperationInput } from '../operations/types.js';
import type { BuildOptions } from './claim-build.js';
import type { ItemAnswer, ResponseInput } from './claim-response.js';

type Json = Record<string, unknown>;

interface Parameter {
  name: string;
  value: unknown;
  part?: Parameter[];
  at: string;
}

const VALUE_KEYS = [
  'valueString',
  'valueCode',
  'valueReference',
  'valueDecimal',
  'valueInteger',
  'valuePositiveInt',
  'valueUnsignedInt',
  'valueDate',
  'valueMoney',
];

function parse(list: unknown, at: string): Parameter[] {
  if (list === undefined) return [];
  if (!Array.isArray(list)) fail(badRequest(`${at} must be a list`, at));
  return list.map((p: Json, i) => {
    const where = `${at}[${i}]`;
    if (!p || typeof p !== 'object' || typeof p.name !== 'string')
      fail(badRequest('Each parameter needs a name', where));
    const key = VALUE_KEYS.find((k) => p[k] !== undefined);
    return {
      name: p.name,
      value: key ? p[key] : undefined,
      part: p.part ? parse(p.part, `${where}.part`) : undefined,
      at: where,
    };
  });
}

/** The parameters of a request: the query string's, then the body's (a Parameters resource). */
export function parametersOf(input: Pick<OperationInput, 'query' | 'body' | 'method'>, operation: string): Parameter[] {
  const out: Parameter[] = [...input.query]
    .filter(([n]) => !n.startsWith('_'))
    .map(([name, value]) => ({ name, value, at: name }));
  const body = input.body as Json | undefined;
  if (input.method === 'POST' && body !== undefined && body !== null && !(typeof body === 'string' && body === '')) {
    if (typeof body !== 'object' || Buffer.isBuffer(body) || body.resourceType !== 'Parameters') {
      fail(badRequest(`${operation} takes a Parameters resource in a POST body`));
    }
    out.push(...parse(body.parameter, 'Parameters.parameter'));
  }
  return out;
}

function only(params: Parameter[], allowed: string[], operation: string): void {
  for (const p of params) {
    if (!allowed.includes(p.name)) {
      fail(
        unprocessable(
          `${operation}: parameter "${p.name}" is not supported (use ${allowed.join(', ') || 'none'})`,
          p.at,
        ),
      );
    }
  }
}

function stringOf(p: Parameter | undefined): string | undefined {
  if (!p) return undefined;
  const v = p.value as { reference?: unknown } | string | undefined;
  const s = typeof v === 'object' && v !== null ? v.reference : v;
  if (typeof s !== 'string' || !s) fail(badRequest(`${p.name} must be a non-empty string or reference`, p.at));
  return s;
}

/** A decimal amount in cents: a number or numeric string, not negative, at most two decimals. */
function centsOf(p: Parameter | undefined, name: string, at: string): number | undefined {
  if (!p) return undefined;
  const raw = typeof p.value === 'object' && p.value !== null ? (p.value as { value?: unknown }).value : p.value;
  const n = typeof raw === 'string' && /^\d+(\.\d{1,2})?$/.test(raw.trim()) ? Number(raw) : raw;
  if (typeof n !== 'number' || !Number.isFinite(n) || n < 0 || Math.abs(n * 100 - Math.round(n * 100)) > 1e-6) {
    fail(badRequest(`${name} must be an amount of zero or more with at most two decimals`, p.at || at));
  }
  return Math.round(n * 100);
}

export function noParameters(input: OperationInput, operation: string): void {
  only(parametersOf(input, operation), [], operation);
}

export function buildOptions(input: OperationInput): BuildOptions {
  const params = parametersOf(input, '$build-claim');
  only(params, ['coverage', 'provider'], '$build-claim');
  return {
    coverage: stringOf(params.find((p) => p.name === 'coverage')),
    provider: stringOf(params.find((p) => p.name === 'provider')),
  };
}

const OUTCOMES = ['complete', 'partial', 'error'] as const;

export function responseInput(input: OperationInput): ResponseInput {
  const params = parametersOf(input, '$record-response');
  only(params, ['outcome', 'disposition', 'paymentDate', 'item'], '$record-response');
  const outcome = stringOf(params.find((p) => p.name === 'outcome')) ?? 'complete';
  if (!(OUTCOMES as readonly string[]).includes(outcome)) {
    fail(badRequest(`outcome must be one of ${OUTCOMES.join(', ')}`, 'outcome'));
  }
  const paymentDate = stringOf(params.find((p) => p.name === 'paymentDate'));
  if (paymentDate !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(paymentDate)) {
    fail(badRequest('paymentDate must be a date YYYY-MM-DD', 'paymentDate'));
  }
  const items: ItemAnswer[] = params
    .filter((p) => p.name === 'item')
    .map((p) => {
      const parts = p.part ?? [];
      only(parts, ['sequence', 'paid', 'adjustment', 'reason'], '$record-response item');
      const part = (name: string) => parts.find((q) => q.name === name);
      const sequence = Number(part('sequence')?.value);
      if (!Number.isInteger(sequence) || sequence < 1) {
        fail(badRequest('item.sequence must be a positive integer (the Claim.item.sequence)', `${p.at}.part`));
      }
      const paid = centsOf(part('paid'), 'item.paid', `${p.at}.part`);
      if (paid === undefined) fail(badRequest('Each item needs paid (the amount the payer paid)', `${p.at}.part`));
      return {
        sequence,
        paid,
        adjustment: centsOf(part('adjustment'), 'item.adjustment', `${p.at}.part`) ?? 0,
        reason: stringOf(part('reason')),
      };
    });
  return {
    outcome: outcome as ResponseInput['outcome'],
    disposition: stringOf(params.find((p) => p.name === 'disposition')),
    paymentDate,
    items,
  };
}
