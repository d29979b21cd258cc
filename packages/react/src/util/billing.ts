// The billing operations as the screens call them (docs/billing.md), and the small formatting
// and selection rules the billing components share.
import type {
  ChargeItem,
  Claim,
  Coverage,
  ExplanationOfBenefit,
  HearthClient,
  Money,
  OperationOutcome,
  OperationOutcomeIssue,
  Parameters,
  Task,
} from '@hearth/core';

/** '$1,234.50' (or the currency's own symbol); '—' without an amount. */
export function formatMoney(money: Money | undefined): string {
  if (money?.value === undefined) return '—';
  return new Intl.NumberFormat('en-US', { style: 'currency', currency: money.currency ?? 'USD' }).format(money.value);
}

/** Whether the coverage is in force on a day (YYYY-MM-DD): active, and its period holds the day. */
export function coverageInForce(coverage: Coverage, day: string): boolean {
  if (coverage.status !== 'active') return false;
  const start = coverage.period?.start?.slice(0, 10);
  const end = coverage.period?.end?.slice(0, 10);
  return (!start || start <= day) && (!end || end >= day);
}

/** The coverage that is billed first on a day: in force, lowest order. */
export function primaryCoverage(coverages: Coverage[], day: string): Coverage | undefined {
  return coverages
    .filter((c) => coverageInForce(c, day))
    .sort((a, b) => (a.order ?? Number.MAX_SAFE_INTEGER) - (b.order ?? Number.MAX_SAFE_INTEGER))[0];
}

export interface CaptureAnswer {
  chargeItems: ChargeItem[];
  created: number;
  updated: number;
  unchanged: number;
  warnings: OperationOutcomeIssue[];
}

export interface BalanceAnswer {
  total?: Money;
  paid?: Money;
  adjustment?: Money;
  balance?: Money;
  responses: number;
  /** The ExplanationOfBenefits of the claim's active answers, oldest first. */
  explanations: ExplanationOfBenefit[];
}

/** What recording an answer gives: the balance's amounts and the answer's ExplanationOfBenefit. */
export type RecordedResponse = Omit<BalanceAnswer, 'explanations'> & { explanationOfBenefit?: ExplanationOfBenefit };

const part = (p: Parameters, name: string) => (p.parameter ?? []).filter((q) => q.name === name);

export function balanceOf(p: Parameters): BalanceAnswer {
  const money = (name: string) => part(p, name)[0]?.valueMoney;
  return {
    total: money('total'),
    paid: money('paid'),
    adjustment: money('adjustment'),
    balance: money('balance'),
    responses: part(p, 'responses')[0]?.valueInteger ?? 0,
    explanations: part(p, 'explanationOfBenefit').map((q) => q.resource as ExplanationOfBenefit),
  };
}

export async function captureCharges(client: HearthClient, encounterId: string): Promise<CaptureAnswer> {
  const p = await client.post<Parameters>(client.fhirUrl('Encounter', encounterId, '$capture-charges'));
  const count = (name: string) => part(p, name)[0]?.valueInteger ?? 0;
  return {
    chargeItems: part(p, 'chargeItem').map((q) => q.resource as ChargeItem),
    created: count('created'),
    updated: count('updated'),
    unchanged: count('unchanged'),
    warnings: (part(p, 'issues')[0]?.resource as OperationOutcome | undefined)?.issue ?? [],
  };
}

export function buildClaim(client: HearthClient, encounterId: string): Promise<Claim> {
  return client.post<Claim>(client.fhirUrl('Encounter', encounterId, '$build-claim'));
}

/** The claim's problems (errors and warnings); empty when it is valid. */
export async function validateClaim(client: HearthClient, claimId: string): Promise<OperationOutcomeIssue[]> {
  const outcome = await client.get<OperationOutcome>(client.fhirUrl('Claim', claimId, '$validate-claim'), {
    cache: 'no-cache',
  });
  return (outcome.issue ?? []).filter((i) => i.severity !== 'information');
}

export async function submitClaim(client: HearthClient, claimId: string): Promise<{ claim: Claim; task: Task }> {
  const p = await client.post<Parameters>(client.fhirUrl('Claim', claimId, '$submit'));
  return { claim: part(p, 'claim')[0]?.resource as Claim, task: part(p, 'submission')[0]?.resource as Task };
}

export interface ItemPayment {
  sequence: number;
  paid: number;
  adjustment: number;
  reason?: string;
}

export async function recordClaimResponse(
  client: HearthClient,
  claimId: string,
  items: ItemPayment[],
  disposition?: string,
): Promise<RecordedResponse> {
  const body: Parameters = {
    resourceType: 'Parameters',
    parameter: [
      ...(disposition ? [{ name: 'disposition', valueString: disposition }] : []),
      ...items.map((i) => ({
        name: 'item',
        part: [
          { name: 'sequence', valuePositiveInt: i.sequence },
          { name: 'paid', valueDecimal: i.paid },
          { name: 'adjustment', valueDecimal: i.adjustment },
          ...(i.reason ? [{ name: 'reason', valueString: i.reason }] : []),
        ],
      })),
    ],
  };
  const { explanations, ...amounts } = balanceOf(
    await client.post<Parameters>(client.fhirUrl('Claim', claimId, '$record-response'), body),
  );
  return { ...amounts, explanationOfBenefit: explanations[0] };
}

export async function claimBalance(client: HearthClient, claimId: string): Promise<BalanceAnswer> {
  return balanceOf(await client.get<Parameters>(client.fhirUrl('Claim', claimId, '$balance'), { cache: 'no-cache' }));
}

export function claimPdf(client: HearthClient, claimId: string): Promise<Blob> {
  return client.download(client.fhirUrl('Claim', claimId, '$pdf'));
}

/** Saves a Blob as a file the browser downloads. */
export function saveBlob(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  // Revoked after the click has started the download.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
