import { SpanKind, SpanStatusCode, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import type { HearthMetrics } from './metrics.js';

/**
 * What the server measures, passed in from main.ts (services.ts hands it on). Both parts are
 * optional: without OTEL_EXPORTER_OTLP_ENDPOINT there is no tracer and no span is ever started
 * (the OpenTelemetry SDK is not even loaded); without HEARTH_METRICS_TOKEN and OTLP there are no
 * metrics and nothing is counted.
 */
export interface Telemetry {
  /** Hearth's tracer, when traces are exported. */
  tracer?: Tracer;
  /** Hearth's metrics, when served at /metrics or exported over OTLP. */
  metrics?: HearthMetrics;
  /** Exports the spans and metrics recorded so far, now (tests, and before a deliberate exit). */
  flush?: () => Promise<void>;
  /** Exports what is still buffered and stops the exporters (shutdown). */
  shutdown?: () => Promise<void>;
}

/** Span attribute names of Hearth's own (the rest are OpenTelemetry's semantic conventions). */
export const ATTR = {
  interaction: 'hearth.interaction',
  resourceType: 'fhir.resource_type',
  operation: 'hearth.operation',
  project: 'hearth.project',
  user: 'hearth.user',
  requestId: 'hearth.request_id',
  queue: 'hearth.job.queue',
  jobId: 'hearth.job.id',
  attempt: 'hearth.job.attempt',
  bot: 'hearth.bot',
  subscription: 'hearth.subscription',
  channel: 'hearth.subscription.channel',
} as const;

/**
 * Runs `fn` in a span of its own, the current span's child (a job's, a bot run's, a delivery's).
 * A throw marks the span as an error and is thrown on. Without a tracer, `fn` runs alone.
 */
export function inSpan<T>(
  tracer: Tracer | undefined,
  name: string,
  attributes: Attributes,
  fn: (span: Span | undefined) => Promise<T>,
  kind: SpanKind = SpanKind.INTERNAL,
): Promise<T> {
  if (!tracer) {
    return fn(undefined);
  }
  return tracer.startActiveSpan(name, { kind, attributes }, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      failSpan(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

/** Marks a span as failed with the error's type and message (never its data). */
export function failSpan(span: Span, err: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
  if (err instanceof Error) {
    span.recordException(err);
  }
}
