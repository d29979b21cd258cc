import { Alert, Stack, Title } from '@mantine/core';
import { ApplyPlanForm, CarePlanList, CarePlanView, TaskWorklist, useProfile } from '@hearth/react';
import type { ReactNode } from 'react';
import { useNavigate } from 'react-router';
import { clinicianReference } from './encounter-actions.js';

/** `/tasks`: the signed-in practitioner's work list (theirs and their teams'). */
export function TasksPage(): ReactNode {
  const navigate = useNavigate();
  const clinician = clinicianReference(useProfile());
  return (
    <Stack maw={1000}>
      <Title order={2}>Tasks</Title>
      {clinician?.reference?.startsWith('Practitioner/') ? (
        <TaskWorklist
          practitioner={clinician}
          onOpenPatient={(id) => navigate(`/Patient/${id}`)}
          onOpenPlan={(id) => navigate(`/CarePlan/${id}`)}
        />
      ) : (
        <Alert color="yellow">The task list is a practitioner&apos;s: sign in as one to see it.</Alert>
      )}
    </Stack>
  );
}

/** The patient page's "Care plans" tab: the patient's plans with their progress, and applying a PlanDefinition. */
export function PatientCarePlans({ patientId }: { patientId: string }): ReactNode {
  const navigate = useNavigate();
  const clinician = clinicianReference(useProfile());
  return (
    <Stack gap="lg" maw={900}>
      <CarePlanList patientId={patientId} onOpen={(id) => navigate(`/CarePlan/${id}`)} />
      <ApplyPlanForm
        patientId={patientId}
        practitioner={clinician}
        onApplied={(plan) => navigate(`/CarePlan/${plan.id}`)}
      />
    </Stack>
  );
}

/** A CarePlan's own tab: the plan view, with a way to its tasks. */
export function CarePlanTab({ carePlanId }: { carePlanId: string }): ReactNode {
  const navigate = useNavigate();
  return (
    <Stack maw={1000}>
      <CarePlanView carePlanId={carePlanId} onOpenTasks={() => navigate('/tasks')} />
    </Stack>
  );
}
