import type { Tracer } from '@opentelemetry/api';
import type { Registry } from 'prom-client';
import { PrometheusMetricProducer } from './otlp-metrics.js';

export interface OtelOptions {
  /** OTEL_EXPORTER_OTLP_ENDPOINT: the collector's (or Datadog Agent's) OTLP/HTTP base URL. */
  endpoint: string;
  serviceVersion: string;
  /** The metrics to export over OTLP as well (Hearth's Prometheus registry). */
  registry?: Registry;
  /** The standard OTEL_* variables: protocol, signal endpoints, exporters, interval, service name. */
  env: NodeJS.ProcessEnv;
}

export interface OtelSdk {
  tracer?: Tracer;
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

type Signal = 'traces' | 'metrics';

/**
 * Starts OpenTelemetry's SDK for Node: a tracer provider (async-local context, W3C trace context
 * propagation, the sampler of OTEL_TRACES_SAMPLER) whose spans go in batches to the OTLP endpoint,
 * and a periodic metric reader that exports Hearth's Prometheus registry over OTLP.
 *
 * Every SDK package is imported here, lazily: main.ts only imports this module when
 * OTEL_EXPORTER_OTLP_ENDPOINT is set, and the bundle keeps dynamic imports of npm packages
 * dynamic, so a server without it never loads the SDK.
 *
 * Protocols: http/protobuf (the OpenTelemetry default) and http/json, from
 * OTEL_EXPORTER_OTLP_PROTOCOL or OTEL_EXPORTER_OTLP_{TRACES,METRICS}_PROTOCOL. Headers
 * (OTEL_EXPORTER_OTLP_HEADERS), timeouts and compression are read by the exporters themselves.
 */
export async function startOpenTelemetry(options: OtelOptions): Promise<OtelSdk> {
  const { env } = options;
  const api = await import('@opentelemetry/api');
  const { resourceFromAttributes, detectResources, envDetector, hostDetector, processDetector } =
    await import('@opentelemetry/resources');
  const resource = resourceFromAttributes({
    'service.name': env.OTEL_SERVICE_NAME || 'hearth',
    'service.version': options.serviceVersion,
  }).merge(detectResources({ detectors: [hostDetector, processDetector, envDetector] }));
  const stops: (() => Promise<void>)[] = [];
  const flushes: (() => Promise<void>)[] = [];

  let tracer: Tracer | undefined;
  if (exporterWanted(env.OTEL_TRACES_EXPORTER)) {
    const { NodeTracerProvider, BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-node');
    const protocol = protocolOf(env, 'traces');
    const { OTLPTraceExporter } =
      protocol === 'http/json'
        ? await import('@opentelemetry/exporter-trace-otlp-http')
        : await import('@opentelemetry/exporter-trace-otlp-proto');
    const exporter = new OTLPTraceExporter(signalUrl(options.endpoint, env, 'traces'));
    const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
    provider.register();
    tracer = api.trace.getTracer('hearth', options.serviceVersion);
    stops.push(() => provider.shutdown());
    flushes.push(() => provider.forceFlush());
  }

  if (options.registry && exporterWanted(env.OTEL_METRICS_EXPORTER)) {
    const sdk = await import('@opentelemetry/sdk-metrics');
    const protocol = protocolOf(env, 'metrics');
    const { OTLPMetricExporter } =
      protocol === 'http/json'
        ? await import('@opentelemetry/exporter-metrics-otlp-http')
        : await import('@opentelemetry/exporter-metrics-otlp-proto');
    const producer = new PrometheusMetricProducer(options.registry, {
      histogram: sdk.DataPointType.HISTOGRAM,
      gauge: sdk.DataPointType.GAUGE,
      sum: sdk.DataPointType.SUM,
      cumulative: sdk.AggregationTemporality.CUMULATIVE,
    });
    const interval = Number(env.OTEL_METRIC_EXPORT_INTERVAL);
    const reader = new sdk.PeriodicExportingMetricReader({
      exporter: new OTLPMetricExporter(signalUrl(options.endpoint, env, 'metrics')),
      metricProducers: [producer],
      exportIntervalMillis: Number.isInteger(interval) && interval > 0 ? interval : 60_000,
    });
    const meters = new sdk.MeterProvider({ resource, readers: [reader] });
    stops.push(() => meters.shutdown());
    flushes.push(() => meters.forceFlush());
  }

  return {
    tracer,
    async flush() {
      await Promise.all(flushes.map((flush) => flush()));
    },
    async shutdown() {
      await Promise.allSettled(stops.map((stop) => stop()));
    },
  };
}

/** OTEL_TRACES_EXPORTER / OTEL_METRICS_EXPORTER: unset or `otlp` exports; `none` turns the signal off. */
function exporterWanted(value: string | undefined): boolean {
  const v = (value ?? '').trim().toLowerCase();
  if (v === '' || v === 'otlp') {
    return true;
  }
  if (v === 'none') {
    return false;
  }
  throw new Error(`OTEL exporter "${value}" is not supported by Hearth: use otlp or none`);
}

function protocolOf(env: NodeJS.ProcessEnv, signal: Signal): 'http/json' | 'http/protobuf' {
  const specific =
    signal === 'traces' ? env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL : env.OTEL_EXPORTER_OTLP_METRICS_PROTOCOL;
  const value = (specific || env.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf').trim();
  if (value !== 'http/json' && value !== 'http/protobuf') {
    throw new Error(
      `OTEL_EXPORTER_OTLP_PROTOCOL "${value}" is not supported by Hearth: use http/protobuf or http/json`,
    );
  }
  return value;
}

/**
 * The signal's URL: OTEL_EXPORTER_OTLP_{TRACES,METRICS}_ENDPOINT as given when set (the exporter
 * reads it), otherwise the base endpoint with /v1/traces or /v1/metrics (as the specification
 * derives it; given here because the endpoint may come from the config file rather than the environment).
 */
function signalUrl(endpoint: string, env: NodeJS.ProcessEnv, signal: Signal): { url?: string } {
  const specific =
    signal === 'traces' ? env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT : env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT;
  return specific ? {} : { url: `${endpoint.replace(/\/+$/, '')}/v1/${signal}` };
}
