/**
 * A clinical resource as a clinician reads it: what it is, the one line that matters (a value, a
 * dose, a status), and whether it is abnormal. One describer per resource type; any other type
 * falls back to its display name and status. Used by the patient timeline and summary.
 */
import {
  formatCodeableConcept,
  formatDate,
  formatDateTime,
  formatPeriod,
  formatQuantity,
  getDisplayString,
  type CodeableConcept,
  type Observation,
  type Period,
  type Quantity,
  type Resource,
} from '@hearth/core';

export interface ResourceDescription {
  /** What it is: a code's text, a title, a name. */
  title: string;
  /** The details that matter, as short phrases. */
  details: string[];
  /** Its status (clinical or workflow), when it has one. */
  status?: string;
  /** An abnormal result's flag ('High', 'Critically low', 'Abnormal'). */
  flag?: string;
}

type Describer = (r: Resource) => Omit<ResourceDescription, 'status'> & { status?: string };

const concept = (value: unknown): string => formatCodeableConcept(value as CodeableConcept | undefined);
const concepts = (value: unknown): string =>
  ((value as CodeableConcept[] | undefined) ?? []).map(concept).filter(Boolean).join(', ');
const display = (value: unknown): string => String((value as { display?: string } | undefined)?.display ?? '');
const text = (value: unknown): string => (typeof value === 'string' ? value : '');
const quantity = (value: unknown): string => formatQuantity(value as Quantity | undefined);
const period = (value: unknown): string => (value ? formatPeriod(value as Period) : '');
const compact = (parts: (string | undefined | false)[]): string[] => parts.filter((p): p is string => !!p);

/** Interpretation codes (hl7.org/fhir/R4/v3/ObservationInterpretation) that flag a result, by code. */
const FLAGS: Record<string, string> = {
  H: 'High',
  HH: 'Critically high',
  HU: 'Very high',
  L: 'Low',
  LL: 'Critically low',
  LU: 'Very low',
  A: 'Abnormal',
  AA: 'Critically abnormal',
  '>': 'Above range',
  '<': 'Below range',
  POS: 'Positive',
  DET: 'Detected',
  R: 'Resistant',
};

/**
 * Why a result is abnormal: its interpretation when it has one (N means normal), else its value
 * against its reference range; undefined when normal or unknown.
 */
export function abnormalFlag(observation: Observation): string | undefined {
  const codes = (observation.interpretation ?? []).flatMap((i) => i.coding ?? []).map((c) => c.code ?? '');
  const flagged = codes.map((c) => FLAGS[c]).find(Boolean);
  if (flagged || codes.length) return flagged;
  const value = observation.valueQuantity?.value;
  const range = observation.referenceRange?.[0];
  if (value === undefined || !range) return undefined;
  if (range.low?.value !== undefined && value < range.low.value) return 'Low';
  if (range.high?.value !== undefined && value > range.high.value) return 'High';
  return undefined;
}

/** An Observation's value as text, components included ('120/80' is 'Systolic 120 mmHg, Diastolic 80 mmHg'). */
export function observationValue(o: Observation): string {
  const own = valueText(o as unknown as Resource);
  const parts = (o.component ?? [])
    .map((c) => {
      const v = valueText(c as unknown as Resource);
      return v ? `${concept(c.code)} ${v}` : '';
    })
    .filter(Boolean);
  return [own, ...parts].filter(Boolean).join(', ');
}

function valueText(o: Resource): string {
  if (o.valueQuantity) return quantity(o.valueQuantity);
  if (o.valueCodeableConcept) return concept(o.valueCodeableConcept);
  if (typeof o.valueString === 'string') return o.valueString;
  if (typeof o.valueBoolean === 'boolean') return o.valueBoolean ? 'yes' : 'no';
  if (typeof o.valueInteger === 'number') return String(o.valueInteger);
  if (typeof o.valueDateTime === 'string') return formatDateTime(o.valueDateTime);
  return '';
}

function firstDosage(r: Resource): string {
  const dosage = (
    r.dosageInstruction as { text?: string; doseAndRate?: { doseQuantity?: Quantity }[] }[] | undefined
  )?.[0];
  return dosage?.text ?? quantity(dosage?.doseAndRate?.[0]?.doseQuantity);
}

const DESCRIBERS: Record<string, Describer> = {
  Observation: (r) => {
    const o = r as unknown as Observation;
    return { title: concept(o.code), details: compact([observationValue(o)]), flag: abnormalFlag(o) };
  },
  Condition: (r) => ({
    title: concept(r.code),
    details: compact([
      concepts(r.category),
      typeof r.onsetDateTime === 'string' && `since ${formatDate(r.onsetDateTime)}`,
      typeof r.abatementDateTime === 'string' && `resolved ${formatDate(r.abatementDateTime)}`,
    ]),
  }),
  MedicationRequest: (r) => ({
    title: concept(r.medicationCodeableConcept) || display(r.medicationReference),
    details: compact([firstDosage(r), text(r.intent), concepts(r.reasonCode)]),
  }),
  MedicationStatement: (r) => ({
    title: concept(r.medicationCodeableConcept) || display(r.medicationReference),
    details: compact([concepts(r.reasonCode)]),
  }),
  MedicationAdministration: (r) => ({
    title: concept(r.medicationCodeableConcept) || display(r.medicationReference),
    details: compact([quantity((r.dosage as { dose?: Quantity } | undefined)?.dose)]),
  }),
  Encounter: (r) => ({
    title: concepts(r.type) || display(r.serviceType) || 'Encounter',
    details: compact([
      display(r.class) || text((r.class as { code?: string } | undefined)?.code),
      period(r.period),
      concepts(r.reasonCode),
      display(r.serviceProvider),
    ]),
  }),
  Procedure: (r) => ({ title: concept(r.code), details: compact([concepts(r.reasonCode), period(r.performedPeriod)]) }),
  Immunization: (r) => ({ title: concept(r.vaccineCode), details: compact([display(r.location)]) }),
  DiagnosticReport: (r) => ({
    title: concept(r.code),
    details: compact([
      text(r.conclusion),
      Array.isArray(r.result) && r.result.length > 0 && `${r.result.length} result${r.result.length > 1 ? 's' : ''}`,
    ]),
  }),
  AllergyIntolerance: (r) => ({
    title: concept(r.code),
    details: compact([
      text(r.criticality) && `criticality ${text(r.criticality)}`,
      ((r.reaction as { manifestation?: CodeableConcept[] }[] | undefined) ?? [])
        .flatMap((x) => x.manifestation ?? [])
        .map(concept)
        .join(', '),
    ]),
  }),
  CarePlan: (r) => ({
    title: text(r.title) || concepts(r.category) || 'Care plan',
    details: compact([period(r.period), text(r.intent)]),
  }),
  CareTeam: (r) => ({
    title: text(r.name) || 'Care team',
    details: compact([
      ((r.participant as { member?: { display?: string } }[] | undefined) ?? [])
        .map((p) => p.member?.display)
        .filter(Boolean)
        .join(', '),
    ]),
  }),
  Claim: (r) => ({
    title: `Claim: ${concept(r.type) || 'claim'}`,
    details: compact([quantity(r.total), display(r.provider)]),
  }),
  ExplanationOfBenefit: (r) => ({
    title: `Explanation of benefit: ${concept(r.type) || 'claim'}`,
    details: compact([
      ((r.total as { category?: CodeableConcept; amount?: Quantity }[] | undefined) ?? [])
        .map((t) => `${concept(t.category)} ${quantity(t.amount)}`)
        .join(', '),
      display(r.insurer),
    ]),
  }),
  DocumentReference: (r) => ({
    title: concept(r.type) || text(r.description) || 'Document',
    details: compact([text(r.description), text(r.docStatus)]),
  }),
  Composition: (r) => ({
    title: text(r.title) || concept(r.type),
    details: compact([
      concept(r.type),
      ((r.author as { display?: string }[] | undefined) ?? [])
        .map((a) => a.display)
        .filter(Boolean)
        .join(', '),
      Array.isArray(r.attester) &&
        r.attester.length > 0 &&
        `signed ${formatDateTime((r.attester as { time?: string }[])[0].time ?? '')}`,
    ]),
  }),
  Appointment: (r) => ({
    title: text(r.description) || concepts(r.serviceType) || concepts(r.appointmentType) || 'Appointment',
    details: compact([typeof r.start === 'string' && formatDateTime(r.start)]),
  }),
  Task: (r) => ({
    title: text(r.description) || concept(r.code) || 'Task',
    details: compact([text(r.priority), display(r.owner)]),
  }),
  ImagingStudy: (r) => ({
    title: text(r.description) || concepts(r.procedureCode) || 'Imaging study',
    details: compact([
      ((r.modality as { display?: string; code?: string }[] | undefined) ?? [])
        .map((m) => m.display ?? m.code)
        .join(', '),
      typeof r.numberOfInstances === 'number' && `${r.numberOfInstances} images`,
    ]),
  }),
  Goal: (r) => ({ title: concept(r.description), details: compact([concept(r.achievementStatus)]) }),
  ServiceRequest: (r) => ({ title: concept(r.code), details: compact([text(r.intent), concepts(r.reasonCode)]) }),
  SupplyDelivery: (r) => ({
    title: concept((r.suppliedItem as { itemCodeableConcept?: CodeableConcept } | undefined)?.itemCodeableConcept),
    details: compact([quantity((r.suppliedItem as { quantity?: Quantity } | undefined)?.quantity)]),
  }),
  Device: (r) => ({ title: getDisplayString(r) || concept(r.type), details: compact([concept(r.type)]) }),
  Coverage: (r) => ({
    title: `Coverage: ${concept(r.type) || display((r.payor as unknown[] | undefined)?.[0]) || 'insurance'}`,
    details: compact([period(r.period)]),
  }),
  QuestionnaireResponse: (r) => ({
    title: `Questionnaire response${typeof r.questionnaire === 'string' ? `: ${r.questionnaire.split('/').pop()}` : ''}`,
    details: [],
  }),
  Patient: (r) => ({ title: getDisplayString(r), details: compact([text(r.gender), text(r.birthDate)]) }),
};

/** A resource as a title, details, status and abnormal flag, for people to read. */
export function describeResource(resource: Resource): ResourceDescription {
  const own = DESCRIBERS[resource.resourceType]?.(resource);
  const status =
    concept(resource.clinicalStatus) ||
    text(resource.status) ||
    text(resource.docStatus) ||
    concept(resource.verificationStatus) ||
    undefined;
  const title = own?.title || getDisplayString(resource);
  return { title, details: own?.details ?? [], status: own?.status ?? status, flag: own?.flag };
}
