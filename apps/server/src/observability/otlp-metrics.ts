import { ValueType, type Attributes, type HrTime } from '@opentelemetry/api';
import type { CollectionResult, DataPoint, Histogram, MetricData, MetricProducer } from '@opentelemetry/sdk-metrics';
import type { Registry } from 'prom-client';

/**
 * The enum values the SDK's metric data uses, handed in by whoever loaded the SDK (otel.ts imports
 * it lazily: a static import here would load it in every process).
 */
export interface MetricDataKinds {
  histogram: number;
  gauge: number;
  sum: number;
  cumulative: number;
}

interface PromValue {
  value: number;
  labels: Record<string, string | number | undefined>;
  metricName?: string;
}

interface PromMetric {
  name: string;
  help: string;
  type: string;
  values: PromValue[];
}

/**
 * Hearth's Prometheus registry as an OpenTelemetry MetricProducer: the OTLP metric reader collects
 * the same metrics /metrics serves, so each is declared and counted once (observability/metrics.ts).
 * Counters become monotonic cumulative sums, gauges gauges, histograms explicit-bucket histograms
 * (Prometheus' cumulative `le` buckets turned into per-bucket counts).
 */
export class PrometheusMetricProducer implements MetricProducer {
  private readonly startTime: HrTime;

  constructor(
    private readonly registry: Registry,
    private readonly kinds: MetricDataKinds,
    startTimeMs = Date.now(),
  ) {
    this.startTime = toHrTime(startTimeMs);
  }

  async collect(): Promise<CollectionResult> {
    const now = toHrTime(Date.now());
    const metrics: MetricData[] = [];
    for (const metric of (await this.registry.getMetricsAsJSON()) as unknown as PromMetric[]) {
      const converted = this.convert(metric, now);
      if (converted) {
        metrics.push(converted);
      }
    }
    return {
      resourceMetrics: {
        // The reader keeps the SDK's own resource; this one is dropped when merged.
        resource: undefined as never,
        scopeMetrics: [{ scope: { name: 'hearth' }, metrics }],
      },
      errors: [],
    };
  }

  private convert(metric: PromMetric, now: HrTime): MetricData | undefined {
    const descriptor = {
      name: metric.name,
      description: metric.help,
      unit: unitOf(metric.name),
      valueType: ValueType.DOUBLE,
    };
    const point = <T>(labels: PromValue['labels'], value: T): DataPoint<T> => ({
      startTime: this.startTime,
      endTime: now,
      attributes: attributesOf(labels),
      value,
    });
    switch (metric.type) {
      case 'counter':
        return {
          descriptor,
          aggregationTemporality: this.kinds.cumulative,
          dataPointType: this.kinds.sum,
          isMonotonic: true,
          dataPoints: metric.values.map((v) => point(v.labels, v.value)),
        } as MetricData;
      case 'gauge':
        return {
          descriptor,
          aggregationTemporality: this.kinds.cumulative,
          dataPointType: this.kinds.gauge,
          dataPoints: metric.values.map((v) => point(v.labels, v.value)),
        } as MetricData;
      case 'histogram':
        return {
          descriptor,
          aggregationTemporality: this.kinds.cumulative,
          dataPointType: this.kinds.histogram,
          dataPoints: histogramPoints(metric).map(([labels, value]) => point(labels, value)),
        } as MetricData;
      default:
        // Summaries: Hearth declares none.
        return undefined;
    }
  }
}

/** Groups a Prometheus histogram's `_bucket`, `_sum` and `_count` series by their labels. */
export function histogramPoints(metric: PromMetric): [PromValue['labels'], Histogram][] {
  const series = new Map<string, { labels: PromValue['labels']; le: [number, number][]; sum: number; count: number }>();
  for (const v of metric.values) {
    const { le, ...labels } = v.labels;
    const key = JSON.stringify(labels);
    let entry = series.get(key);
    if (!entry) {
      entry = { labels, le: [], sum: 0, count: 0 };
      series.set(key, entry);
    }
    if (v.metricName?.endsWith('_bucket')) {
      entry.le.push([le === '+Inf' ? Infinity : Number(le), v.value]);
    } else if (v.metricName?.endsWith('_sum')) {
      entry.sum = v.value;
    } else if (v.metricName?.endsWith('_count')) {
      entry.count = v.value;
    }
  }
  return [...series.values()].map((entry) => {
    entry.le.sort((a, b) => a[0] - b[0]);
    const boundaries = entry.le.filter(([bound]) => bound !== Infinity).map(([bound]) => bound);
    const counts: number[] = [];
    let below = 0;
    for (const [, cumulative] of entry.le) {
      counts.push(cumulative - below);
      below = cumulative;
    }
    // Without a +Inf bucket in the data (prom-client always writes one), the rest is above the last bound.
    if (counts.length === boundaries.length) {
      counts.push(entry.count - below);
    }
    return [entry.labels, { buckets: { boundaries, counts }, sum: entry.sum, count: entry.count }];
  });
}

function attributesOf(labels: PromValue['labels']): Attributes {
  const out: Attributes = {};
  for (const [name, value] of Object.entries(labels)) {
    if (value !== undefined) {
      out[name] = value;
    }
  }
  return out;
}

/** UCUM units from the Prometheus base-unit suffixes. */
function unitOf(name: string): string {
  if (name.endsWith('_seconds') || name.endsWith('_seconds_total')) {
    return 's';
  }
  if (name.endsWith('_bytes')) {
    return 'By';
  }
  return '';
}

function toHrTime(ms: number): HrTime {
  return [Math.floor(ms / 1000), (ms % 1000) * 1e6];
}
