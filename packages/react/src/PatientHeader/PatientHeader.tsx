import { Badge, Group, Paper, Stack, Text, Title } from '@mantine/core';
import {
  calculateAge,
  formatCodeableConcept,
  formatDate,
  getDisplayString,
  type AllergyIntolerance,
  type Identifier,
  type Patient,
} from '@hearth/core';
import type { ReactNode } from 'react';
import { useSearch } from '../provider/hooks.js';
import { ResourceAvatar } from '../ResourceAvatar/ResourceAvatar.js';
import { CoverageSummary } from '../CoverageSummary/CoverageSummary.js';

export interface PatientHeaderProps {
  patient: Patient;
  /** Shown at the right: actions such as "Start encounter". */
  actions?: ReactNode;
}

/** An age as people say it: years from 2 on, months under 2 years, days under a month. */
export function ageText(birthDate: string | undefined, at: Date = new Date()): string | undefined {
  const age = birthDate ? calculateAge(birthDate, at) : undefined;
  if (!age) return undefined;
  if (age.years >= 2) return `${age.years} years`;
  const months = age.years * 12 + age.months;
  return months >= 1 ? `${months} months` : `${age.days} days`;
}

/** An identifier labelled by its type ('MRN'), else the last part of its system. */
export function identifierText(identifier: Identifier): string {
  const label =
    identifier.type?.coding?.[0]?.code ||
    formatCodeableConcept(identifier.type) ||
    identifier.system?.split(/[/:]/).filter(Boolean).pop();
  return label ? `${label} ${identifier.value ?? ''}` : (identifier.value ?? '');
}

/**
 * Who the patient is, at the top of every patient page: name, age, sex, birth date, identifiers,
 * the count of active problems, the coverage in force (eligibility), and the active allergies as a banner (hl7.org/fhir/R4/allergyintolerance.html),
 * or that none are recorded.
 */
export function PatientHeader({ patient, actions }: PatientHeaderProps): ReactNode {
  const ref = `Patient/${patient.id}`;
  const allergies = useSearch('AllergyIntolerance', { patient: ref, 'clinical-status': 'active', _count: '50' });
  const problems = useSearch('Condition', { patient: ref, 'clinical-status': 'active', _summary: 'count' });
  const allergyList = (allergies.data?.entry ?? [])
    .map((e) => e.resource as unknown as AllergyIntolerance)
    .filter((a) => a?.resourceType === 'AllergyIntolerance');
  const age = ageText(patient.birthDate);
  const deceased = patient.deceasedBoolean || !!patient.deceasedDateTime;
  const problemCount = problems.data?.total;
  return (
    <Paper withBorder p="sm" component="section" aria-label="Patient header">
      <Stack gap="xs">
        <Group justify="space-between" align="flex-start" wrap="wrap" gap="sm">
          <Group gap="sm" wrap="nowrap" style={{ minWidth: 0 }}>
            <ResourceAvatar value={patient} size="lg" />
            <div style={{ minWidth: 0 }}>
              <Title order={2} style={{ overflowWrap: 'anywhere' }}>
                {getDisplayString(patient)}
              </Title>
              <Text size="sm">
                {[
                  age,
                  patient.gender
                    ? `${patient.gender.charAt(0).toUpperCase()}${patient.gender.slice(1)}`
                    : 'Sex unknown',
                  patient.birthDate ? `born ${formatDate(patient.birthDate)}` : undefined,
                  deceased
                    ? `deceased${patient.deceasedDateTime ? ` ${formatDate(patient.deceasedDateTime)}` : ''}`
                    : undefined,
                ]
                  .filter(Boolean)
                  .join(' · ')}
              </Text>
            </div>
          </Group>
          {actions}
        </Group>
        <Group gap="xs" wrap="wrap" aria-label="Identifiers">
          {(patient.identifier ?? []).slice(0, 4).map((identifier, i) => (
            <Badge key={i} variant="light" color="gray" tt="none" style={{ maxWidth: '100%' }}>
              {identifierText(identifier)}
            </Badge>
          ))}
          {problemCount !== undefined && (
            <Badge variant="light" color="blue" tt="none">
              {problemCount} active problem{problemCount === 1 ? '' : 's'}
            </Badge>
          )}
        </Group>
        {patient.id && <CoverageSummary patientId={patient.id} />}
        {allergies.data && (
          <div role="note" aria-label="Allergy banner">
            {allergyList.length ? (
              // A banner, not an alert: it is there from the start, nothing to announce.
              <Paper bg="red.0" p="xs" withBorder style={{ borderColor: 'var(--mantine-color-red-9)' }}>
                <Text size="sm" c="red.9">
                  <Text span fw={700} size="sm">
                    Allergies ({allergyList.length}):
                  </Text>{' '}
                  {allergyList
                    .map((a) => {
                      const name = formatCodeableConcept(a.code) || 'Unnamed allergy';
                      return a.criticality === 'high' ? `${name} (high criticality)` : name;
                    })
                    .join(', ')}
                </Text>
              </Paper>
            ) : (
              <Text size="sm">No active allergies recorded</Text>
            )}
          </div>
        )}
      </Stack>
    </Paper>
  );
}
