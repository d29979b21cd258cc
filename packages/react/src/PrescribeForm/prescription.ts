import type { AllergyIntolerance, Coding, Dosage, HearthClient, MedicationRequest, Reference } from '@hearth/core';

export const RXNORM = 'http://www.nlm.nih.gov/research/umls/rxnorm';
export const MEDICATIONS_VALUE_SET = 'https://hearth.dev/fhir/ValueSet/medications';
export const MEDICATION_ALLERGENS_MAP = 'https://hearth.dev/fhir/ConceptMap/medication-allergens';

/** What the form holds: the structured dosage's parts. */
export interface PrescriptionDraft {
  medication?: Coding;
  doseValue?: number;
  doseUnit: string;
  routeCode: string;
  frequency?: number;
  period?: number;
  periodUnit: 'h' | 'd' | 'wk';
  durationDays?: number;
  asNeeded: boolean;
  quantity?: number;
  refills?: number;
}

export const ROUTES: { code: string; display: string }[] = [
  { code: '26643006', display: 'Oral route' },
  { code: '447694001', display: 'Respiratory tract route' },
  { code: '6064005', display: 'Topical route' },
  { code: '34206005', display: 'Subcutaneous route' },
  { code: '78421000', display: 'Intramuscular route' },
  { code: '47625008', display: 'Intravenous route' },
];

/** The dose unit a drug's RxNorm name implies: "… Oral Capsule" → capsule, "… Inhaler" → puff. */
export function doseUnitOf(display: string | undefined): string {
  const name = (display ?? '').toLowerCase();
  if (name.includes('capsule')) return 'capsule';
  if (name.includes('tablet')) return 'tablet';
  if (name.includes('inhaler') || name.includes('spray')) return 'puff';
  if (name.includes('solution') || name.includes('suspension') || name.includes('injection')) return 'mL';
  if (name.includes('transdermal')) return 'patch';
  return 'application';
}

/** The route a drug's RxNorm name implies (SNOMED route code). */
export function routeOf(display: string | undefined): string {
  const name = (display ?? '').toLowerCase();
  if (name.includes('inhaler')) return '447694001';
  if (name.includes('topical') || name.includes('transdermal')) return '6064005';
  if (name.includes('injection') || name.includes('injectable')) return '78421000';
  return '26643006';
}

/** The structured R4 Dosage for a draft. */
export function draftDosage(draft: PrescriptionDraft): Dosage {
  const route = ROUTES.find((r) => r.code === draft.routeCode);
  const dosage: Dosage = {
    route: route ? { coding: [{ system: 'http://snomed.info/sct', ...route }] } : undefined,
    timing:
      draft.frequency && draft.period
        ? {
            repeat: {
              frequency: draft.frequency,
              period: draft.period,
              periodUnit: draft.periodUnit,
              boundsDuration: draft.durationDays
                ? { value: draft.durationDays, unit: 'days', system: 'http://unitsofmeasure.org', code: 'd' }
                : undefined,
            },
          }
        : undefined,
    asNeededBoolean: draft.asNeeded || undefined,
    doseAndRate:
      draft.doseValue !== undefined ? [{ doseQuantity: { value: draft.doseValue, unit: draft.doseUnit } }] : undefined,
  };
  return JSON.parse(JSON.stringify(dosage)) as Dosage;
}

/** An allergy the chosen drug conflicts with, and the code they share. */
export interface AllergyConflict {
  allergy: AllergyIntolerance;
  matched: Coding;
}

/**
 * The patient's active AllergyIntolerances whose code names the drug, one of its ingredients or a
 * class covering them: the drug's allergen codes come from ConceptMap/$translate over
 * medication-allergens (RxNorm ingredients, SNOMED CT substances and classes).
 */
export async function allergyConflicts(
  client: HearthClient,
  medication: Coding,
  allergies: AllergyIntolerance[],
): Promise<AllergyConflict[]> {
  const allergens: Coding[] = [{ system: medication.system, code: medication.code }];
  if (medication.system === RXNORM && medication.code) {
    const url = client.fhirSearchUrl('ConceptMap/$translate', {
      url: MEDICATION_ALLERGENS_MAP,
      system: RXNORM,
      code: medication.code,
    });
    const out = await client.get<{ parameter?: { name: string; part?: { name: string; valueCoding?: Coding }[] }[] }>(
      url,
      { cache: 'no-cache' },
    );
    for (const p of out.parameter ?? []) {
      const concept = p.name === 'match' ? p.part?.find((q) => q.name === 'concept')?.valueCoding : undefined;
      if (concept?.code) allergens.push(concept);
    }
  }
  const conflicts: AllergyConflict[] = [];
  for (const allergy of allergies) {
    const status = allergy.clinicalStatus?.coding?.[0]?.code;
    if (status === 'inactive' || status === 'resolved') continue;
    if (allergy.verificationStatus?.coding?.[0]?.code === 'refuted') continue;
    const matched = (allergy.code?.coding ?? []).find((c) =>
      allergens.some((a) => a.code === c.code && (a.system ?? '') === (c.system ?? '')),
    );
    if (matched) conflicts.push({ allergy, matched });
  }
  return conflicts;
}

/**
 * The MedicationRequest: an active order with the structured dosage and its sig as text, the
 * dispense (quantity, refills as numberOfRepeatsAllowed), and, when the prescriber overrode an
 * allergy warning, a DetectedIssue contained and referenced from `detectedIssue` (code
 * DALG "Drug Allergy Alert", a mitigation by the prescriber).
 */
export function prescriptionResource(
  draft: PrescriptionDraft,
  sig: string,
  patient: Reference,
  requester: Reference | undefined,
  now: string,
  conflicts: AllergyConflict[],
): MedicationRequest {
  const medication = draft.medication as Coding;
  const dosage = { ...draftDosage(draft), text: sig || undefined };
  const issues = conflicts.map((c, i) => ({
    resourceType: 'DetectedIssue' as const,
    id: `allergy${i + 1}`,
    status: 'final' as const,
    code: {
      coding: [
        { system: 'http://terminology.hl7.org/CodeSystem/v3-ActCode', code: 'DALG', display: 'Drug Allergy Alert' },
      ],
    },
    severity: c.allergy.criticality === 'high' ? ('high' as const) : ('moderate' as const),
    patient,
    identifiedDateTime: now,
    implicated: [{ reference: `AllergyIntolerance/${c.allergy.id}` }],
    detail: `Patient has an allergy to ${c.allergy.code?.text ?? c.matched.display ?? c.matched.code}; ${medication.display ?? medication.code} matches ${c.matched.display ?? c.matched.code}`,
    mitigation: [
      {
        action: { text: 'Prescriber acknowledged the allergy warning and prescribed anyway' },
        date: now,
        author: requester,
      },
    ],
  }));
  return JSON.parse(
    JSON.stringify({
      resourceType: 'MedicationRequest',
      contained: issues.length ? issues : undefined,
      status: 'active',
      intent: 'order',
      medicationCodeableConcept: { coding: [medication], text: medication.display },
      subject: patient,
      authoredOn: now,
      requester,
      detectedIssue: issues.length ? issues.map((d) => ({ reference: `#${d.id}` })) : undefined,
      dosageInstruction: [dosage],
      dispenseRequest:
        draft.quantity !== undefined || draft.refills !== undefined
          ? {
              quantity: draft.quantity !== undefined ? { value: draft.quantity, unit: draft.doseUnit } : undefined,
              numberOfRepeatsAllowed: draft.refills,
            }
          : undefined,
    }),
  ) as MedicationRequest;
}
