import type { Config } from '../config/schema.js';
import { HEARTH_VERSION } from '../version.js';
import { HearthMetrics } from './metrics.js';
import type { Telemetry } from './telemetry.js';

/**
 * The process's telemetry from its configuration, built once at start-up (main.ts, the test app):
 * metrics when /metrics is guarded by a token or OTLP is on; OpenTelemetry's SDK (traces, and the
 * metrics over OTLP) only when OTEL_EXPORTER_OTLP_ENDPOINT is set, imported then and only then.
 */
export async function createTelemetry(
  config: Pick<Config, 'metricsToken' | 'otelEndpoint'>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Telemetry> {
  const metrics = config.metricsToken || config.otelEndpoint ? new HearthMetrics() : undefined;
  if (!config.otelEndpoint || env.OTEL_SDK_DISABLED === 'true') {
    return { metrics };
  }
  const { startOpenTelemetry } = await import('./otel.js');
  const sdk = await startOpenTelemetry({
    endpoint: config.otelEndpoint,
    serviceVersion: HEARTH_VERSION,
    registry: metrics?.registry,
    env,
  });
  return { metrics, tracer: sdk.tracer, flush: () => sdk.flush(), shutdown: () => sdk.shutdown() };
}
