// What a CMS-1500 shows, read from the Claim and the resources it points at through the caller's
// repository, formatted for claim-pdf.ts. Dates print MM/DD/YYYY and amounts with two decimals, as
// the form's boxes expect.
import {
  formatAddress,
  formatCodeableConcept,
  formatGivenName,
  getDisplayString,
  selectHumanName,
  type Address,
  type Claim,
  type Coverage,
  type Identifier,
  type Organization,
  type Patient,
  type Resource,
} from '@hearth/core';
import type { Repository } from '../storage/repository.js';
import { cents, CLAIM_CODE_SYSTEMS, ICD10CM, idOf, NPI } from './common.js';
import type { Balance } from './claim-response.js';
import type { PrintedClaim, PrintedLine } from './claim-pdf.js';

const TAX_ID = ['urn:oid:2.16.840.1.113883.4.4', 'http://hl7.org/fhir/sid/us-ein'];

async function read<T extends Resource>(repo: Repository, ref: string | undefined): Promise<T | undefined> {
  const [type] = (ref ?? '').split('/');
  const id = idOf(ref, type);
  if (!id) return undefined;
  return (await repo.readResources(type, [id]))[0]?.resource as T | undefined;
}

/** '2025-03-14' as '03/14/2025'. */
export function formDate(date: string | undefined): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(date ?? '');
  return m ? `${m[2]}/${m[3]}/${m[1]}` : '';
}

const amount = (c: number) => (c / 100).toFixed(2);

/** 'DOE, JANE Q': the form's name order, upper case. */
function formName(person: Resource | undefined): string {
  const name = selectHumanName((person as Patient | undefined)?.name);
  if (!name) return getDisplayString(person);
  return [name.family, formatGivenName(name)].filter(Boolean).join(', ').toUpperCase();
}

function addressLines(address: Address | undefined): string[] {
  if (!address) return [];
  const city = [address.city, [address.state, address.postalCode].filter(Boolean).join(' ')].filter(Boolean).join(', ');
  return address.text ? [formatAddress(address)] : [(address.line ?? []).join(' '), city].filter(Boolean);
}

const identifierOf = (resource: Resource | undefined, systems: string[]) =>
  ((resource?.identifier as Identifier[] | undefined) ?? []).find((i) => systems.includes(i.system ?? ''))?.value;

/** The claim's line for one item: its CPT/HCPCS code first, the diagnosis pointers as letters. */
function lineOf(item: NonNullable<Claim['item']>[number], claim: Claim, npi: string | undefined): PrintedLine {
  const coding =
    item.productOrService.coding?.find((c) => CLAIM_CODE_SYSTEMS.includes(c.system ?? '')) ??
    item.productOrService.coding?.[0];
  const from = item.servicedDate ?? item.servicedPeriod?.start ?? claim.billablePeriod?.start;
  const to = item.servicedDate ?? item.servicedPeriod?.end ?? from;
  return {
    from: formDate(from),
    to: formDate(to),
    place: item.locationCodeableConcept?.coding?.[0]?.code,
    code: coding?.code ?? formatCodeableConcept(item.productOrService),
    modifiers: (item.modifier ?? [])
      .map((m) => m.coding?.[0]?.code)
      .filter(Boolean)
      .join(' '),
    pointers: (item.diagnosisSequence ?? []).map((s) => 'ABCDEFGHIJKL'[s - 1] ?? '').join(''),
    charges: amount(cents(item.net)),
    units: String(item.quantity?.value ?? 1),
    npi,
  };
}

export async function printedClaim(repo: Repository, claim: Claim, balance: Balance): Promise<PrintedClaim> {
  const coverageRef = (claim.insurance ?? []).find((i) => i.focal)?.coverage?.reference;
  const [patient, coverage, payer, provider] = await Promise.all([
    read<Patient>(repo, claim.patient?.reference),
    read<Coverage>(repo, coverageRef),
    read<Organization>(repo, claim.insurer?.reference),
    read<Resource>(repo, claim.provider?.reference),
  ]);
  const subscriber = await read<Resource>(repo, coverage?.subscriber?.reference ?? coverage?.policyHolder?.reference);
  const rendering = await read<Resource>(repo, claim.careTeam?.[0]?.provider?.reference);
  const renderingNpi = identifierOf(rendering ?? provider, [NPI]);
  const groupClass = coverage?.class?.find((c) => c.type.coding?.some((t) => t.code === 'group'));
  const planClass = coverage?.class?.find((c) => c.type.coding?.some((t) => t.code === 'plan'));
  const providerAddress = (provider?.address as Address[] | undefined)?.[0];
  const telecom = (r: Resource | undefined) =>
    ((r?.telecom as { system?: string; value?: string }[] | undefined) ?? []).find((t) => t.system === 'phone')?.value;
  const diagnoses = (claim.diagnosis ?? []).map((d) => {
    const concept = d.diagnosisCodeableConcept;
    const coding = concept?.coding?.find((c) => c.system === ICD10CM) ?? concept?.coding?.[0];
    return coding?.code ?? formatCodeableConcept(concept) ?? d.diagnosisReference?.reference ?? '';
  });
  return {
    claimId: String(claim.id),
    payerName: getDisplayString(payer) || claim.insurer?.display || claim.insurer?.reference || '',
    payerAddress: addressLines(payer?.address?.[0]),
    insuranceType: formatCodeableConcept(coverage?.type) || 'Group health plan',
    memberId: coverage?.subscriberId ?? coverage?.identifier?.[0]?.value ?? '',
    patientName: formName(patient),
    patientBirthDate: formDate(patient?.birthDate),
    patientSex: patient?.gender === 'male' ? 'M' : patient?.gender === 'female' ? 'F' : '',
    patientAddress: addressLines(patient?.address?.[0]),
    patientPhone: telecom(patient),
    insuredName: subscriber ? formName(subscriber) : formName(patient),
    relationship: formatCodeableConcept(coverage?.relationship) || coverage?.relationship?.coding?.[0]?.code || '',
    groupNumber: groupClass?.value,
    planName: planClass?.name ?? planClass?.value ?? groupClass?.name,
    diagnoses,
    lines: (claim.item ?? []).map((item) => lineOf(item, claim, renderingNpi)),
    taxId: identifierOf(provider, TAX_ID),
    accountNumber:
      patient?.identifier?.find((i) => i.type?.coding?.some((c) => c.code === 'MR'))?.value ??
      patient?.identifier?.[0]?.value ??
      String(patient?.id ?? ''),
    totalCharge: amount(cents(balance.total)),
    amountPaid: amount(cents(balance.paid)),
    balance: amount(cents(balance.balance)),
    signedBy: rendering ? getDisplayString(rendering) : getDisplayString(provider),
    signedDate: formDate(claim.created),
    billingProvider: [getDisplayString(provider), ...addressLines(providerAddress), telecom(provider) ?? ''].filter(
      Boolean,
    ),
    billingNpi: identifierOf(provider, [NPI]),
  };
}
