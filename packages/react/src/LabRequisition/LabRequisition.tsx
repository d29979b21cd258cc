import { Button, Group, Stack, Table, Text, Title } from '@mantine/core';
import {
  formatCodeableConcept,
  formatDate,
  formatDateTime,
  formatHumanName,
  type Patient,
  type Practitioner,
  type ServiceRequest,
} from '@hearth/core';
import type { ReactNode } from 'react';
import { orderRequisition, orderSpecimen } from '../LabOrderForm/order.js';
import { identifierText } from '../PatientHeader/PatientHeader.js';
import { ScrollRegion } from '../util/scroll-region.js';

export interface LabRequisitionProps {
  /** The orders of one requisition (same requisition number). */
  orders: ServiceRequest[];
  patient?: Patient;
  requester?: Practitioner;
}

/** The print stylesheet: only the requisition on paper, black on white, no app chrome. */
const PRINT_CSS = `
@media print {
  body * { visibility: hidden !important; }
  .hearth-requisition, .hearth-requisition * { visibility: visible !important; }
  .hearth-requisition { position: absolute; left: 0; top: 0; width: 100%; color: #000; background: #fff; }
  .hearth-requisition .no-print { display: none !important; }
}
.hearth-requisition .barcode { font-family: 'Libre Barcode 39', ui-monospace, monospace; letter-spacing: 0.2em; }
`;

/**
 * A printable lab requisition: the requisition number as barcode-like text (Code 39 style
 * between asterisks), the patient (name, birth date, sex, identifiers), the ordering clinician,
 * each test with its priority, specimen and instructions, the reasons and notes. Print calls
 * window.print; the print stylesheet leaves only the requisition on the page.
 */
export function LabRequisition({ orders, patient, requester }: LabRequisitionProps): ReactNode {
  const number = orders[0] ? orderRequisition(orders[0]) : undefined;
  const first = orders[0];
  const reasons = [
    ...new Set(
      orders.flatMap((o) => [
        ...(o.reasonCode ?? []).map((c) => formatCodeableConcept(c)),
        ...(o.reasonReference ?? []).map((r) => r.display ?? r.reference ?? ''),
      ]),
    ),
  ].filter(Boolean);
  return (
    <section className="hearth-requisition" aria-label="Lab requisition">
      <style>{PRINT_CSS}</style>
      <Stack gap="sm">
        <Group justify="space-between" wrap="wrap" gap="xs">
          <Title order={2}>Laboratory requisition</Title>
          <Button className="no-print" onClick={() => window.print()}>
            Print
          </Button>
        </Group>
        <div>
          <Text className="barcode" size="xl" fw={700} aria-label="Requisition barcode">
            *{number ?? ''}*
          </Text>
          <Text size="sm">Requisition {number ?? '—'}</Text>
        </div>
        <Table withTableBorder verticalSpacing={4} aria-label="Patient and orderer">
          <Table.Tbody>
            <Row
              label="Patient"
              value={patient?.name?.[0] ? formatHumanName(patient.name[0]) : first?.subject?.display}
            />
            <Row label="Born" value={formatDate(patient?.birthDate)} />
            <Row label="Sex" value={patient?.gender} />
            <Row label="Identifiers" value={(patient?.identifier ?? []).map(identifierText).join(' · ')} />
            <Row
              label="Ordered by"
              value={requester?.name?.[0] ? formatHumanName(requester.name[0]) : first?.requester?.display}
            />
            <Row label="Ordered" value={formatDateTime(first?.authoredOn)} />
            <Row label="Reason" value={reasons.join('; ')} />
          </Table.Tbody>
        </Table>
        <ScrollRegion label="Requisition tests">
          <Table withTableBorder verticalSpacing={4} aria-label="Tests">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Test</Table.Th>
                <Table.Th>Priority</Table.Th>
                <Table.Th>Specimen</Table.Th>
                <Table.Th>Status</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {orders.map((o) => (
                <Table.Tr key={o.id}>
                  <Table.Td>
                    {formatCodeableConcept(o.code)}
                    <Text size="xs" c="dimmed">
                      LOINC {o.code?.coding?.[0]?.code} · {o.identifier?.[0]?.value}
                    </Text>
                    {o.patientInstruction && <Text size="xs">Patient: {o.patientInstruction}</Text>}
                    {(o.note ?? []).map((n, i) => (
                      <Text key={i} size="xs">
                        Note: {n.text}
                      </Text>
                    ))}
                  </Table.Td>
                  <Table.Td>{o.priority?.toUpperCase() ?? 'ROUTINE'}</Table.Td>
                  <Table.Td>{orderSpecimen(o) ?? '—'}</Table.Td>
                  <Table.Td>{o.status}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollRegion>
      </Stack>
    </section>
  );
}

function Row({ label, value }: { label: string; value: string | undefined }): ReactNode {
  return (
    <Table.Tr>
      <Table.Th w={120}>{label}</Table.Th>
      <Table.Td>{value || '—'}</Table.Td>
    </Table.Tr>
  );
}
