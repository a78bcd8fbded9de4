// The spans refsync makes, through the OpenTelemetry API alone. With tracing off no SDK is
// registered, so these are the API's no-op spans: nothing recorded, nothing exported, and no trace
// context put into a job. With tracing on (start.ts), a run is one trace across processes: the
// context travels in the job data as W3C trace-context fields, as the run id already does.
import { context, createContextKey, propagation, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';

/** W3C trace context (`traceparent`, perhaps `tracestate`) carried in a job's data. */
export type TraceCarrier = Record<string, string>;

/** Marks the context of a target's sync: only requests made there become client spans (sdk.ts). */
const IN_TARGET = createContextKey('refsync.target');

function tracer() {
  return trace.getTracer('refsync');
}

/** The active trace context, to carry in a job; undefined when tracing is off or nothing is traced. */
export function traceCarrier(): TraceCarrier | undefined {
  const carrier: TraceCarrier = {};
  propagation.inject(context.active(), carrier);
  return Object.keys(carrier).length > 0 ? carrier : undefined;
}

/** Whether the code runs inside a target's span (its upstream requests are traced, nothing else). */
export function insideTarget(): boolean {
  return context.active().getValue(IN_TARGET) === true;
}

export interface SpanOptions {
  attributes: Attributes;
  /** The trace context the job brought: the span continues that trace. */
  parent?: TraceCarrier | undefined;
  /** A target's span: upstream requests under it become its client spans. */
  target?: boolean;
}

/**
 * Runs fn inside a new active span and ends it when fn settles; a thrown error marks it failed with
 * the error's first line (refsync's error messages carry no secret) unless `expected` says it is
 * part of the job's normal course (a job put back for later).
 */
export function inSpan<T>(name: string, options: SpanOptions, fn: (span: Span) => Promise<T>, expected: (err: unknown) => boolean = () => false): Promise<T> {
  let parent = options.parent ? propagation.extract(context.active(), options.parent) : context.active();
  if (options.target) parent = parent.setValue(IN_TARGET, true);
  return tracer().startActiveSpan(name, { attributes: options.attributes }, parent, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      if (!expected(err)) span.setStatus({ code: SpanStatusCode.ERROR, message: String((err as Error)?.message ?? err).split('\n')[0] });
      throw err;
    } finally {
      span.end();
    }
  });
}
