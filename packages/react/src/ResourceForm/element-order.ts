/**
 * The order in which a generated form asks for a type's elements: what a person fills first.
 * Common resources and data types have a curated order; any other type lists its required
 * elements, then those in the summary set (hl7.org/fhir/R4/elementdefinition-definitions.html#ElementDefinition.isSummary),
 * then the rest in definition order. Technical elements are folded under "More".
 */
import type { UiElement, UiTypeSchema } from '../provider/metadata.js';

/** Elements a person rarely fills by hand: shown under "More" on a resource's form. */
export const TECHNICAL_ELEMENTS = [
  'language',
  'implicitRules',
  'meta',
  'text',
  'contained',
  'extension',
  'modifierExtension',
];

/** Elements no form shows: the id is the server's, and nested ids and extensions would double every fieldset. */
const NEVER_SHOWN = new Set(['id']);
const NESTED_HIDDEN = new Set(['id', 'extension', 'modifierExtension']);

interface Curated {
  /** The elements first, in this order (choice elements by their '[x]' key). */
  order: string[];
  /** Repeating elements shown with one empty entry, ready to type in. */
  open?: string[];
}

const CURATED: Record<string, Curated> = {
  Patient: {
    order: [
      'name',
      'birthDate',
      'gender',
      'identifier',
      'telecom',
      'address',
      'active',
      'deceased[x]',
      'maritalStatus',
      'communication',
      'generalPractitioner',
      'managingOrganization',
      'contact',
    ],
    open: ['name'],
  },
  Practitioner: {
    order: [
      'name',
      'identifier',
      'telecom',
      'address',
      'gender',
      'birthDate',
      'qualification',
      'communication',
      'active',
    ],
    open: ['name'],
  },
  PractitionerRole: {
    order: ['practitioner', 'organization', 'code', 'specialty', 'location', 'telecom', 'period', 'active'],
  },
  RelatedPerson: {
    order: ['patient', 'relationship', 'name', 'telecom', 'address', 'gender', 'birthDate'],
    open: ['name'],
  },
  Organization: { order: ['name', 'type', 'identifier', 'telecom', 'address', 'partOf', 'alias', 'active'] },
  Location: {
    order: ['name', 'status', 'type', 'address', 'telecom', 'managingOrganization', 'partOf', 'description'],
  },
  Observation: {
    order: [
      'status',
      'code',
      'subject',
      'effective[x]',
      'value[x]',
      'category',
      'interpretation',
      'referenceRange',
      'component',
      'encounter',
      'performer',
      'note',
      'method',
      'bodySite',
      'issued',
    ],
  },
  Condition: {
    order: [
      'code',
      'subject',
      'clinicalStatus',
      'verificationStatus',
      'category',
      'severity',
      'onset[x]',
      'abatement[x]',
      'recordedDate',
      'encounter',
      'bodySite',
      'note',
    ],
  },
  AllergyIntolerance: {
    order: [
      'code',
      'patient',
      'clinicalStatus',
      'verificationStatus',
      'type',
      'category',
      'criticality',
      'reaction',
      'onset[x]',
      'note',
    ],
  },
  Encounter: {
    order: [
      'status',
      'class',
      'subject',
      'type',
      'period',
      'reasonCode',
      'participant',
      'serviceProvider',
      'location',
      'priority',
    ],
  },
  MedicationRequest: {
    order: [
      'status',
      'intent',
      'medication[x]',
      'subject',
      'authoredOn',
      'requester',
      'dosageInstruction',
      'dispenseRequest',
      'reasonCode',
      'note',
      'encounter',
    ],
    open: ['dosageInstruction'],
  },
  MedicationStatement: {
    order: ['status', 'medication[x]', 'subject', 'effective[x]', 'dosage', 'reasonCode', 'note'],
  },
  Procedure: {
    order: ['status', 'code', 'subject', 'performed[x]', 'performer', 'reasonCode', 'bodySite', 'outcome', 'note'],
  },
  DiagnosticReport: {
    order: ['status', 'code', 'subject', 'effective[x]', 'issued', 'result', 'conclusion', 'category', 'performer'],
  },
  Immunization: {
    order: [
      'status',
      'vaccineCode',
      'patient',
      'occurrence[x]',
      'lotNumber',
      'site',
      'route',
      'doseQuantity',
      'performer',
    ],
  },
  ServiceRequest: {
    order: ['status', 'intent', 'code', 'subject', 'occurrence[x]', 'requester', 'reasonCode', 'priority', 'note'],
  },
  CarePlan: {
    order: ['status', 'intent', 'title', 'subject', 'period', 'category', 'description', 'activity', 'goal'],
  },
  Appointment: {
    order: ['status', 'start', 'end', 'participant', 'serviceType', 'appointmentType', 'description', 'comment'],
  },
  HumanName: { order: ['given', 'family', 'prefix', 'suffix', 'use', 'text', 'period'], open: ['given'] },
  ContactPoint: { order: ['system', 'value', 'use', 'rank', 'period'] },
  Address: {
    order: ['line', 'city', 'state', 'postalCode', 'country', 'use', 'type', 'district', 'text', 'period'],
    open: ['line'],
  },
  Identifier: { order: ['system', 'value', 'type', 'use', 'period', 'assigner'] },
};

export interface OrderedElements {
  /** The elements shown at once, in order. */
  main: [string, UiElement][];
  /** The technical elements, folded under "More" (only on a resource's own form). */
  more: [string, UiElement][];
  /** Repeating elements shown with one empty entry. */
  open: Set<string>;
}

/** A type's elements in the order a person fills them, technical ones apart. */
export function orderElements(schema: UiTypeSchema, options: { exclude?: string[] } = {}): OrderedElements {
  const isResource = schema.kind === 'resource';
  const hidden = isResource ? NEVER_SHOWN : NESTED_HIDDEN;
  const entries = Object.entries(schema.elements).filter(
    ([key]) => !hidden.has(key) && !options.exclude?.includes(key),
  );
  const technical = (key: string) => isResource && TECHNICAL_ELEMENTS.includes(key);
  const curated = CURATED[schema.name];
  const rank = (key: string, element: UiElement): number => {
    const at = curated?.order.indexOf(key) ?? -1;
    if (at >= 0) return at;
    const base = curated ? curated.order.length : 0;
    if (element.min > 0) return base + 1;
    if (element.isSummary) return base + 2;
    return base + 3;
  };
  // Array.prototype.sort is stable: elements of one rank keep their definition order.
  const main = entries.filter(([key]) => !technical(key)).sort(([a, ea], [b, eb]) => rank(a, ea) - rank(b, eb));
  const more = TECHNICAL_ELEMENTS.flatMap((key) => entries.filter(([k]) => k === key && technical(k)));
  const open = new Set([
    ...(curated?.open ?? []),
    // A required repeating element always needs an entry.
    ...entries.filter(([, e]) => e.isArray && e.min > 0).map(([key]) => key),
  ]);
  return { main, more, open };
}
