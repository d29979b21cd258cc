import { Code, Loader, Stack, Switch, Text, Title } from '@mantine/core';
import type { HearthClient } from '@hearth/core';
import { OperationOutcomeAlert, useAction, useHearth } from '@hearth/react';
import type { ReactNode } from 'react';
import { fhircastEnabled, useStoredProfile, withFhircastEnabled } from '../fhircast.js';

/** The signed-in user's own settings, kept on their profile resource. */
export function SettingsPage(): ReactNode {
  const client = useHearth() as HearthClient;
  const { profile, reload } = useStoredProfile();
  const { busy, error, run } = useAction();
  if (!profile) {
    return <Loader aria-label="Loading settings" />;
  }
  const enabled = fhircastEnabled(profile);
  const topic = client.getFhircastTopic();
  return (
    <Stack maw={640}>
      <Title order={2}>Settings</Title>
      <Switch
        label="FHIRcast enabled"
        description="Opening a patient's chart publishes Patient-open on your FHIRcast topic, and leaving it Patient-close, so that other applications subscribed to your topic (an image viewer, dictation) follow."
        checked={enabled}
        disabled={busy}
        onChange={(e) => {
          const checked = e.currentTarget.checked;
          void run(async () => {
            await client.updateResource(withFhircastEnabled(profile, checked) as never);
            reload();
          });
        }}
      />
      {topic && (
        <Text size="sm">
          Hub <Code>{new URL('fhircast', client.getBaseUrl()).toString()}</Code>, your topic <Code>{topic}</Code>
        </Text>
      )}
      {error !== undefined && <OperationOutcomeAlert error={error} />}
    </Stack>
  );
}
