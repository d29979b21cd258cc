import { Alert, Stack, Title } from '@mantine/core';
import { TaskWorklist, useProfile } from '@hearth/react';
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
