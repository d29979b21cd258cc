import {
  LAB_REQUISITION_SYSTEM,
  labTest,
  type Bundle,
  type CodeableConcept,
  type Coding,
  type Reference,
  type ServiceRequest,
} from '@hearth/core';

/** The order statuses the lab workflow uses (a subset of R4's request-status). */
export type LabOrderStatus = 'draft' | 'active' | 'completed' | 'revoked';

/** Where each status may go, and the button that takes it there. */
export const ORDER_TRANSITIONS: Record<string, { to: LabOrderStatus; label: string }[]> = {
  draft: [
    { to: 'active', label: 'Place order' },
    { to: 'revoked', label: 'Cancel order' },
  ],
  active: [
    { to: 'completed', label: 'Mark completed' },
    { to: 'revoked', label: 'Cancel order' },
  ],
  completed: [],
  revoked: [],
};

/** The statuses an order in `status` may move to (none from a final state or an unknown one). */
export function allowedTransitions(status: string | undefined): { to: LabOrderStatus; label: string }[] {
  return ORDER_TRANSITIONS[status ?? ''] ?? [];
}

/** Applies a transition, refusing one the workflow does not allow. */
export function transitionOrder(order: ServiceRequest, to: LabOrderStatus): ServiceRequest {
  if (!allowedTransitions(order.status).some((t) => t.to === to)) {
    throw new Error(`A ${order.status} order cannot become ${to}`);
  }
  return { ...order, status: to };
}

/**
 * A requisition number as printed on the requisition and the specimen labels: the date and six
 * characters of an alphabet without look-alikes (no 0/O, 1/I/L), e.g. `L240501-7KQ3XD`.
 */
export function requisitionNumber(now: Date, random: () => number = Math.random): string {
  const alphabet = '23456789ABCDEFGHJKMNPQRSTUVWXYZ';
  const date = now.toISOString().slice(2, 10).replaceAll('-', '');
  let tail = '';
  for (let i = 0; i < 6; i++) tail += alphabet[Math.floor(random() * alphabet.length)];
  return `L${date}-${tail}`;
}

/** The requisition number of an order. */
export function orderRequisition(order: ServiceRequest): string | undefined {
  return order.requisition?.value ?? order.identifier?.find((i) => i.system === LAB_REQUISITION_SYSTEM)?.value;
}

export interface LabOrderInput {
  tests: Coding[];
  status: 'draft' | 'active';
  priority: 'routine' | 'urgent' | 'asap' | 'stat';
  subject: Reference;
  requester?: Reference;
  encounter?: Reference;
  reasonCode?: CodeableConcept;
  reasonReference?: Reference;
  /** Specimen requirements per test code (defaults from the catalogue). */
  specimen: Record<string, string>;
  patientInstruction?: string;
  note?: string;
  authoredOn: string;
  requisition: string;
}

/**
 * One ServiceRequest per chosen test, sharing a requisition number (ServiceRequest.requisition,
 * also an identifier of each), in one transaction Bundle. The specimen requirement is an
 * orderDetail (R4's "additional order information"; Specimen resources come with the collection).
 */
export function labOrderTransaction(input: LabOrderInput): Bundle {
  const requisition = { system: LAB_REQUISITION_SYSTEM, value: input.requisition };
  return {
    resourceType: 'Bundle',
    type: 'transaction',
    entry: input.tests.map((test, i) => {
      const specimen = input.specimen[test.code ?? ''] ?? labTest(test.code)?.specimen;
      const order: ServiceRequest = {
        resourceType: 'ServiceRequest',
        status: input.status,
        intent: 'order',
        priority: input.priority,
        category: [
          {
            coding: [{ system: 'http://snomed.info/sct', code: '108252007', display: 'Laboratory procedure' }],
          },
        ],
        code: { coding: [{ system: test.system, code: test.code, display: test.display }], text: test.display },
        subject: input.subject,
        encounter: input.encounter,
        authoredOn: input.authoredOn,
        requester: input.requester,
        requisition,
        identifier: [
          {
            type: {
              coding: [
                { system: 'http://terminology.hl7.org/CodeSystem/v2-0203', code: 'PLAC', display: 'Placer Identifier' },
              ],
            },
            system: LAB_REQUISITION_SYSTEM,
            value: input.tests.length > 1 ? `${input.requisition}-${i + 1}` : input.requisition,
          },
        ],
        reasonCode: input.reasonCode ? [input.reasonCode] : undefined,
        reasonReference: input.reasonReference ? [input.reasonReference] : undefined,
        orderDetail: specimen ? [{ text: `Specimen: ${specimen}` }] : undefined,
        patientInstruction: input.patientInstruction || labTest(test.code)?.patientInstruction,
        note: input.note ? [{ text: input.note, authorReference: input.requester, time: input.authoredOn }] : undefined,
      };
      return {
        fullUrl: `urn:uuid:${input.requisition}-${i}`,
        resource: JSON.parse(JSON.stringify(order)) as ServiceRequest,
        request: { method: 'POST', url: 'ServiceRequest' },
      };
    }),
  };
}

/** The specimen requirement an order states. */
export function orderSpecimen(order: ServiceRequest): string | undefined {
  const detail = order.orderDetail?.find((d) => d.text?.startsWith('Specimen: '));
  return detail?.text?.slice('Specimen: '.length);
}
