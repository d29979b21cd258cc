import { Alert, Anchor, Badge, Button, Card, Group, Loader, Stack, Table, Text, Title } from '@mantine/core';
import {
  formatCodeableConcept,
  formatDateTime,
  type DiagnosticReport,
  type Patient,
  type ServiceRequest,
} from '@hearth/core';
import {
  DiagnosticReportView,
  FlagBadge,
  LabOrderActions,
  LabOrderForm,
  LabRequisition,
  observationFlag,
  OperationOutcomeAlert,
  orderRequisition,
  orderSpecimen,
  PatientHeader,
  ResultEntryForm,
  ResultsInbox,
  useAsync,
  useHearth,
  useProfile,
  useResource,
} from '@hearth/react';
import { useEffect, useState, type ReactNode } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { ScrollRegion } from '../components/ScrollRegion.js';
import { clinicianReference } from './encounter-actions.js';
import { loadPatientLabs, loadRequisition } from './labs-data.js';

/** Dispatched on window when a result is acknowledged: the navigation's unread count (App.tsx) listens. */
const RESULTS_REVIEWED = 'hearth:results-reviewed';

const STATUS_COLOR: Record<string, string> = { draft: 'gray', active: 'blue', completed: 'green', revoked: 'red' };

/** The patient chart's Labs tab: the patient's lab orders and reports, and a button to order. */
export function PatientLabs({ patientId }: { patientId: string }): ReactNode {
  const client = useHearth();
  const { data, error } = useAsync(() => loadPatientLabs(client, patientId), patientId);
  if (error) return <OperationOutcomeAlert error={error} />;
  if (!data) return <Loader aria-label="Loading labs" />;
  return (
    <Stack>
      <Group>
        <Button component={Link} to={`/Patient/${patientId}/labs/new`}>
          Order labs
        </Button>
      </Group>
      <Card withBorder component="section" aria-label="Lab orders">
        <Title order={4} mb="xs">
          Orders
        </Title>
        {data.orders.length ? (
          <ScrollRegion label="Order list">
            <Table aria-label="Lab orders" verticalSpacing={4}>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Test</Table.Th>
                  <Table.Th>Status</Table.Th>
                  <Table.Th>Priority</Table.Th>
                  <Table.Th>Ordered</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {data.orders.map((o) => (
                  <Table.Tr key={o.id}>
                    <Table.Td>
                      <Anchor component={Link} to={`/labs/order/${o.id}`} size="sm">
                        {formatCodeableConcept(o.code) || 'Lab order'}
                      </Anchor>
                    </Table.Td>
                    <Table.Td miw={124}>
                      <Badge variant="light" color={STATUS_COLOR[o.status] ?? 'gray'}>
                        {o.status}
                      </Badge>
                    </Table.Td>
                    <Table.Td>{o.priority}</Table.Td>
                    <Table.Td>{formatDateTime(o.authoredOn)}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </ScrollRegion>
        ) : (
          <Text size="sm" c="dimmed">
            No lab order yet
          </Text>
        )}
      </Card>
      <Card withBorder component="section" aria-label="Lab reports">
        <Title order={4} mb="xs">
          Reports
        </Title>
        {data.reports.length ? (
          <Stack gap={6} role="list" aria-label="Lab reports">
            {data.reports.map((r) => {
              const flags = (data.results[r.id as string] ?? []).map(observationFlag).filter((f) => f && f !== 'N');
              return (
                <Group key={r.id} gap="xs" wrap="wrap" role="listitem">
                  <Anchor component={Link} to={`/labs/report/${r.id}`} size="sm">
                    {formatCodeableConcept(r.code) || 'Lab report'}
                  </Anchor>
                  <Text size="sm" c="dimmed">
                    {formatDateTime(r.issued ?? r.effectiveDateTime)}
                  </Text>
                  {[...new Set(flags)].map((f) => (
                    <FlagBadge key={f} flag={f} />
                  ))}
                </Group>
              );
            })}
          </Stack>
        ) : (
          <Text size="sm" c="dimmed">
            No lab report yet
          </Text>
        )}
      </Card>
    </Stack>
  );
}

/** `/Patient/:patientId/labs/new`: ordering lab tests for a patient. */
export function LabOrderNewPage(): ReactNode {
  const { patientId = '' } = useParams();
  const navigate = useNavigate();
  const clinician = clinicianReference(useProfile());
  const patient = useResource<Patient>(`Patient/${patientId}`);
  if (patient.error) return <OperationOutcomeAlert error={patient.error} />;
  if (!patient.data) return <Loader aria-label="Loading patient" />;
  return (
    <Stack>
      <PatientHeader patient={patient.data} />
      <Card withBorder component="section" aria-label="New lab order">
        <Title order={3} mb="sm">
          Order labs
        </Title>
        {!clinician?.reference?.startsWith('Practitioner/') && (
          <Alert color="yellow" mb="sm">
            Orders are requested by a practitioner: sign in as one so that the results come back to you.
          </Alert>
        )}
        <LabOrderForm
          subject={{ reference: `Patient/${patientId}` }}
          requester={clinician?.reference?.startsWith('Practitioner/') ? clinician : undefined}
          onSaved={(orders) => navigate(`/labs/order/${orders[0]?.id}`)}
        />
      </Card>
    </Stack>
  );
}

/** `/labs/order/:id`: one order: its details, the workflow buttons, the requisition, and its result. */
export function LabOrderPage(): ReactNode {
  const { id = '' } = useParams();
  const navigate = useNavigate();
  const clinician = clinicianReference(useProfile());
  const read = useResource<ServiceRequest>(`ServiceRequest/${id}`);
  const [order, setOrder] = useState<ServiceRequest | undefined>(undefined);
  useEffect(() => setOrder(read.data), [read.data]);
  const patientId = order?.subject?.reference?.startsWith('Patient/') ? order.subject.reference.slice(8) : '';
  const patient = useResource<Patient>(patientId ? `Patient/${patientId}` : undefined);
  const client = useHearth();
  const reports = useAsync<DiagnosticReport[]>(
    async () =>
      order?.status === 'completed'
        ? [
            ...(await client.searchResources(
              'DiagnosticReport',
              { 'based-on': `ServiceRequest/${id}` },
              { cache: 'no-cache' },
            )),
          ]
        : [],
    `${id}/${order?.status}`,
  );
  if (read.error) return <OperationOutcomeAlert error={read.error} />;
  if (!order) return <Loader aria-label="Loading order" />;
  return (
    <Stack>
      {patient.data && <PatientHeader patient={patient.data} />}
      <Card withBorder component="section" aria-label="Lab order">
        <Group justify="space-between" wrap="wrap" gap="xs" mb="xs">
          <div style={{ minWidth: 0 }}>
            <Title order={3}>{formatCodeableConcept(order.code) || 'Lab order'}</Title>
            <Group gap="xs" wrap="wrap">
              <Badge variant="light" color={STATUS_COLOR[order.status] ?? 'gray'} aria-label="Order status">
                {order.status}
              </Badge>
              <Text size="sm">
                {order.priority ?? 'routine'} · ordered {formatDateTime(order.authoredOn)}
                {order.requester?.display ? ` by ${order.requester.display}` : ''}
              </Text>
            </Group>
          </div>
          <Anchor component={Link} to={`/labs/order/${id}/requisition`} size="sm">
            Requisition {orderRequisition(order)}
          </Anchor>
        </Group>
        <Stack gap={2} mb="sm">
          <Text size="sm">Specimen: {orderSpecimen(order) ?? '—'}</Text>
          {order.patientInstruction && <Text size="sm">Patient instructions: {order.patientInstruction}</Text>}
          {(order.reasonCode ?? []).length + (order.reasonReference ?? []).length > 0 && (
            <Text size="sm">
              Reason:{' '}
              {[
                ...(order.reasonCode ?? []).map((c) => formatCodeableConcept(c)),
                ...(order.reasonReference ?? []).map((r) => r.display ?? r.reference),
              ].join('; ')}
            </Text>
          )}
          {(order.note ?? []).map((n, i) => (
            <Text key={i} size="sm">
              Note: {n.text}
            </Text>
          ))}
        </Stack>
        <LabOrderActions order={order} onChange={setOrder} />
      </Card>
      {order.status === 'active' && (
        <Card withBorder component="section" aria-label="Enter result">
          <Title order={4} mb="sm">
            Enter result
          </Title>
          <ResultEntryForm
            order={order}
            performer={clinician}
            onSaved={(report) => navigate(`/labs/report/${report.id}`)}
          />
        </Card>
      )}
      {(reports.data ?? []).map((r) => (
        <Anchor key={r.id} component={Link} to={`/labs/report/${r.id}`}>
          View the report of {formatDateTime(r.issued)}
        </Anchor>
      ))}
    </Stack>
  );
}

/** `/labs/report/:id`: a lab report with flags, previous values and trends. */
export function LabReportPage(): ReactNode {
  const { id = '' } = useParams();
  const client = useHearth();
  const subject = useAsync(async () => {
    const report = await client.readResource('DiagnosticReport', id);
    const ref = report.subject?.reference;
    return ref?.startsWith('Patient/') ? client.readResource('Patient', ref.slice(8)) : undefined;
  }, id);
  return (
    <Stack>
      {subject.data && <PatientHeader patient={subject.data} />}
      <DiagnosticReportView reportId={id} />
      {subject.data && (
        <Anchor component={Link} to={`/Patient/${subject.data.id}/labs`} size="sm">
          All of this patient&apos;s labs
        </Anchor>
      )}
    </Stack>
  );
}

/** `/labs/order/:id/requisition`: the printable requisition of an order (and its siblings). */
export function RequisitionPage(): ReactNode {
  const { id = '' } = useParams();
  const client = useHearth();
  const { data, error } = useAsync(() => loadRequisition(client, id), id);
  if (error) return <OperationOutcomeAlert error={error} />;
  if (!data) return <Loader aria-label="Loading requisition" />;
  return <LabRequisition orders={data.orders} patient={data.patient} requester={data.requester} />;
}

/** `/labs/inbox`: the signed-in practitioner's unreviewed results. */
export function ResultsInboxPage({ onChange }: { onChange?: () => void }): ReactNode {
  const navigate = useNavigate();
  const clinician = clinicianReference(useProfile());
  return (
    <Stack>
      <Title order={2}>Results inbox</Title>
      {clinician?.reference?.startsWith('Practitioner/') ? (
        <ResultsInbox
          practitioner={clinician}
          onOpen={(reportId) => navigate(`/labs/report/${reportId}`)}
          onAcknowledged={() => {
            window.dispatchEvent(new Event(RESULTS_REVIEWED));
            onChange?.();
          }}
        />
      ) : (
        <Alert color="yellow">The results inbox is a practitioner&apos;s: sign in as one to see it.</Alert>
      )}
    </Stack>
  );
}
