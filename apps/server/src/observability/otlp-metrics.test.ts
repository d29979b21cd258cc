import { describe, expect, it } from 'vitest';
import { Counter, Histogram, Registry } from 'prom-client';
import { histogramPoints, PrometheusMetricProducer } from './otlp-metrics.js';

const KINDS = { histogram: 0, gauge: 2, sum: 3, cumulative: 1 };

describe('PrometheusMetricProducer', () => {
  it('turns cumulative le buckets into per-bucket counts, one point per label set', async () => {
    const registry = new Registry();
    const histogram = new Histogram({
      name: 'x_seconds',
      help: 'x',
      labelNames: ['route'],
      buckets: [0.1, 1],
      registers: [registry],
    });
    histogram.observe({ route: 'a' }, 0.05);
    histogram.observe({ route: 'a' }, 0.5);
    histogram.observe({ route: 'a' }, 0.7);
    histogram.observe({ route: 'a' }, 3);
    histogram.observe({ route: 'b' }, 0.01);
    const [metric] = (await registry.getMetricsAsJSON()) as unknown as Parameters<typeof histogramPoints>[0][];
    const points = histogramPoints(metric);
    expect(points).toEqual([
      [{ route: 'a' }, { buckets: { boundaries: [0.1, 1], counts: [1, 2, 1] }, sum: 4.25, count: 4 }],
      [{ route: 'b' }, { buckets: { boundaries: [0.1, 1], counts: [1, 0, 0] }, sum: 0.01, count: 1 }],
    ]);
  });

  it('collects counters as monotonic cumulative sums, with units from the names', async () => {
    const registry = new Registry();
    new Counter({ name: 'y_total', help: 'y', labelNames: ['outcome'], registers: [registry] }).inc(
      { outcome: 'ok' },
      3,
    );
    new Histogram({ name: 'z_seconds', help: 'z', buckets: [1], registers: [registry] }).observe(0.5);
    const result = await new PrometheusMetricProducer(registry, KINDS, 1_700_000_000_500).collect();
    const [counter, histogram] = result.resourceMetrics.scopeMetrics[0].metrics;
    expect(counter).toMatchObject({
      descriptor: { name: 'y_total', unit: '' },
      dataPointType: KINDS.sum,
      aggregationTemporality: KINDS.cumulative,
      isMonotonic: true,
      dataPoints: [{ attributes: { outcome: 'ok' }, value: 3, startTime: [1_700_000_000, 500_000_000] }],
    });
    expect(histogram).toMatchObject({ descriptor: { name: 'z_seconds', unit: 's' }, dataPointType: KINDS.histogram });
  });
});
