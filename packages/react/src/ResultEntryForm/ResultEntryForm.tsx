import { Badge, Button, Group, Select, Stack, Table, Text, Textarea } from '@mantine/core';
import {
  LAB_FLAG_DISPLAY,
  type DiagnosticReport,
  type LabFlag,
  type Reference,
  type ServiceRequest,
} from '@hearth/core';
import { useState, type ReactNode } from 'react';
import { DateTimeInput } from '../DateTimeInput/DateTimeInput.js';
import { NumericInput } from '../NumericInput/NumericInput.js';
import { OperationOutcomeAlert } from '../OperationOutcomeAlert/OperationOutcomeAlert.js';
import { useHearth } from '../provider/HearthProvider.js';
import { useAction } from '../provider/use-action.js';
import { resultErrors, resultRows, resultTransaction, rowFlag, type ResultRow } from './results.js';
import { ScrollRegion } from '../util/scroll-region.js';

export interface ResultEntryFormProps {
  /** The active order the result answers. */
  order: ServiceRequest;
  /** Who enters the result (the signed-in practitioner). */
  performer?: Reference;
  /** Called with the stored DiagnosticReport once the transaction succeeded. */
  onSaved?: (report: DiagnosticReport) => void;
}

/** The colour of an interpretation flag: red for critical, orange for high/low and abnormal. */
export function flagColor(flag: LabFlag | undefined): string {
  if (flag === 'HH' || flag === 'LL') return 'red';
  if (flag === 'H' || flag === 'L' || flag === 'A') return 'orange';
  return 'gray';
}

/** A flag badge: its code and what it means. */
export function FlagBadge({ flag }: { flag: LabFlag | undefined }): ReactNode {
  if (!flag || flag === 'N') return null;
  return (
    <Badge
      color={flagColor(flag)}
      variant={flag === 'HH' || flag === 'LL' ? 'filled' : 'light'}
      title={LAB_FLAG_DISPLAY[flag]}
    >
      {flag} · {LAB_FLAG_DISPLAY[flag]}
    </Badge>
  );
}

/**
 * Enters the result of a lab order: a row per analyte of the ordered test with its unit and the
 * reference range (the catalogue's, editable to the performing lab's), the flag computed as the
 * value is typed; saved as a DiagnosticReport with its Observations in one transaction that also
 * completes the order and asks the orderer to review it.
 */
export function ResultEntryForm({ order, performer, onSaved }: ResultEntryFormProps): ReactNode {
  const client = useHearth();
  const [rows, setRows] = useState<ResultRow[]>(() => resultRows(order));
  const [effective, setEffective] = useState<string | undefined>(() => new Date().toISOString());
  const [conclusion, setConclusion] = useState('');
  const [tried, setTried] = useState(false);
  const action = useAction();
  const errors = resultErrors(rows);
  const update = (i: number, patch: Partial<ResultRow>) =>
    setRows((all) => all.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  const num = (v: number | string | undefined) => (typeof v === 'number' ? v : undefined);

  const save = action.submit(async () => {
    setTried(true);
    if (order.status !== 'active')
      throw new Error(`This order is ${order.status}: only an active order takes a result`);
    if (Object.keys(errors).length || !effective) return;
    if (rows.some((r) => typeof r.value === 'string' && !r.analyte.choices)) return;
    const bundle = resultTransaction(
      rows,
      { order, performer, effective, issued: new Date().toISOString(), conclusion },
      () => crypto.randomUUID(),
    );
    const response = await client.executeBatch(bundle);
    for (const type of ['Observation', 'DiagnosticReport', 'ServiceRequest', 'Task']) client.invalidateSearches(type);
    const report = (response.entry ?? [])
      .map((e) => e.resource)
      .find((r) => r?.resourceType === 'DiagnosticReport') as DiagnosticReport;
    onSaved?.(report);
  });

  return (
    <form onSubmit={save} aria-label="Lab result" noValidate>
      <Stack gap="sm">
        <ScrollRegion label="Result rows">
          <Table aria-label="Results to enter" verticalSpacing={4}>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Analyte</Table.Th>
                <Table.Th>Value</Table.Th>
                <Table.Th>Range</Table.Th>
                <Table.Th>Flag</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((row, i) => {
                const { analyte } = row;
                const error = tried ? errors[analyte.code] : undefined;
                return (
                  <Table.Tr key={analyte.code || i}>
                    <Table.Td>
                      <Text size="sm" fw={500}>
                        {analyte.label}
                      </Text>
                      {analyte.code && (
                        <Text size="xs" c="dimmed">
                          LOINC {analyte.code}
                        </Text>
                      )}
                    </Table.Td>
                    <Table.Td miw={140}>
                      {analyte.choices ? (
                        <Select
                          aria-label={analyte.label}
                          data={analyte.choices}
                          clearable
                          value={typeof row.value === 'string' ? row.value : null}
                          onChange={(v) => update(i, { value: v ?? undefined })}
                        />
                      ) : (
                        <NumericInput
                          aria-label={`${analyte.label}${analyte.unit ? ` (${analyte.unit})` : ''}`}
                          value={row.value}
                          rightSection={
                            <Text size="xs" c="dimmed" pr={4}>
                              {analyte.unit}
                            </Text>
                          }
                          rightSectionWidth={64}
                          onChange={(v) => update(i, { value: v })}
                        />
                      )}
                    </Table.Td>
                    <Table.Td miw={170}>
                      {analyte.choices ? (
                        <Text size="sm">{analyte.normalText}</Text>
                      ) : (
                        <Group gap={4} wrap="nowrap">
                          <NumericInput
                            aria-label={`${analyte.label} low`}
                            w={72}
                            value={row.low}
                            error={error}
                            onChange={(v) => update(i, { low: num(v) })}
                          />
                          <Text size="sm">–</Text>
                          <NumericInput
                            aria-label={`${analyte.label} high`}
                            w={72}
                            value={row.high}
                            onChange={(v) => update(i, { high: num(v) })}
                          />
                        </Group>
                      )}
                    </Table.Td>
                    <Table.Td aria-label={`${analyte.label} flag`}>
                      <FlagBadge flag={rowFlag(row)} />
                    </Table.Td>
                  </Table.Tr>
                );
              })}
            </Table.Tbody>
          </Table>
        </ScrollRegion>
        <Group align="flex-end" gap="md" wrap="wrap">
          <DateTimeInput label="Collected at" type="dateTime" value={effective} onChange={setEffective} required />
        </Group>
        <Textarea
          label="Conclusion"
          autosize
          minRows={1}
          value={conclusion}
          onChange={(e) => setConclusion(e.currentTarget.value)}
        />
        {tried && errors[''] && (
          <Text c="red.9" size="sm">
            {errors['']}
          </Text>
        )}
        <OperationOutcomeAlert error={action.error} />
        <Group>
          <Button type="submit" loading={action.busy}>
            Save result
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
