import { Button, Group, MultiSelect, Select, SimpleGrid, Stack, Text, Textarea, TextInput } from '@mantine/core';
import {
  formatCodeableConcept,
  LAB_TESTS_VALUE_SET,
  labTest,
  type CodeableConcept,
  type Coding,
  type Condition,
  type Reference,
  type ServiceRequest,
} from '@hearth/core';
import { useState, type ReactNode } from 'react';
import { CodeableConceptInput } from '../CodeableConceptInput/CodeableConceptInput.js';
import { useValueSetSearch } from '../CodingInput/CodingInput.js';
import { codingKey, codingLabel } from '../CodingInput/valueset.js';
import { OperationOutcomeAlert } from '../OperationOutcomeAlert/OperationOutcomeAlert.js';
import { useHearth } from '../provider/HearthProvider.js';
import { useAsync } from '../provider/hooks.js';
import { useAction } from '../provider/use-action.js';
import { serverSearchProps } from '../util/server-search.js';
import { allowedTransitions, labOrderTransaction, requisitionNumber, transitionOrder } from './order.js';

export interface LabOrderFormProps {
  subject: Reference;
  /** The ordering practitioner (the signed-in one). */
  requester?: Reference;
  encounter?: Reference;
  /** Called with the stored ServiceRequests (one per test) once the transaction succeeded. */
  onSaved?: (orders: ServiceRequest[]) => void;
}

const PRIORITIES = [
  { value: 'routine', label: 'Routine' },
  { value: 'urgent', label: 'Urgent' },
  { value: 'asap', label: 'As soon as possible' },
  { value: 'stat', label: 'STAT' },
];

/**
 * Orders lab tests: tests and panels from the lab-tests value set by type-ahead, priority, the
 * reason (a coded reason, or one of the patient's conditions), the specimen each test needs
 * (filled in from the catalogue, editable), patient instructions and a note. Saved as a draft or
 * placed (active): one ServiceRequest per test under one requisition number, in one transaction.
 */
export function LabOrderForm({ subject, requester, encounter, onSaved }: LabOrderFormProps): ReactNode {
  const client = useHearth();
  const [search, setSearch] = useState('');
  const { codes, loading } = useValueSetSearch(LAB_TESTS_VALUE_SET, search);
  const [tests, setTests] = useState<Coding[]>([]);
  const [priority, setPriority] = useState<'routine' | 'urgent' | 'asap' | 'stat'>('routine');
  const [reasonCode, setReasonCode] = useState<CodeableConcept | undefined>(undefined);
  const [reasonCondition, setReasonCondition] = useState<string | null>(null);
  const [specimen, setSpecimen] = useState<Record<string, string>>({});
  const [instruction, setInstruction] = useState('');
  const [note, setNote] = useState('');
  const [tried, setTried] = useState(false);
  const action = useAction();
  const conditions = useAsync(
    () => client.searchResources('Condition', { subject: subject.reference ?? '', _count: '100' }),
    subject.reference ?? '',
  );

  const byKey = new Map<string, Coding>();
  for (const c of [...tests, ...codes]) byKey.set(codingKey(c), c);
  const condition = (conditions.data ?? []).find((c) => `Condition/${c.id}` === reasonCondition) as
    Condition | undefined;
  const defaultInstruction = tests.map((t) => labTest(t.code)?.patientInstruction).find(Boolean) ?? '';

  const save = (status: 'draft' | 'active') =>
    action.run(async () => {
      setTried(true);
      if (!tests.length) return;
      const now = new Date();
      const bundle = labOrderTransaction({
        tests,
        status,
        priority,
        subject,
        requester,
        encounter,
        reasonCode,
        reasonReference: condition
          ? { reference: `Condition/${condition.id}`, display: formatCodeableConcept(condition.code) }
          : undefined,
        specimen,
        patientInstruction: instruction || undefined,
        note: note || undefined,
        authoredOn: now.toISOString(),
        requisition: requisitionNumber(now),
      });
      const response = await client.executeBatch(bundle);
      client.invalidateSearches('ServiceRequest');
      const stored = (response.entry ?? []).map((e) => e.resource as ServiceRequest).filter(Boolean);
      setTests([]);
      setTried(false);
      onSaved?.(stored);
    });

  return (
    <form
      aria-label="Lab order"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void save('active');
      }}
    >
      <Stack gap="sm">
        <MultiSelect
          label="Tests"
          required
          error={tried && !tests.length ? 'Choose at least one test' : undefined}
          {...serverSearchProps({
            label: 'Tests',
            search,
            onSearchChange: setSearch,
            loading,
            nothingFound: 'No matching test',
          })}
          data={[...byKey.entries()].map(([key, c]) => ({ value: key, label: codingLabel(c) }))}
          value={tests.map(codingKey)}
          onChange={(keys) => {
            setTests(keys.map((k) => byKey.get(k)).filter((c): c is Coding => !!c));
            setSearch('');
          }}
        />
        {tests.map((t) => (
          <TextInput
            key={codingKey(t)}
            label={`Specimen for ${t.display ?? t.code}`}
            value={specimen[t.code ?? ''] ?? labTest(t.code)?.specimen ?? ''}
            onChange={(e) => {
              const value = e.currentTarget.value;
              setSpecimen((s) => ({ ...s, [t.code ?? '']: value }));
            }}
          />
        ))}
        <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="sm">
          <Select
            label="Priority"
            data={PRIORITIES}
            value={priority}
            allowDeselect={false}
            onChange={(v) => v && setPriority(v as typeof priority)}
          />
          <Select
            label="Reason: one of the patient's conditions"
            placeholder={conditions.data?.length ? 'Choose a condition' : 'No recorded condition'}
            clearable
            data={(conditions.data ?? []).map((c) => ({
              value: `Condition/${c.id}`,
              label: formatCodeableConcept(c.code) || `Condition ${c.id}`,
            }))}
            value={reasonCondition}
            onChange={setReasonCondition}
          />
        </SimpleGrid>
        <CodeableConceptInput
          label="Reason (coded)"
          valueSet="http://hl7.org/fhir/ValueSet/procedure-reason"
          value={reasonCode}
          onChange={setReasonCode}
        />
        <Textarea
          label="Patient instructions"
          autosize
          minRows={1}
          value={instruction || defaultInstruction}
          onChange={(e) => setInstruction(e.currentTarget.value)}
        />
        <Textarea
          label="Note to the laboratory"
          autosize
          minRows={1}
          value={note}
          onChange={(e) => setNote(e.currentTarget.value)}
        />
        <OperationOutcomeAlert error={action.error ?? conditions.error} />
        <Group>
          <Button type="submit" loading={action.busy}>
            Place order
          </Button>
          <Button variant="default" loading={action.busy} onClick={() => void save('draft')}>
            Save as draft
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

export interface LabOrderActionsProps {
  order: ServiceRequest;
  /** Called with the order's new version after a transition. */
  onChange?: (order: ServiceRequest) => void;
}

/** The buttons moving an order along its workflow: only those its current status allows. */
export function LabOrderActions({ order, onChange }: LabOrderActionsProps): ReactNode {
  const client = useHearth();
  const action = useAction();
  const transitions = allowedTransitions(order.status);
  if (!transitions.length) {
    return (
      <Text size="sm" c="dimmed">
        This order is {order.status}: it can no longer change.
      </Text>
    );
  }
  return (
    <Stack gap="xs">
      <Group gap="xs">
        {transitions.map((t) => (
          <Button
            key={t.to}
            variant={t.to === 'revoked' ? 'outline' : 'filled'}
            color={t.to === 'revoked' ? 'red' : undefined}
            loading={action.busy}
            onClick={() =>
              action.run(async () => {
                const updated = await client.updateResource(transitionOrder(order, t.to), {
                  ifMatch: order.meta?.versionId,
                });
                client.invalidateSearches('ServiceRequest');
                onChange?.(updated as ServiceRequest);
              })
            }
          >
            {t.label}
          </Button>
        ))}
      </Group>
      <OperationOutcomeAlert error={action.error} />
    </Stack>
  );
}
