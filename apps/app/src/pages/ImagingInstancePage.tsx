import { Alert, Anchor, Button, Card, Group, Loader, Stack, Text, Title } from '@mantine/core';
import { formatDateTime, type ImagingStudy, type Patient } from '@hearth/core';
import {
  DicomViewer,
  instanceBinary,
  OperationOutcomeAlert,
  PatientHeader,
  sortedSeries,
  useResource,
} from '@hearth/react';
import type { ReactNode } from 'react';
import { Link, useNavigate, useParams } from 'react-router';

/**
 * `/ImagingStudy/:studyId/instance/:instanceUid`: one instance of a study in the DICOM viewer,
 * under the patient's header, with the previous and next instances of its series a click away.
 * (The viewer, and the DICOM parser it loads, are chunks of their own: the app's main bundle
 * does not carry them.)
 */
export function ImagingInstancePage(): ReactNode {
  const { studyId = '', instanceUid = '' } = useParams();
  const navigate = useNavigate();
  const study = useResource<ImagingStudy>(`ImagingStudy/${studyId}`);
  const patientRef = study.data?.subject?.reference?.startsWith('Patient/') ? study.data.subject.reference : undefined;
  const patient = useResource<Patient>(patientRef);
  if (study.error) return <OperationOutcomeAlert error={study.error} />;
  if (!study.data) return <Loader aria-label="Loading imaging study" />;
  const series = sortedSeries(study.data);
  const inSeries = series.find((s) => s.instance?.some((i) => i.uid === instanceUid));
  const instances = inSeries?.instance ?? [];
  const index = instances.findIndex((i) => i.uid === instanceUid);
  const instance = instances[index];
  const binary = instance && instanceBinary(instance);
  const back = patientRef ? `/${patientRef}/imaging` : `/ImagingStudy/${studyId}`;
  const open = (uid: string) => navigate(`/ImagingStudy/${studyId}/instance/${encodeURIComponent(uid)}`);
  const previous = instances[index - 1];
  const next = instances[index + 1];
  const instanceLabel = instance?.number !== undefined ? `Instance ${instance.number}` : `Instance ${index + 1}`;
  return (
    <Stack>
      {patient.data && <PatientHeader patient={patient.data} />}
      <Card withBorder component="section" aria-label="Imaging instance">
        <Stack gap="xs">
          <div style={{ minWidth: 0 }}>
            <Title order={3}>{study.data.description ?? 'Imaging study'}</Title>
            <Text size="sm" c="dimmed">
              {[
                study.data.started && formatDateTime(study.data.started),
                inSeries &&
                  [inSeries.number !== undefined ? `Series ${inSeries.number}` : 'Series', inSeries.description]
                    .filter(Boolean)
                    .join(' '),
                instance && `${instanceLabel} of ${instances.length}`,
              ]
                .filter(Boolean)
                .join(' · ')}
            </Text>
          </div>
          <Group gap="xs" wrap="wrap">
            <Anchor component={Link} to={back} size="sm">
              {patientRef ? "Back to the patient's imaging" : 'The imaging study'}
            </Anchor>
            {instances.length > 1 && (
              <>
                <Button size="xs" variant="default" disabled={!previous} onClick={() => previous && open(previous.uid)}>
                  Previous instance
                </Button>
                <Button size="xs" variant="default" disabled={!next} onClick={() => next && open(next.uid)}>
                  Next instance
                </Button>
              </>
            )}
          </Group>
        </Stack>
      </Card>
      {!instance ? (
        <Alert color="red" title="No such instance">
          The study has no instance {instanceUid}.
        </Alert>
      ) : !binary ? (
        <Alert color="yellow" title="The file is not stored">
          The study lists this instance, but the server does not hold its DICOM file.
        </Alert>
      ) : (
        <DicomViewer key={binary} binary={binary} fileName={`${instance.uid}.dcm`} />
      )}
    </Stack>
  );
}
