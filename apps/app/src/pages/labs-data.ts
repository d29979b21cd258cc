/**
 * What the lab screens load: a patient's orders and reports (one batch), and a requisition's
 * orders with their patient and orderer (one search with includes).
 */
import {
  LAB_REQUISITION_SYSTEM,
  type Bundle,
  type DiagnosticReport,
  type HearthClient,
  type Observation,
  type Patient,
  type Practitioner,
  type Resource,
  type ServiceRequest,
} from '@hearth/core';
import { orderRequisition } from '@hearth/react';

export interface PatientLabs {
  orders: ServiceRequest[];
  reports: DiagnosticReport[];
  /** Each report's Observations, by report id. */
  results: Record<string, Observation[]>;
}

/** SNOMED CT "Laboratory procedure": ServiceRequest.category of lab orders (R4 servicerequest-category). */
export const LAB_CATEGORY = 'http://snomed.info/sct|108252007';

/** A patient's lab orders (newest first) and lab reports with their results (newest first), in one batch. */
export async function loadPatientLabs(client: HearthClient, patientId: string): Promise<PatientLabs> {
  const ref = encodeURIComponent(`Patient/${patientId}`);
  const response = await client.executeBatch({
    resourceType: 'Bundle',
    type: 'batch',
    entry: [
      `ServiceRequest?subject=${ref}&category=${encodeURIComponent(LAB_CATEGORY)}&_sort=-authored&_count=100`,
      `DiagnosticReport?subject=${ref}&category=LAB&_sort=-issued&_count=100&_include=DiagnosticReport:result`,
    ].map((url) => ({ request: { method: 'GET', url } })),
  });
  const [orders, reports] = (response.entry ?? []).map((e) => (e.resource as Bundle | undefined)?.entry ?? []);
  const observations = new Map(
    (reports ?? [])
      .filter((e) => e.resource?.resourceType === 'Observation')
      .map((e) => [`Observation/${e.resource?.id}`, e.resource as unknown as Observation]),
  );
  const reportList = (reports ?? [])
    .filter((e) => e.resource?.resourceType === 'DiagnosticReport')
    .map((e) => e.resource as unknown as DiagnosticReport);
  return {
    orders: (orders ?? []).map((e) => e.resource as unknown as ServiceRequest),
    reports: reportList,
    results: Object.fromEntries(
      reportList.map((r) => [
        r.id as string,
        (r.result ?? []).map((x) => observations.get(x.reference ?? '')).filter((o): o is Observation => !!o),
      ]),
    ),
  };
}

export interface Requisition {
  orders: ServiceRequest[];
  patient?: Patient;
  requester?: Practitioner;
}

/** The orders sharing an order's requisition number, with the patient and the orderer. */
export async function loadRequisition(client: HearthClient, orderId: string): Promise<Requisition> {
  const order = await client.readResource('ServiceRequest', orderId);
  const number = orderRequisition(order);
  const found = await client.search(
    'ServiceRequest',
    number
      ? {
          requisition: `${LAB_REQUISITION_SYSTEM}|${number}`,
          _include: ['ServiceRequest:subject', 'ServiceRequest:requester'],
        }
      : { _id: orderId, _include: ['ServiceRequest:subject', 'ServiceRequest:requester'] },
    { cache: 'no-cache' },
  );
  const resources = (found.entry ?? []).map((e) => e.resource as Resource);
  const orders = resources.filter((r): r is ServiceRequest => r.resourceType === 'ServiceRequest');
  return {
    orders: orders.length ? orders : [order],
    patient: resources.find((r): r is Patient => r.resourceType === 'Patient'),
    requester: resources.find((r): r is Practitioner => r.resourceType === 'Practitioner'),
  };
}
