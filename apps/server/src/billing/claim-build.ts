// Encounter/{id}/$build-claim: a draft professional Claim (hl7.org/fhir/R4/claim.html) from an
// encounter's billable ChargeItems, its encounter-diagnosis Conditions and the patient's Coverage.
import {
  conflict,
  fail,
  unprocessable,
  type ChargeItem,
  type Claim,
  type ClaimItem,
  type Condition,
  type Coverage,
  type Encounter,
  type Reference,
} from '@hearth/core';
import type { Repository } from '../storage/repository.js';
import { cents, compact, ICD10CM, idOf, money, searchAll } from './common.js';

export interface BuildOptions {
  /** Coverage/{id}; else the patient's first active Coverage by order. */
  coverage?: string;
  /** The billing provider; else Encounter.serviceProvider, else its first practitioner. */
  provider?: string;
}

const PROVIDER_TYPES = ['Practitioner', 'PractitionerRole', 'Organization'];

/** The coverage billed: the one named, else the active ones of the patient, those holding the date first, by order. */
async function coverageFor(
  repo: Repository,
  patient: string,
  date: string | undefined,
  named?: string,
): Promise<Coverage> {
  if (named) {
    const id = idOf(named, 'Coverage');
    if (!id) fail(unprocessable('coverage must be a reference Coverage/{id}', 'coverage'));
    const coverage = (await repo.readResource<Coverage>('Coverage', id)).resource;
    if (coverage.beneficiary?.reference !== patient) {
      fail(unprocessable(`Coverage/${id} does not cover ${patient} (Coverage.beneficiary)`, 'coverage'));
    }
    return coverage;
  }
  const all = await searchAll<Coverage>(
    repo,
    'Coverage',
    new URLSearchParams({ beneficiary: patient, status: 'active' }).toString(),
  );
  const day = date?.slice(0, 10);
  const holds = (c: Coverage) =>
    !day ||
    ((!c.period?.start || c.period.start.slice(0, 10) <= day) && (!c.period?.end || c.period.end.slice(0, 10) >= day));
  all.sort((a, b) => Number(holds(b)) - Number(holds(a)) || (a.order ?? 1e9) - (b.order ?? 1e9));
  if (!all[0]) {
    fail(
      unprocessable(
        `${patient} has no active Coverage: add the patient's insurance before building a claim`,
        'coverage',
      ),
    );
  }
  return all[0];
}

function providerFor(encounter: Encounter, named?: string): Reference {
  if (named) {
    if (!PROVIDER_TYPES.some((t) => idOf(named, t))) {
      fail(unprocessable(`provider must be a reference to ${PROVIDER_TYPES.join(', ')}`, 'provider'));
    }
    return { reference: named };
  }
  if (encounter.serviceProvider?.reference) return { reference: encounter.serviceProvider.reference };
  const individual = encounter.participant?.find((p) =>
    PROVIDER_TYPES.some((t) => idOf(p.individual?.reference, t)),
  )?.individual;
  if (individual?.reference) return { reference: individual.reference };
  fail(
    unprocessable(
      'The encounter names no provider (Encounter.serviceProvider or a practitioner participant): give a provider parameter',
      'Encounter.serviceProvider',
    ),
  );
}

/** Encounter.diagnosis (by rank) first, then the other encounter-diagnosis Conditions of the encounter. */
async function diagnosesOf(repo: Repository, encounter: Encounter): Promise<Condition[]> {
  const ref = `Encounter/${String(encounter.id)}`;
  const found = await searchAll<Condition>(
    repo,
    'Condition',
    new URLSearchParams({ encounter: ref, category: 'encounter-diagnosis' }).toString(),
  );
  const listed = [...(encounter.diagnosis ?? [])]
    .sort((a, b) => (a.rank ?? 1e9) - (b.rank ?? 1e9))
    .map((d) => idOf(d.condition?.reference, 'Condition'))
    .filter((id): id is string => !!id);
  const missing = listed.filter((id) => !found.some((c) => c.id === id));
  const extra = missing.length
    ? (await repo.readResources('Condition', missing)).map((r) => r.resource as Condition)
    : [];
  const all = [...found, ...extra].filter(
    (c) => c.verificationStatus?.coding?.[0]?.code !== 'entered-in-error' && (c.code?.coding?.length || c.code?.text),
  );
  const rank = (c: Condition) => {
    const i = listed.indexOf(String(c.id));
    return i < 0 ? 1e9 : i;
  };
  return all.sort(
    (a, b) => rank(a) - rank(b) || String(a.recordedDate ?? '').localeCompare(String(b.recordedDate ?? '')),
  );
}

/** The claim's item for one ChargeItem: unit price from its total over its quantity. */
function itemOf(charge: ChargeItem, sequence: number, encounterRef: string, pointers: number[]): ClaimItem {
  const quantity = charge.quantity?.value ?? 1;
  const total = charge.priceOverride ? cents(charge.priceOverride) : undefined;
  const unit = total === undefined ? undefined : Math.round(total / quantity);
  const currency = charge.priceOverride?.currency ?? 'USD';
  return compact({
    sequence,
    diagnosisSequence: pointers.length ? pointers : undefined,
    productOrService: charge.code as ClaimItem['productOrService'],
    servicedDate: charge.occurrenceDateTime?.slice(0, 10),
    quantity: { value: quantity },
    unitPrice: unit === undefined ? undefined : money(unit, currency),
    net: unit === undefined ? undefined : money(unit * quantity, currency),
    encounter: [{ reference: encounterRef }],
  }) as ClaimItem;
}

export async function buildClaim(
  repo: Repository,
  encounterId: string,
  options: BuildOptions,
  now = new Date(),
): Promise<Claim> {
  const encounter = (await repo.readResource<Encounter>('Encounter', encounterId)).resource;
  const patient = encounter.subject?.reference;
  if (!patient || !idOf(patient, 'Patient')) {
    fail(unprocessable('The encounter has no patient (Encounter.subject)', 'Encounter.subject'));
  }
  const ref = `Encounter/${encounterId}`;
  const coverage = await coverageFor(repo, patient, encounter.period?.start, options.coverage);
  const insurer = coverage.payor?.find((p) => idOf(p.reference, 'Organization'));
  if (!insurer) {
    fail(unprocessable(`Coverage/${String(coverage.id)} has no payer Organization (Coverage.payor)`, 'Coverage.payor'));
  }
  const provider = providerFor(encounter, options.provider);
  const diagnoses = await diagnosesOf(repo, encounter);
  return repo.withTransaction(async (tx) => {
    const claims = await searchAll<Claim>(tx, 'Claim', new URLSearchParams({ encounter: ref }).toString());
    const submitted = claims.find((c) => c.status === 'active');
    if (submitted) {
      fail(conflict(`Claim/${String(submitted.id)} of ${ref} was submitted: it cannot be built again`));
    }
    const charges = (await searchAll<ChargeItem>(tx, 'ChargeItem', new URLSearchParams({ context: ref }).toString()))
      .filter((c) => c.status === 'billable')
      .sort(
        (a, b) =>
          String(a.occurrenceDateTime ?? '').localeCompare(String(b.occurrenceDateTime ?? '')) ||
          String(a.id).localeCompare(String(b.id)),
      );
    if (charges.length === 0) {
      fail(
        unprocessable(`${ref} has no billable ChargeItems: capture its charges first ($capture-charges)`, 'ChargeItem'),
      );
    }
    const draft = claims.find((c) => c.status === 'draft');
    // Up to four diagnosis pointers a line, as the CMS-1500's box 24E has room for.
    const pointers = diagnoses.slice(0, 4).map((_, i) => i + 1);
    const item = charges.map((c, i) => itemOf(c, i + 1, ref, pointers));
    const currency = item.find((i) => i.net)?.net?.currency ?? 'USD';
    const total = item.reduce((sum, i) => sum + cents(i.net), 0);
    const dates = item
      .map((i) => i.servicedDate)
      .filter((d): d is string => !!d)
      .sort();
    const claim = compact({
      resourceType: 'Claim',
      id: draft?.id,
      status: 'draft',
      type: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/claim-type', code: 'professional' }] },
      use: 'claim',
      patient: { reference: patient },
      billablePeriod: compact({
        start: encounter.period?.start ?? dates[0],
        end: encounter.period?.end ?? dates[dates.length - 1],
      }),
      created: now.toISOString(),
      insurer: { reference: insurer.reference as string, display: insurer.display },
      provider,
      priority: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/processpriority', code: 'normal' }] },
      careTeam: careTeamOf(encounter),
      diagnosis: diagnoses.length
        ? diagnoses.map((c, i) => ({ sequence: i + 1, diagnosisCodeableConcept: preferIcd(c) }))
        : undefined,
      insurance: [{ sequence: 1, focal: true, coverage: { reference: `Coverage/${String(coverage.id)}` } }],
      item,
      total: money(total, currency),
    }) as Claim;
    const saved = draft ? await tx.updateResource(claim) : await tx.createResource(claim);
    return saved.resource;
  });
}

function careTeamOf(encounter: Encounter): Claim['careTeam'] {
  const practitioner = encounter.participant?.find((p) => idOf(p.individual?.reference, 'Practitioner'))?.individual;
  if (!practitioner?.reference) return undefined;
  return [
    {
      sequence: 1,
      provider: { reference: practitioner.reference, display: practitioner.display },
      role: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/claimcareteamrole', code: 'primary' }] },
    },
  ];
}

/** The condition's code with its ICD-10-CM coding first (claims are coded in ICD-10-CM). */
function preferIcd(c: Condition): Condition['code'] {
  const coding = [...(c.code?.coding ?? [])].sort(
    (a, b) => Number(b.system === ICD10CM) - Number(a.system === ICD10CM),
  );
  return compact({ ...c.code, coding: coding.length ? coding : undefined });
}
