// Encounter/{id}/$capture-charges: ChargeItems (hl7.org/fhir/R4/chargeitem.html) from what was done
// in an encounter, priced by the fee schedule. One ChargeItem per billable code, its quantity the
// number of services carrying that code, its priceOverride the total (unit price x quantity).
// Runs in one transaction; the search for the encounter's ChargeItems locks the condition, so two
// captures of one encounter do not both create the same charge.
import {
  badRequest,
  createIssue,
  fail,
  type ChargeItem,
  type CodeableConcept,
  type Coding,
  type Encounter,
  type OperationOutcomeIssue,
  type Procedure,
  type Reference,
} from '@hearth/core';
import type { Repository } from '../storage/repository.js';
import {
  BILLING_CODE_SYSTEMS,
  CAPTURE_IDENTIFIER,
  CLAIM_CODE_SYSTEMS,
  compact,
  money,
  searchAll,
  cents,
} from './common.js';
import { loadFeeSchedule, type FeeSchedule } from './fee-schedule.js';

/** A service of the encounter that carries a billable code. */
interface Service {
  coding: Coding;
  text?: string;
  reference: Reference;
  date?: string;
  performer?: Reference;
}

export interface CaptureResult {
  chargeItems: ChargeItem[];
  created: number;
  updated: number;
  unchanged: number;
  issues: OperationOutcomeIssue[];
}

/**
 * The code a service is charged under: the first coding the fee schedule knows, else the first
 * CPT/HCPCS coding, else (for procedures) a SNOMED coding; none is not billable.
 */
export function billableCoding(
  concept: CodeableConcept | undefined,
  schedule: Pick<FeeSchedule, 'knows'>,
  systems: string[],
): Coding | undefined {
  const codings = (concept?.coding ?? []).filter((c) => c.system && c.code);
  return (
    codings.find((c) => schedule.knows(c)) ??
    codings.find((c) => CLAIM_CODE_SYSTEMS.includes(c.system as string)) ??
    codings.find((c) => systems.includes(c.system as string))
  );
}

function servicesOf(
  encounter: Encounter,
  procedures: Procedure[],
  schedule: FeeSchedule,
  issues: OperationOutcomeIssue[],
): Service[] {
  const services: Service[] = [];
  const encounterRef = { reference: `Encounter/${String(encounter.id)}` };
  // The visit itself: a CPT/HCPCS evaluation and management code (or one the schedule prices) in Encounter.type.
  for (const type of encounter.type ?? []) {
    const coding = billableCoding(type, schedule, CLAIM_CODE_SYSTEMS);
    if (coding) services.push({ coding, text: type.text, reference: encounterRef, date: encounter.period?.start });
  }
  for (const p of procedures) {
    // Only what was done is charged (hl7.org/fhir/R4/valueset-event-status.html).
    if (p.status !== 'completed') continue;
    const coding = billableCoding(p.code, schedule, BILLING_CODE_SYSTEMS);
    if (!coding) {
      issues.push(
        createIssue(
          'not-supported',
          `Procedure/${String(p.id)} has no CPT, HCPCS or SNOMED CT code: it is not charged`,
          `Procedure/${String(p.id)}.code`,
          'warning',
        ),
      );
      continue;
    }
    services.push({
      coding,
      text: p.code?.text,
      reference: { reference: `Procedure/${String(p.id)}` },
      date: p.performedDateTime ?? p.performedPeriod?.start ?? encounter.period?.start,
      performer: p.performer?.[0]?.actor,
    });
  }
  return services;
}

const keyOf = (c: Coding) => `${c.system ?? ''}|${c.code ?? ''}`;

function capturedKey(item: ChargeItem): string | undefined {
  return item.identifier?.find((i) => i.system === CAPTURE_IDENTIFIER)?.value;
}

/** The ChargeItem for the services sharing one code, priced; keeps the id and fields of an existing one. */
function chargeFor(
  encounter: Encounter,
  services: Service[],
  schedule: FeeSchedule,
  now: string,
  issues: OperationOutcomeIssue[],
  existing?: ChargeItem,
): ChargeItem {
  const { coding, text } = services[0];
  const dates = services.map((s) => s.date).filter((d): d is string => !!d);
  const date = dates.sort()[0];
  const quantity = services.length;
  const draft = compact({
    ...(existing ?? {}),
    resourceType: 'ChargeItem',
    identifier: [{ system: CAPTURE_IDENTIFIER, value: keyOf(coding) }],
    status: 'billable',
    code: compact({ coding: [coding], text: text ?? coding.display }),
    subject: encounter.subject as Reference,
    context: { reference: `Encounter/${String(encounter.id)}` },
    occurrenceDateTime: date,
    performer: services[0].performer ? [{ actor: services[0].performer }] : existing?.performer,
    quantity: { value: quantity },
    // ChargeItem.service names the procedures; the visit itself is the context.
    service: services.some((s) => !s.reference.reference?.startsWith('Encounter/'))
      ? services.map((s) => s.reference).filter((r) => !r.reference?.startsWith('Encounter/'))
      : undefined,
    enteredDate: existing?.enteredDate ?? now,
  }) as ChargeItem;
  delete draft.meta;
  const price = schedule.price(coding, draft as unknown as Record<string, unknown>, date);
  if (price) {
    draft.priceOverride = money(price.unitCents * quantity, price.currency);
    draft.definitionCanonical = [price.definition];
  } else {
    delete draft.priceOverride;
    delete draft.definitionCanonical;
    issues.push(
      createIssue(
        'not-found',
        `No active ChargeItemDefinition prices ${coding.code} (${coding.system})${date ? ` on ${date.slice(0, 10)}` : ''}`,
        `ChargeItem.code`,
        'warning',
      ),
    );
  }
  return draft;
}

/** What a charge bills: compared to tell whether an update is needed. */
function billed(item: ChargeItem): string {
  return JSON.stringify([
    item.status,
    item.quantity?.value,
    cents(item.priceOverride),
    item.priceOverride?.currency,
    item.service?.map((s) => s.reference),
    item.occurrenceDateTime,
    item.definitionCanonical,
  ]);
}

export async function captureCharges(repo: Repository, encounterId: string, now = new Date()): Promise<CaptureResult> {
  const encounter = (await repo.readResource<Encounter>('Encounter', encounterId)).resource;
  if (!encounter.subject?.reference?.startsWith('Patient/')) {
    fail(badRequest('The encounter has no patient (Encounter.subject): charges need one', 'Encounter.subject'));
  }
  const ref = `Encounter/${encounterId}`;
  const schedule = await loadFeeSchedule(repo);
  const procedures = await searchAll<Procedure>(repo, 'Procedure', new URLSearchParams({ encounter: ref }).toString());
  const issues: OperationOutcomeIssue[] = [];
  const byCode = new Map<string, Service[]>();
  for (const s of servicesOf(encounter, procedures, schedule, issues)) {
    byCode.set(keyOf(s.coding), [...(byCode.get(keyOf(s.coding)) ?? []), s]);
  }
  const stamp = now.toISOString();
  return repo.withTransaction(async (tx) => {
    const current = await searchAll<ChargeItem>(tx, 'ChargeItem', new URLSearchParams({ context: ref }).toString());
    const result: CaptureResult = { chargeItems: [], created: 0, updated: 0, unchanged: 0, issues };
    const seen = new Set<string>();
    for (const item of current) {
      const key = capturedKey(item);
      // Charges entered by hand, and charges already billed or voided, are not the capture's to change.
      if (!key || item.status === 'billed' || item.status === 'entered-in-error') {
        if (key) seen.add(key);
        result.unchanged++;
        result.chargeItems.push(item);
        continue;
      }
      seen.add(key);
      const services = byCode.get(key);
      const next: ChargeItem = services
        ? chargeFor(encounter, services, schedule, stamp, issues, item)
        : { ...item, status: 'aborted' };
      if (billed(next) === billed(item)) {
        result.unchanged++;
        result.chargeItems.push(item);
      } else {
        result.updated++;
        result.chargeItems.push((await tx.updateResource({ ...next, id: item.id })).resource);
      }
    }
    for (const [key, services] of byCode) {
      if (seen.has(key)) continue;
      result.created++;
      result.chargeItems.push(
        (await tx.createResource(chargeFor(encounter, services, schedule, stamp, issues))).resource,
      );
    }
    return result;
  });
}
