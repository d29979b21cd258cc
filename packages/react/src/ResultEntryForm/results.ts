import {
  interpretText,
  interpretValue,
  LAB_FLAG_DISPLAY,
  labAnalytesOf,
  LOINC,
  OBSERVATION_INTERPRETATION,
  REVIEW_RESULT,
  UCUM,
  type Bundle,
  type DiagnosticReport,
  type LabAnalyte,
  type LabFlag,
  type Observation,
  type Reference,
  type ServiceRequest,
  type Task,
} from '@hearth/core';

/** One result row being entered. */
export interface ResultRow {
  analyte: LabAnalyte;
  /** The number typed (quantitative) or the text chosen (ordinal). */
  value?: number | string;
  low?: number;
  high?: number;
}

/** The rows to enter for an order: its analytes with their catalogue ranges, or the ordered code itself. */
export function resultRows(order: ServiceRequest): ResultRow[] {
  const coding = order.code?.coding?.find((c) => c.system === LOINC) ?? order.code?.coding?.[0];
  const analytes = coding?.system === LOINC ? labAnalytesOf(coding.code) : [];
  if (analytes.length) return analytes.map((analyte) => ({ analyte, low: analyte.low, high: analyte.high }));
  return [
    {
      analyte: {
        code: coding?.code ?? '',
        display: coding?.display ?? order.code?.text ?? 'Result',
        label: coding?.display ?? order.code?.text ?? 'Result',
        unit: '',
      },
    },
  ];
}

/** A row's interpretation as typed: H/L against its range, HH/LL beyond the critical limits. */
export function rowFlag(row: ResultRow): LabFlag | undefined {
  if (typeof row.value === 'number') {
    return interpretValue(row.value, {
      low: row.low,
      high: row.high,
      criticalLow: row.analyte.criticalLow,
      criticalHigh: row.analyte.criticalHigh,
    });
  }
  if (typeof row.value === 'string') return interpretText(row.value, row.analyte.normalText);
  return undefined;
}

/** Problems with the rows, by analyte code: nothing entered, or a range whose low is above its high. */
export function resultErrors(rows: ResultRow[]): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const row of rows) {
    if (row.low !== undefined && row.high !== undefined && row.low > row.high) {
      errors[row.analyte.code] = "The range's low is above its high";
    }
  }
  if (!rows.some((r) => r.value !== undefined && r.value !== '')) errors[''] = 'Enter at least one result';
  return errors;
}

export interface ResultContext {
  order: ServiceRequest;
  /** Who entered and is responsible for the result (the signed-in practitioner). */
  performer?: Reference;
  /** When the specimen was collected. */
  effective: string;
  issued: string;
  conclusion?: string;
}

/**
 * The transaction recording an order's result: one Observation per entered row (value with its
 * UCUM unit, the reference range it was judged against, the H/L/HH/LL/A interpretation), the
 * DiagnosticReport grouping them, the order set to completed (conditional on the version read),
 * and a review Task for the ordering practitioner (the results inbox). All or nothing.
 */
export function resultTransaction(rows: ResultRow[], context: ResultContext, uuid: () => string): Bundle {
  const { order, performer, effective, issued } = context;
  const basedOn = [{ reference: `ServiceRequest/${order.id}` }];
  const category = [
    {
      coding: [
        {
          system: 'http://terminology.hl7.org/CodeSystem/observation-category',
          code: 'laboratory',
          display: 'Laboratory',
        },
      ],
    },
  ];
  const observations = rows
    .filter((r) => r.value !== undefined && r.value !== '')
    .map((row) => {
      const flag = rowFlag(row);
      const { analyte } = row;
      const observation: Observation = {
        resourceType: 'Observation',
        status: 'final',
        category,
        code: analyte.code
          ? { coding: [{ system: LOINC, code: analyte.code, display: analyte.display }], text: analyte.label }
          : { text: analyte.label },
        subject: order.subject,
        encounter: order.encounter,
        basedOn,
        effectiveDateTime: effective,
        issued,
        performer: performer ? [performer] : undefined,
        ...(typeof row.value === 'number'
          ? {
              valueQuantity: {
                value: row.value,
                unit: analyte.unit,
                ...(analyte.unit ? { system: UCUM, code: analyte.unit } : {}),
              },
            }
          : { valueString: row.value as string }),
        interpretation: flag
          ? [{ coding: [{ system: OBSERVATION_INTERPRETATION, code: flag, display: LAB_FLAG_DISPLAY[flag] }] }]
          : undefined,
        referenceRange:
          row.low !== undefined || row.high !== undefined
            ? [
                {
                  low: row.low !== undefined ? quantity(row.low, analyte.unit) : undefined,
                  high: row.high !== undefined ? quantity(row.high, analyte.unit) : undefined,
                },
              ]
            : analyte.normalText
              ? [{ text: analyte.normalText }]
              : undefined,
      };
      return { fullUrl: `urn:uuid:${uuid()}`, resource: strip(observation) };
    });
  const reportUrl = `urn:uuid:${uuid()}`;
  const report: DiagnosticReport = {
    resourceType: 'DiagnosticReport',
    status: 'final',
    category: [
      {
        coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v2-0074', code: 'LAB', display: 'Laboratory' }],
      },
    ],
    code: order.code ?? { text: 'Laboratory report' },
    subject: order.subject,
    encounter: order.encounter,
    basedOn,
    effectiveDateTime: effective,
    issued,
    performer: performer ? [performer] : undefined,
    result: observations.map((o) => ({ reference: o.fullUrl })),
    conclusion: context.conclusion || undefined,
  };
  const entries: NonNullable<Bundle['entry']> = [
    ...observations.map((o) => ({ ...o, request: { method: 'POST' as const, url: 'Observation' } })),
    { fullUrl: reportUrl, resource: strip(report), request: { method: 'POST', url: 'DiagnosticReport' } },
    {
      resource: { ...order, status: 'completed' },
      request: {
        method: 'PUT',
        url: `ServiceRequest/${order.id}`,
        ...(order.meta?.versionId ? { ifMatch: `W/"${order.meta.versionId}"` } : {}),
      },
    },
  ];
  if (order.requester) {
    const task: Task = {
      resourceType: 'Task',
      status: 'requested',
      intent: 'order',
      priority: order.priority,
      code: { coding: [REVIEW_RESULT], text: 'Review result' },
      description: `Review the result of ${order.code?.text ?? order.code?.coding?.[0]?.display ?? 'a lab order'}`,
      focus: { reference: reportUrl },
      basedOn,
      for: order.subject,
      authoredOn: issued,
      requester: performer,
      owner: order.requester,
    };
    entries.push({ fullUrl: `urn:uuid:${uuid()}`, resource: strip(task), request: { method: 'POST', url: 'Task' } });
  }
  return { resourceType: 'Bundle', type: 'transaction', entry: entries };
}

function quantity(value: number, unit: string | undefined) {
  return { value, unit, ...(unit ? { system: UCUM, code: unit } : {}) };
}

/** Drops undefined members (JSON has no undefined). */
function strip<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
