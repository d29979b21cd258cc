import {
  LAB_FLAG_DISPLAY,
  OBSERVATION_INTERPRETATION,
  type Bundle,
  type DiagnosticReport,
  type HearthClient,
  type LabFlag,
  type Observation,
  type Resource,
} from '@hearth/core';

/** A report with its Observations and, per analyte, the patient's results of that analyte (newest first). */
export interface LoadedReport {
  report: DiagnosticReport;
  observations: Observation[];
  history: Record<string, Observation[]>;
}

/** The key an Observation's analyte is grouped by: its first coding, else its text. */
export function analyteKey(o: Observation): string {
  const c = o.code?.coding?.[0];
  return c ? `${c.system ?? ''}|${c.code ?? ''}` : (o.code?.text ?? '');
}

/** When a result was taken. */
export function resultTime(o: Observation): string | undefined {
  return o.effectiveDateTime ?? o.effectivePeriod?.start ?? o.effectiveInstant ?? o.issued;
}

/**
 * Reads a report with its results (`_include=DiagnosticReport:result`), then each analyte's
 * results for the patient in one batch (`Observation?subject&code&_sort=-date`), for the previous
 * values and the trend charts.
 */
export async function loadReport(client: HearthClient, id: string, historyCount = 50): Promise<LoadedReport> {
  const found = await client.search(
    'DiagnosticReport',
    { _id: id, _include: 'DiagnosticReport:result' },
    { cache: 'no-cache' },
  );
  const resources = (found.entry ?? []).map((e) => e.resource as Resource | undefined);
  const report = resources.find((r) => r?.resourceType === 'DiagnosticReport') as unknown as
    DiagnosticReport | undefined;
  if (!report) throw new Error(`DiagnosticReport/${id} was not found`);
  const byRef = new Map(
    resources
      .filter((r) => r?.resourceType === 'Observation')
      .map((r) => [`Observation/${r?.id}`, r as unknown as Observation]),
  );
  const observations = (report.result ?? [])
    .map((r) => byRef.get(r.reference ?? ''))
    .filter((o): o is Observation => !!o);
  const keys = [...new Set(observations.filter((o) => o.code?.coding?.[0]?.code).map(analyteKey))];
  const history: Record<string, Observation[]> = {};
  if (keys.length && report.subject?.reference) {
    const response = await client.executeBatch({
      resourceType: 'Bundle',
      type: 'batch',
      entry: keys.map((key) => ({
        request: {
          method: 'GET',
          url: `Observation?subject=${encodeURIComponent(report.subject?.reference ?? '')}&code=${encodeURIComponent(key)}&_sort=-date&_count=${historyCount}`,
        },
      })),
    });
    (response.entry ?? []).forEach((entry, i) => {
      history[keys[i]] = ((entry.resource as Bundle | undefined)?.entry ?? []).map((e) => e.resource as Observation);
    });
  }
  return { report, observations, history };
}

/** An Observation's interpretation flag (HL7 v3 code), when it has one of the lab flags. */
export function observationFlag(o: Observation): LabFlag | undefined {
  for (const coding of (o.interpretation ?? []).flatMap((i) => i.coding ?? [])) {
    if (coding.system === OBSERVATION_INTERPRETATION && coding.code && coding.code in LAB_FLAG_DISPLAY) {
      return coding.code as LabFlag;
    }
  }
  return undefined;
}

/** The result of the same analyte taken before this one, and the change in value when both are numbers in the same unit. */
export function previousResult(o: Observation, history: Observation[]): { previous?: Observation; change?: number } {
  const time = resultTime(o) ?? '';
  const previous = history
    .filter((h) => h.id !== o.id && (resultTime(h) ?? '') < time)
    .sort((a, b) => (resultTime(b) ?? '').localeCompare(resultTime(a) ?? ''))[0];
  const now = o.valueQuantity;
  const before = previous?.valueQuantity;
  const change =
    typeof now?.value === 'number' &&
    typeof before?.value === 'number' &&
    (now.code ?? now.unit) === (before.code ?? before.unit)
      ? Math.round((now.value - before.value) * 1000) / 1000
      : undefined;
  return { previous, change };
}
