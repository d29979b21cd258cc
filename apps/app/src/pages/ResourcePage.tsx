import { Alert, Anchor, Group, Loader, Stack, Tabs, Text, Title } from '@mantine/core';
import {
  getDisplayString,
  type Agent,
  type Patient,
  type Questionnaire,
  type Reference,
  type Resource,
  type Subscription,
} from '@hearth/core';
import {
  CoverageList,
  EncounterCharges,
  ImagingStudyList,
  JsonEditor,
  MedicationList,
  OperationOutcomeAlert,
  PatientHeader,
  PatientTimeline,
  PrescribeForm,
  QuestionnaireBuilder,
  QuestionnaireForm,
  ReferenceInput,
  ResourceAvatar,
  ResourceBlame,
  ResourceForm,
  ResourceHistory,
  ResourceTable,
  useHearth,
  useProfile,
  useResource,
} from '@hearth/react';
import { useState, type ReactNode } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { AgentPanel } from './AgentPanel.js';
import { CarePlanTab, PatientCarePlans } from './CarePlanPages.js';
import { StartEncounterButton } from './encounter-actions.js';
import { PatientLabs } from './LabPages.js';
import { PatientSummary } from './PatientSummary.js';
import { useFhircastPatientContext } from '../fhircast.js';
import { SubscriptionDeliveries } from './SubscriptionDeliveries.js';

/** `/:resourceType/:id/:tab?`: a resource with tabs for its details, editing, history and JSON. */
export function ResourcePage(): ReactNode {
  const { resourceType = '', id = '', tab } = useParams();
  const client = useHearth();
  const navigate = useNavigate();
  const { data: resource, error, loading, reload } = useResource<Resource>(`${resourceType}/${id}`);
  const [notice, setNotice] = useState<string | undefined>(undefined);
  // A coverage added or changed on the Billing tab: the header's eligibility is read again.
  const [coverageVersion, setCoverageVersion] = useState(0);
  // A patient's chart tells the user's other applications (FHIRcast), when the user turned it on.
  const castError = useFhircastPatientContext(resourceType === 'Patient' ? id : undefined);
  if (error) return <OperationOutcomeAlert error={error} />;
  if (loading && !resource) return <Loader aria-label="Loading resource" />;
  if (!resource) return null;

  const tabs = [
    ...(resourceType === 'Patient'
      ? ['summary', 'timeline', 'medications', 'labs', 'imaging', 'careplans', 'billing']
      : []),
    ...(resourceType === 'CarePlan' ? ['plan'] : []),
    ...(resourceType === 'Agent' ? ['agent'] : []),
    ...(resourceType === 'Questionnaire' ? ['preview', 'builder'] : []),
    'details',
    ...(resourceType === 'Subscription' ? ['deliveries'] : []),
    'edit',
    'history',
    'blame',
    'json',
  ];
  const current = tab && tabs.includes(tab) ? tab : tabs[0];
  const saved = async (next: Resource) => {
    client.invalidateSearches(resourceType);
    const updated = await client.updateResource(next as never);
    setNotice(`Saved version ${(updated as Resource).meta?.versionId ?? ''}`);
    reload();
    navigate(`/${resourceType}/${id}/details`);
  };
  const labels: Record<string, string> = {
    summary: 'Summary',
    timeline: 'Timeline',
    medications: 'Medications',
    labs: 'Labs',
    imaging: 'Imaging',
    careplans: 'Care plans',
    plan: 'Plan',
    billing: 'Billing',
    agent: 'Agent',
    preview: 'Fill in',
    builder: 'Builder',
    details: 'Details',
    deliveries: 'Deliveries',
    edit: 'Edit',
    history: 'History',
    blame: 'Blame',
    json: 'JSON',
  };
  return (
    <Stack>
      {resourceType === 'Patient' ? (
        // Every patient page opens with who the patient is: name, age, sex, identifiers, allergies, problems.
        <>
          <PatientHeader
            key={coverageVersion}
            patient={resource as Patient}
            actions={<StartEncounterButton patientId={id} />}
          />
          {castError !== undefined && (
            <OperationOutcomeAlert error={castError} title="FHIRcast: the chart could not be shared" />
          )}
        </>
      ) : (
        <Group>
          <ResourceAvatar value={resource} size="lg" />
          <div>
            <Title order={2}>{getDisplayString(resource)}</Title>
            <Text size="sm" c="dimmed">
              <Anchor component={Link} to={`/${resourceType}`}>
                {resourceType}
              </Anchor>{' '}
              · {id} · version {resource.meta?.versionId}
              {resourceType === 'Bot' && (
                <>
                  {' · '}
                  <Anchor component={Link} to={`/admin/bots/${id}`}>
                    Open in bot editor
                  </Anchor>
                </>
              )}
            </Text>
          </div>
        </Group>
      )}
      {notice && (
        <Alert color="green" role="status" withCloseButton onClose={() => setNotice(undefined)}>
          {notice}
        </Alert>
      )}
      <Tabs value={current} onChange={(t) => t && navigate(`/${resourceType}/${id}/${t}`)} keepMounted={false}>
        <Tabs.List>
          {tabs.map((t) => (
            <Tabs.Tab key={t} value={t}>
              {labels[t]}
            </Tabs.Tab>
          ))}
        </Tabs.List>
        <Tabs.Panel value="summary" pt="md">
          <PatientSummary patient={resource} />
        </Tabs.Panel>
        <Tabs.Panel value="timeline" pt="md">
          <PatientTimeline patientId={id} onOpen={(r) => navigate(openFromTimeline(id, r))} />
        </Tabs.Panel>
        <Tabs.Panel value="medications" pt="md">
          <PatientMedications patientId={id} />
        </Tabs.Panel>
        <Tabs.Panel value="labs" pt="md">
          <PatientLabs patientId={id} />
        </Tabs.Panel>
        <Tabs.Panel value="imaging" pt="md">
          <ImagingStudyList
            patientId={id}
            onOpenInstance={({ study, instance }) =>
              navigate(`/ImagingStudy/${study.id}/instance/${encodeURIComponent(instance.uid)}`)
            }
          />
        </Tabs.Panel>
        <Tabs.Panel value="billing" pt="md">
          <Stack gap="lg" maw={1000}>
            <CoverageList patientId={id} onChange={() => setCoverageVersion((v) => v + 1)} />
            <EncounterCharges patientId={id} />
          </Stack>
        </Tabs.Panel>
        <Tabs.Panel value="careplans" pt="md">
          <PatientCarePlans patientId={id} />
        </Tabs.Panel>
        <Tabs.Panel value="plan" pt="md">
          <CarePlanTab carePlanId={id} />
        </Tabs.Panel>
        <Tabs.Panel value="agent" pt="md">
          <AgentPanel agent={resource as Agent} />
        </Tabs.Panel>
        <Tabs.Panel value="preview" pt="md">
          <QuestionnaireFill questionnaire={resource as Questionnaire} />
        </Tabs.Panel>
        <Tabs.Panel value="builder" pt="md">
          <QuestionnaireBuilder
            key={resource.meta?.versionId}
            defaultValue={resource as Questionnaire}
            onSubmit={saved}
          />
        </Tabs.Panel>
        <Tabs.Panel value="details" pt="md">
          <ResourceTable value={resource} />
        </Tabs.Panel>
        <Tabs.Panel value="deliveries" pt="md">
          <SubscriptionDeliveries subscription={resource as Subscription} />
        </Tabs.Panel>
        <Tabs.Panel value="edit" pt="md">
          <ResourceForm
            key={resource.meta?.versionId}
            defaultValue={resource}
            onSubmit={saved}
            onDelete={async () => {
              await client.deleteResource(resourceType as 'Patient', id);
              client.invalidateSearches(resourceType);
              navigate(`/${resourceType}`);
            }}
          />
        </Tabs.Panel>
        <Tabs.Panel value="history" pt="md">
          <ResourceHistory key={resource.meta?.versionId} resourceType={resourceType} id={id} />
        </Tabs.Panel>
        <Tabs.Panel value="blame" pt="md">
          <ResourceBlame key={resource.meta?.versionId} resourceType={resourceType} id={id} />
        </Tabs.Panel>
        <Tabs.Panel value="json" pt="md">
          <JsonEditor key={resource.meta?.versionId} defaultValue={resource} onSubmit={saved} />
        </Tabs.Panel>
      </Tabs>
    </Stack>
  );
}

/** Where a timeline entry opens: an encounter's charting page, any other resource's own page. */
function openFromTimeline(patientId: string, resource: Resource): string {
  return resource.resourceType === 'Encounter'
    ? `/Patient/${patientId}/encounter/${resource.id}`
    : `/${resource.resourceType}/${resource.id}`;
}

/** Fills in a questionnaire about a subject (a Patient unless it names other types) and stores the response. */
function QuestionnaireFill({ questionnaire }: { questionnaire: Questionnaire }): ReactNode {
  const client = useHearth();
  const [saved, setSaved] = useState<Resource | undefined>(undefined);
  const [subject, setSubject] = useState<Reference | undefined>(undefined);
  const subjectTypes = questionnaire.subjectType?.length ? questionnaire.subjectType : ['Patient'];
  if (saved) {
    return (
      <Alert color="green" role="status" title="Response saved">
        <Anchor component={Link} to={`/QuestionnaireResponse/${saved.id}`}>
          View the response
        </Anchor>
      </Alert>
    );
  }
  return (
    <Stack maw={760}>
      <ReferenceInput label="Subject" targetTypes={subjectTypes} value={subject} onChange={setSubject} />
      <QuestionnaireForm
        questionnaire={questionnaire}
        subject={subject}
        onSubmit={async (response) => setSaved((await client.createResource(response)) as Resource)}
      />
    </Stack>
  );
}

/** The patient's medications: the list by status (stop with a reason) and a form to prescribe. */
function PatientMedications({ patientId }: { patientId: string }): ReactNode {
  const profile = useProfile();
  const [version, setVersion] = useState(0);
  const requester = profile?.resourceType === 'Practitioner' ? { reference: `Practitioner/${profile.id}` } : undefined;
  return (
    <Stack gap="lg" maw={900}>
      <MedicationList patientId={patientId} version={version} performer={requester} />
      <section aria-label="New prescription">
        <Title order={4} mb="xs">
          Prescribe
        </Title>
        <PrescribeForm patientId={patientId} requester={requester} onPrescribed={() => setVersion((v) => v + 1)} />
      </section>
    </Stack>
  );
}
