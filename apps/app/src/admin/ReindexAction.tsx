import { Button, Card, Group, Progress, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { asyncJobProgress, type AsyncJob, type AsyncJobProgress } from '@hearth/core';
import { OperationOutcomeAlert, useAction, useHearth } from '@hearth/react';
import { useEffect, useRef, useState, type ReactNode } from 'react';

interface ReindexCounts {
  total: number;
  types: { resourceType: string; count: number }[];
}

/** The per-type counts a finished reindex job gives as its output Parameters. */
function countsOf(job: AsyncJob): ReindexCounts {
  const parameter = (job.output?.parameter ?? []) as ReindexParameter[];
  return {
    total: parameter.find((p) => p.name === 'total')?.valueInteger ?? 0,
    types: parameter
      .filter((p) => p.name === 'type')
      .map((p) => ({
        resourceType: p.part?.find((x) => x.name === 'resourceType')?.valueCode ?? '',
        count: p.part?.find((x) => x.name === 'count')?.valueInteger ?? 0,
      })),
  };
}

interface ReindexParameter {
  name?: string;
  valueInteger?: number;
  part?: { name?: string; valueCode?: string; valueInteger?: number }[];
}

/** The reason a failed job gives (the OperationOutcome in its output's `outcome` parameter). */
function failure(job: AsyncJob): string | undefined {
  const outcome = job.output?.parameter?.find((p) => p.name === 'outcome')?.resource as
    { issue?: { details?: { text?: string } }[] } | undefined;
  return outcome?.issue?.[0]?.details?.text;
}

const ENDED = new Set(['completed', 'error', 'cancelled']);

/**
 * Reindex of some or all resource types, as a job on the server (Prefer: respond-async): a whole
 * server's reindex outlasts any request. The card draws the job's done / total while it runs, can
 * cancel it, and shows the counts per type at the end.
 */
export function ReindexAction({ pollMs = 1000 }: { pollMs?: number }): ReactNode {
  const client = useHearth();
  const [types, setTypes] = useState('');
  const [job, setJob] = useState<AsyncJob | undefined>(undefined);
  const [progress, setProgress] = useState<AsyncJobProgress | undefined>(undefined);
  const { busy, error, setError, run } = useAction();
  const running = job !== undefined && !ENDED.has(job.status ?? '');
  const jobId = job?.id;
  const live = useRef(true);
  useEffect(() => {
    live.current = true;
    return () => {
      live.current = false;
    };
  }, []);

  // Poll the job while it runs.
  useEffect(() => {
    if (!running || !jobId) return undefined;
    const timer = setTimeout(() => {
      client.get<AsyncJob>(client.fhirUrl('AsyncJob', jobId), { cache: 'no-cache' }).then(
        (next) => {
          if (!live.current) return;
          setProgress(asyncJobProgress(next) ?? progress);
          setJob(next);
        },
        (err: unknown) => live.current && setError(err),
      );
    }, pollMs);
    return () => clearTimeout(timer);
  }, [client, job, jobId, running, pollMs, progress, setError]);

  const counts = job?.status === 'completed' ? countsOf(job) : undefined;
  return (
    <Card withBorder>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          setProgress(undefined);
          await run(async () => {
            const body = types.trim() ? { resourceType: types.trim() } : {};
            const started = await client.post<AsyncJob>('admin/super/reindex', body, 'application/json', {
              headers: { Prefer: 'respond-async' },
            });
            setJob(started);
          });
        }}
      >
        <Stack gap="xs">
          <Title order={5}>Reindex resources</Title>
          <TextInput
            label="Resource types (comma separated; empty: all)"
            value={types}
            onChange={(e) => setTypes(e.currentTarget.value)}
            disabled={running}
          />
          <Group>
            <Button type="submit" size="sm" loading={busy} disabled={running}>
              Reindex resources
            </Button>
            {running && jobId && (
              <Button
                variant="default"
                size="sm"
                onClick={() =>
                  run(async () => {
                    // DELETE on the status URL cancels the job after its current batch.
                    await client.delete(client.fhirUrl('job', jobId, 'status'));
                  })
                }
              >
                Cancel
              </Button>
            )}
          </Group>
          {running && (
            <Stack gap={4} role="status" aria-label="Reindex progress">
              <Progress value={(progress?.fraction ?? 0) * 100} animated aria-label="Reindexed share" />
              <Text size="sm">
                {progress?.done !== undefined && progress.total !== undefined
                  ? `${progress.done.toLocaleString()} of ${progress.total.toLocaleString()} resources`
                  : 'Starting…'}
                {progress?.message ? ` — ${progress.message.replace(/^\S+ resources /, '')}` : ''}
              </Text>
            </Stack>
          )}
          {error !== undefined && <OperationOutcomeAlert error={error} />}
          {job?.status === 'error' && (
            <Text c="red" size="sm" role="alert">
              The reindex failed{failure(job) ? `: ${failure(job)}` : '.'}
            </Text>
          )}
          {job?.status === 'cancelled' && (
            <Text size="sm" role="status">
              The reindex was cancelled.
            </Text>
          )}
          {counts && (
            <>
              <Text c="green" size="sm" role="status">
                Reindexed {counts.total.toLocaleString()} resources.
              </Text>
              {counts.types.length > 0 && (
                <Table aria-label="Reindexed per type" withRowBorders={false}>
                  <Table.Tbody>
                    {counts.types.map((t) => (
                      <Table.Tr key={t.resourceType}>
                        <Table.Td>{t.resourceType}</Table.Td>
                        <Table.Td>{t.count.toLocaleString()}</Table.Td>
                      </Table.Tr>
                    ))}
                  </Table.Tbody>
                </Table>
              )}
            </>
          )}
        </Stack>
      </form>
    </Card>
  );
}
