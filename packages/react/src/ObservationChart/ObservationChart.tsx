import { Paper, Text, Title } from '@mantine/core';
import { formatCodeableConcept, formatDateTime, type Observation } from '@hearth/core';
import type { ReactNode } from 'react';
import {
  CartesianGrid,
  Legend,
  Line,
  LineChart,
  ReferenceArea,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from 'recharts';

export interface ObservationChartProps {
  /** Observations of one kind (one code), in any order. */
  observations: Observation[];
  title?: string;
  /** Fixed size; default: the container's width and 240 px high. */
  width?: number;
  height?: number;
}

interface Series {
  key: string;
  name: string;
  unit: string;
  low?: number;
  high?: number;
}

const COLORS = ['#228be6', '#e8590c', '#2f9e44', '#9c36b5'];

function when(o: Observation): string | undefined {
  return o.effectiveDateTime ?? o.effectivePeriod?.start ?? o.effectiveInstant ?? o.issued;
}

/**
 * Values of an Observation kind over time (vital signs, lab results): one line per value (or
 * per component, as for blood pressure), units on the axis and in the tooltip, and the
 * reference range (Observation.referenceRange) shaded.
 */
export function ObservationChart({ observations, title, width, height = 240 }: ObservationChartProps): ReactNode {
  const sorted = observations
    .filter((o) => when(o))
    .sort((a, b) => (when(a) as string).localeCompare(when(b) as string));
  const series = new Map<string, Series>();
  const rows = sorted.map((o) => {
    const row: Record<string, number | string> = { time: new Date(when(o) as string).getTime() };
    const values: {
      key: string;
      name: string;
      quantity?: { value?: number; unit?: string; code?: string };
      range?: Observation['referenceRange'];
    }[] = [];
    if (o.valueQuantity) {
      values.push({
        key: 'value',
        name: formatCodeableConcept(o.code),
        quantity: o.valueQuantity,
        range: o.referenceRange,
      });
    }
    for (const c of o.component ?? []) {
      if (c.valueQuantity) {
        const name = formatCodeableConcept(c.code);
        values.push({
          key: c.code.coding?.[0]?.code ?? name,
          name,
          quantity: c.valueQuantity,
          range: c.referenceRange,
        });
      }
    }
    for (const v of values) {
      if (typeof v.quantity?.value !== 'number') continue;
      row[v.key] = v.quantity.value;
      if (!series.has(v.key)) {
        const range = v.range?.[0];
        series.set(v.key, {
          key: v.key,
          name: v.name,
          unit: v.quantity.unit ?? v.quantity.code ?? '',
          low: range?.low?.value,
          high: range?.high?.value,
        });
      }
    }
    return row;
  });
  const list = [...series.values()];
  const label = title ?? (sorted[0] ? formatCodeableConcept(sorted[0].code) : 'Observations');
  const unit = [...new Set(list.map((s) => s.unit).filter(Boolean))].join(', ');
  const latest = rows[rows.length - 1];
  // The y axis spans the values and the reference ranges, with a little room around them.
  const ys = [
    ...rows.flatMap((r) => list.map((s) => r[s.key]).filter((v): v is number => typeof v === 'number')),
    ...list.flatMap((s) => [s.low, s.high].filter((v): v is number => v !== undefined)),
  ];
  const pad = ys.length ? Math.max((Math.max(...ys) - Math.min(...ys)) * 0.1, 1) : 1;
  const yDomain: [number, number] = ys.length
    ? [Math.floor(Math.min(...ys) - pad), Math.ceil(Math.max(...ys) + pad)]
    : [0, 1];
  const summary = latest ? list.map((s) => `${s.name}: ${latest[s.key] ?? '—'} ${s.unit}`).join('; ') : 'No values';

  const chart = (
    <LineChart
      width={width}
      height={width ? height : undefined}
      data={rows}
      margin={{ top: 8, right: 16, bottom: 8, left: 8 }}
    >
      <CartesianGrid strokeDasharray="3 3" />
      <XAxis
        dataKey="time"
        type="number"
        scale="time"
        domain={['dataMin', 'dataMax']}
        tickFormatter={(t: number) => new Date(t).toLocaleDateString()}
      />
      <YAxis label={{ value: unit, angle: -90, position: 'insideLeft' }} domain={yDomain} />
      <Tooltip
        // On a phone the chart is narrower than a one-line tooltip: let it wrap inside the chart.
        wrapperStyle={{ maxWidth: '75%' }}
        contentStyle={{ whiteSpace: 'normal' }}
        labelFormatter={(t) => formatDateTime(new Date(t as number).toISOString())}
        formatter={(value, name) => {
          const s = list.find((x) => x.name === name);
          return [`${value} ${s?.unit ?? ''}`, name];
        }}
      />
      {list.length > 1 && <Legend />}
      {list.map(
        (s, i) =>
          (s.low !== undefined || s.high !== undefined) && (
            <ReferenceArea
              key={`range-${s.key}`}
              y1={s.low}
              y2={s.high}
              fill={COLORS[i % COLORS.length]}
              fillOpacity={0.08}
              ifOverflow="hidden"
              label={
                list.length === 1 ? { value: 'reference range', position: 'insideTopRight', fontSize: 11 } : undefined
              }
            />
          ),
      )}
      {list.map((s, i) => (
        <Line
          key={s.key}
          dataKey={s.key}
          name={s.name}
          type="linear"
          stroke={COLORS[i % COLORS.length]}
          dot
          isAnimationActive={false}
          connectNulls
        />
      ))}
    </LineChart>
  );
  return (
    // Clipped: a tooltip near the edge never widens the page (no sideways scrolling on phones).
    <Paper withBorder p="sm" role="figure" aria-label={`${label} chart`} style={{ overflow: 'hidden' }}>
      <Title order={5}>{label}</Title>
      <Text size="xs" c="dimmed" mb={4}>
        Latest: {summary}
      </Text>
      {width ? (
        chart
      ) : (
        <ResponsiveContainer width="100%" height={height}>
          {chart}
        </ResponsiveContainer>
      )}
    </Paper>
  );
}

/** Observations grouped by their first code (LOINC for vital signs), largest group first. */
export function groupByCode(observations: Observation[]): { code: string; observations: Observation[] }[] {
  const groups = new Map<string, Observation[]>();
  for (const o of observations) {
    const coding = o.code?.coding?.[0];
    const key = coding ? `${coding.system ?? ''}|${coding.code ?? ''}` : (o.code?.text ?? '');
    groups.set(key, [...(groups.get(key) ?? []), o]);
  }
  return [...groups.entries()]
    .map(([code, list]) => ({ code, observations: list }))
    .sort((a, b) => b.observations.length - a.observations.length);
}
