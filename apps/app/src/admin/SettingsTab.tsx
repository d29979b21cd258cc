import { ActionIcon, Button, Group, PasswordInput, Stack, Text, TextInput } from '@mantine/core';
import type { Project, ProjectSetting, ProjectSite } from '@hearth/core';
import { OperationOutcomeAlert, useAction, useHearth } from '@hearth/react';
import { useState, type ReactNode } from 'react';

/**
 * Project secrets (name/value pairs bots read from event.secrets) or sites (domains that sign
 * users in to the project), saved with POST /admin/projects/{id}/secrets or /sites.
 */
export function SettingsTab({
  project,
  kind,
  onSaved,
}: {
  project: Project;
  kind: 'secrets' | 'sites';
  onSaved: () => void;
}): ReactNode {
  const client = useHearth();
  const [secrets, setSecrets] = useState<ProjectSetting[]>(project.secret ?? []);
  const [sites, setSites] = useState<ProjectSite[]>(project.site ?? []);
  const { busy, error, submit } = useAction();
  const [saved, setSaved] = useState(false);
  const rows = kind === 'secrets' ? secrets : sites;
  return (
    <form
      onSubmit={submit(async () => {
        setSaved(false);
        const body = kind === 'secrets' ? secrets.filter((s) => s.name) : sites.filter((s) => s.name);
        await client.post(`admin/projects/${project.id}/${kind}`, body, 'application/json');
        setSaved(true);
        onSaved();
      })}
    >
      <Stack maw={760}>
        {rows.length === 0 && <Text c="dimmed">No {kind} yet.</Text>}
        {kind === 'secrets'
          ? secrets.map((s, i) => (
              <Group key={i} align="flex-end">
                <TextInput
                  label="Name"
                  value={s.name}
                  onChange={(e) =>
                    setSecrets(secrets.map((x, j) => (j === i ? { ...x, name: e.currentTarget.value } : x)))
                  }
                />
                <PasswordInput
                  label="Value"
                  style={{ flex: 1 }}
                  value={s.valueString ?? ''}
                  onChange={(e) =>
                    setSecrets(
                      secrets.map((x, j) => (j === i ? { name: x.name, valueString: e.currentTarget.value } : x)),
                    )
                  }
                />
                <RemoveRow
                  label={`Remove secret ${s.name || i + 1}`}
                  onClick={() => setSecrets(secrets.filter((_, j) => j !== i))}
                />
              </Group>
            ))
          : sites.map((s, i) => (
              <Group key={i} align="flex-end">
                <TextInput
                  label="Site name"
                  value={s.name}
                  onChange={(e) => setSites(sites.map((x, j) => (j === i ? { ...x, name: e.currentTarget.value } : x)))}
                />
                <TextInput
                  label="Domains (comma separated)"
                  style={{ flex: 1 }}
                  value={s.domain.join(', ')}
                  onChange={(e) =>
                    setSites(
                      sites.map((x, j) =>
                        j === i
                          ? {
                              ...x,
                              domain: e.currentTarget.value
                                .split(',')
                                .map((d) => d.trim())
                                .filter(Boolean),
                            }
                          : x,
                      ),
                    )
                  }
                />
                <RemoveRow
                  label={`Remove site ${s.name || i + 1}`}
                  onClick={() => setSites(sites.filter((_, j) => j !== i))}
                />
              </Group>
            ))}
        <Group>
          <Button
            variant="light"
            onClick={() =>
              kind === 'secrets'
                ? setSecrets([...secrets, { name: '', valueString: '' }])
                : setSites([...sites, { name: '', domain: [] }])
            }
          >
            Add {kind === 'secrets' ? 'secret' : 'site'}
          </Button>
          <Button type="submit" loading={busy}>
            Save {kind}
          </Button>
        </Group>
        <OperationOutcomeAlert error={error} />
        {saved && (
          <Text c="green" role="status">
            Saved.
          </Text>
        )}
      </Stack>
    </form>
  );
}

/** The button that takes one row out of the list being edited. */
function RemoveRow({ label, onClick }: { label: string; onClick: () => void }): ReactNode {
  return (
    <ActionIcon variant="subtle" color="red" mb={4} aria-label={label} onClick={onClick}>
      ×
    </ActionIcon>
  );
}
