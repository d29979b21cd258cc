import { resolve } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { HearthMetrics } from './metrics.js';
import { createTelemetry } from './setup.js';

describe('createTelemetry', () => {
  it('builds nothing without a metrics token or an OTLP endpoint', async () => {
    expect(await createTelemetry({ metricsToken: '', otelEndpoint: '' }, {})).toEqual({ metrics: undefined });
  });

  it('builds metrics alone for /metrics, no tracer', async () => {
    const telemetry = await createTelemetry({ metricsToken: 't', otelEndpoint: '' }, {});
    expect(telemetry.metrics).toBeInstanceOf(HearthMetrics);
    expect(telemetry.tracer).toBeUndefined();
  });

  it('leaves OpenTelemetry off with OTEL_SDK_DISABLED, and refuses a protocol it does not speak', async () => {
    const off = await createTelemetry(
      { metricsToken: '', otelEndpoint: 'http://127.0.0.1:1' },
      { OTEL_SDK_DISABLED: 'true' },
    );
    expect(off.tracer).toBeUndefined();
    await expect(
      createTelemetry(
        { metricsToken: '', otelEndpoint: 'http://127.0.0.1:1' },
        { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' },
      ),
    ).rejects.toThrow(/http\/protobuf or http\/json/);
  });

  it('imports the SDK only dynamically, so that a bundled server without OTLP never loads it', async () => {
    const result = await build({
      entryPoints: [resolve(import.meta.dirname, 'setup.ts')],
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'node',
      packages: 'external',
      logLevel: 'silent',
    });
    const text = result.outputFiles[0].text;
    const statics = [...text.matchAll(/^import\s[^;]*?\sfrom\s"([^"]+)";/gms)].map((m) => m[1]);
    expect(statics.filter((name) => name.startsWith('@opentelemetry/'))).toEqual(['@opentelemetry/api']);
    expect(text).toContain('import("@opentelemetry/sdk-trace-node")');
    expect(text).toContain('import("@opentelemetry/sdk-metrics")');
  });
});
