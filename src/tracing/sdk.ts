// The OpenTelemetry SDK, loaded only when tracing is on (start.ts imports this file dynamically):
// a tracer provider with the batch span processor and the OTLP/HTTP exporter of the configured
// protocol, W3C trace-context propagation, AsyncLocalStorage context, and undici's instrumentation
// for the upstream requests made inside a target's span.
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace';
import type { Logger } from '../util/logger.ts';
import { settlesWithin } from '../util/time-limit.ts';
import { WarnOnceExporter } from './warn-once-exporter.ts';
import type { SamplerSetting, TracingSettings } from './settings.ts';
import { insideTarget } from './spans.ts';
import type { Tracing } from './start.ts';

function samplerOf(setting: SamplerSetting): Sampler {
  switch (setting.kind) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(setting.ratio);
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(setting.ratio) });
  }
}

/** The exporter reads its endpoint, headers, timeout and compression from the OTEL_EXPORTER_OTLP_* variables itself. */
async function exporterFor(settings: TracingSettings): Promise<SpanExporter> {
  if (settings.protocol === 'http/json') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    return new OTLPTraceExporter();
  }
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
  return new OTLPTraceExporter();
}

/** The collector's host, for the one warning when it cannot be reached (never its headers). */
function collectorHost(env: Record<string, string | undefined>): string {
  const url = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || '';
  try {
    return new URL(url).host;
  } catch {
    return 'the OTLP endpoint';
  }
}

/**
 * service.name (OTEL_SERVICE_NAME, else a service.name of OTEL_RESOURCE_ATTRIBUTES, else refsync),
 * process.pid, and the other OTEL_RESOURCE_ATTRIBUTES.
 */
function resourceOf(settings: TracingSettings, env: Record<string, string | undefined>) {
  const base = resourceFromAttributes({ 'service.name': 'refsync', 'process.pid': process.pid }).merge(detectResources({ detectors: [envDetector] }));
  return env.OTEL_SERVICE_NAME?.trim() ? base.merge(resourceFromAttributes({ 'service.name': settings.serviceName })) : base;
}

/** Registers the SDK globally for this process; shutdown() exports what is queued, bounded by flushTimeoutMs. */
export async function startSdk(settings: TracingSettings, logger: Logger, env: Record<string, string | undefined>): Promise<Tracing> {
  const exporter = new WarnOnceExporter(await exporterFor(settings), logger, collectorHost(env));
  const provider = new TracerProvider({
    resource: resourceOf(settings, env),
    sampler: samplerOf(settings.sampler),
    spanProcessors: [new BatchSpanProcessor({ exporter, ...settings.batch })],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  // Only requests inside a target's span: the upstream's. Webhook deliveries (whose URL may be a
  // secret, as Slack's is) and anything else never become spans. No header is recorded.
  const undici = new UndiciInstrumentation({ ignoreRequestHook: () => !insideTarget() });
  undici.setTracerProvider(provider);
  undici.enable();
  logger.info({ protocol: settings.protocol, collector: collectorHost(env), service: settings.serviceName }, 'tracing on');
  return {
    enabled: true,
    async shutdown(flushTimeoutMs = 5_000) {
      undici.disable();
      // A collector that hangs must not hold the process: what it has not taken by then is dropped.
      await settlesWithin(provider.shutdown(), flushTimeoutMs);
    },
  };
}
