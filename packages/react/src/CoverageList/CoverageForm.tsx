import { Button, Group, Select, SimpleGrid, Stack, TextInput } from '@mantine/core';
import type { Coverage, Reference } from '@hearth/core';
import { useState, type ReactNode } from 'react';
import { OperationOutcomeAlert } from '../OperationOutcomeAlert/OperationOutcomeAlert.js';
import { useHearth } from '../provider/HearthProvider.js';
import { useAction } from '../provider/use-action.js';
import { ReferenceInput } from '../ReferenceInput/ReferenceInput.js';

const RELATIONSHIP = 'http://terminology.hl7.org/CodeSystem/subscriber-relationship';
const RELATIONSHIPS = [
  { value: 'self', label: 'Self' },
  { value: 'spouse', label: 'Spouse' },
  { value: 'child', label: 'Child' },
  { value: 'parent', label: 'Parent' },
  { value: 'other', label: 'Other' },
];
const STATUSES = [
  { value: 'active', label: 'Active' },
  { value: 'cancelled', label: 'Cancelled' },
  { value: 'draft', label: 'Draft' },
];
const GROUP = { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/coverage-class', code: 'group' }] };

export interface CoverageFormProps {
  patientId: string;
  /** The coverage to edit; a new one when absent. */
  coverage?: Coverage;
  onSaved: (coverage: Coverage) => void;
  onCancel?: () => void;
}

/** The Coverage a form's fields describe, keeping what the form does not show of an edited one. */
export function coverageFromForm(
  patientId: string,
  base: Coverage | undefined,
  fields: {
    payer?: Reference;
    memberId: string;
    relationship: string;
    group: string;
    start: string;
    end: string;
    status: string;
  },
): Coverage {
  const classes = (base?.class ?? []).filter((c) => !c.type.coding?.some((t) => t.code === 'group'));
  const coverage: Coverage = {
    ...(base ?? {}),
    resourceType: 'Coverage',
    status: fields.status as Coverage['status'],
    beneficiary: { reference: `Patient/${patientId}` },
    payor: fields.payer ? [fields.payer] : (base?.payor ?? []),
    subscriberId: fields.memberId.trim() || undefined,
    relationship: { coding: [{ system: RELATIONSHIP, code: fields.relationship }] },
    period: fields.start || fields.end ? { start: fields.start || undefined, end: fields.end || undefined } : undefined,
    class: fields.group.trim()
      ? [...classes, { type: GROUP, value: fields.group.trim() }]
      : classes.length
        ? classes
        : undefined,
  };
  return JSON.parse(JSON.stringify(coverage)) as Coverage;
}

/** Adds or edits a patient's Coverage: payer, member id, relationship, group and period. */
export function CoverageForm({ patientId, coverage, onSaved, onCancel }: CoverageFormProps): ReactNode {
  const client = useHearth();
  const action = useAction();
  const [payer, setPayer] = useState<Reference | undefined>(coverage?.payor?.[0]);
  const [memberId, setMemberId] = useState(coverage?.subscriberId ?? '');
  const [relationship, setRelationship] = useState(coverage?.relationship?.coding?.[0]?.code ?? 'self');
  const [group, setGroup] = useState(
    coverage?.class?.find((c) => c.type.coding?.some((t) => t.code === 'group'))?.value ?? '',
  );
  const [start, setStart] = useState(coverage?.period?.start?.slice(0, 10) ?? '');
  const [end, setEnd] = useState(coverage?.period?.end?.slice(0, 10) ?? '');
  const [status, setStatus] = useState<string>(coverage?.status ?? 'active');
  const save = action.submit(async () => {
    if (!payer) throw new Error('Choose the payer');
    if (!memberId.trim()) throw new Error('Enter the member id');
    const next = coverageFromForm(patientId, coverage, { payer, memberId, relationship, group, start, end, status });
    const saved = next.id ? await client.updateResource(next) : await client.createResource(next);
    client.invalidateSearches('Coverage');
    onSaved(saved as Coverage);
  });
  return (
    <form onSubmit={save} aria-label={coverage ? 'Edit coverage' : 'Add coverage'}>
      <Stack gap="sm">
        <ReferenceInput label="Payer" targetTypes={['Organization']} value={payer} onChange={setPayer} />
        <SimpleGrid cols={{ base: 1, sm: 2 }}>
          <TextInput label="Member id" value={memberId} onChange={(e) => setMemberId(e.currentTarget.value)} required />
          <TextInput label="Group number" value={group} onChange={(e) => setGroup(e.currentTarget.value)} />
          <Select
            label="Relationship to subscriber"
            data={RELATIONSHIPS}
            value={relationship}
            onChange={(v) => v && setRelationship(v)}
            allowDeselect={false}
          />
          <Select
            label="Status"
            data={STATUSES}
            value={status}
            onChange={(v) => v && setStatus(v)}
            allowDeselect={false}
          />
          <TextInput type="date" label="Start" value={start} onChange={(e) => setStart(e.currentTarget.value)} />
          <TextInput type="date" label="End" value={end} onChange={(e) => setEnd(e.currentTarget.value)} />
        </SimpleGrid>
        <OperationOutcomeAlert error={action.error} />
        <Group>
          <Button type="submit" loading={action.busy}>
            Save coverage
          </Button>
          {onCancel && (
            <Button variant="default" onClick={onCancel}>
              Cancel
            </Button>
          )}
        </Group>
      </Stack>
    </form>
  );
}
