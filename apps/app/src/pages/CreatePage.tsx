import { Stack, Title } from '@mantine/core';
import type { Questionnaire, Resource } from '@hearth/core';
import { QuestionnaireBuilder, ResourceForm, useHearth } from '@hearth/react';
import type { ReactNode } from 'react';
import { useNavigate, useParams } from 'react-router';

/** `/:resourceType/new`: the generated form (or the builder, for a Questionnaire). */
export function CreatePage(): ReactNode {
  const { resourceType = 'Patient' } = useParams();
  const client = useHearth();
  const navigate = useNavigate();
  const save = async (resource: Resource) => {
    const created = await client.createResource(resource as never);
    navigate(`/${resourceType}/${(created as Resource).id}`);
  };
  return (
    <Stack maw={960}>
      <Title order={2}>New {resourceType}</Title>
      {resourceType === 'Questionnaire' ? (
        <QuestionnaireBuilder
          defaultValue={{ resourceType: 'Questionnaire', status: 'draft' } as Questionnaire}
          onSubmit={save}
        />
      ) : (
        <ResourceForm key={resourceType} defaultValue={{ resourceType }} onSubmit={save} submitLabel="Create" />
      )}
    </Stack>
  );
}
