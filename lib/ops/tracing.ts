// OpenTelemetry traces, on when OTEL_EXPORTER_OTLP_ENDPOINT is set (the OTLP/HTTP exporter reads it and
// the other standard OTEL_EXPORTER_OTLP_* variables itself). Spans: each agent API request (with its
// request id and actor), the ledger commands under it (claim, transition), each replay chunk and, under
// the chunk, each item's claim and provider send. With tracing off, traced() calls its function
// directly: no span object, no context switch, nothing allocated.
import { context, propagation, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { env } from '../env.ts';

const TRACER = 'effect-ledger';
const holder = globalThis as unknown as { __ledgerTracing?: NodeTracerProvider };

export interface Tracing {
  /** Exports what is still buffered, then stops tracing in this process. */
  shutdown(): Promise<void>;
}

/**
 * Starts tracing for this process, as `service` (OTEL_SERVICE_NAME overrides it). Without an exporter
 * given, exports over OTLP/HTTP in batches; a test passes an in-memory one, exported span by span.
 */
export function startTracing(service: string, exporter?: SpanExporter): Tracing {
  if (holder.__ledgerTracing) throw new Error('tracing already started in this process');
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': env().OTEL_SERVICE_NAME || service }),
    spanProcessors: [exporter ? new SimpleSpanProcessor(exporter) : new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  provider.register(); // global tracer provider, async-hooks context manager, W3C propagation
  holder.__ledgerTracing = provider;
  return {
    async shutdown() {
      holder.__ledgerTracing = undefined;
      await provider.shutdown();
      trace.disable();
    },
  };
}

/** Starts tracing when OTEL_EXPORTER_OTLP_ENDPOINT is set; undefined (and no cost) otherwise. */
export function startTracingFromEnv(service: string): Tracing | undefined {
  return env().OTEL_EXPORTER_OTLP_ENDPOINT ? startTracing(service) : undefined;
}

const headerGetter = {
  get: (headers: Headers, key: string) => headers.get(key) ?? undefined,
  keys: (headers: Headers) => [...headers.keys()],
};

export const tracingOn = (): boolean => holder.__ledgerTracing !== undefined;

/**
 * Runs `fn` inside a span `name`, a child of the current span; an error thrown ends the span as an
 * error. With tracing off, runs `fn` as it is (span undefined).
 */
export function traced<T>(
  name: string,
  attributes: Attributes,
  fn: (span?: Span) => Promise<T>,
  incoming?: Headers,
): Promise<T> {
  if (!holder.__ledgerTracing) return fn();
  // A request's span continues the caller's trace (W3C traceparent) unless it is already inside one
  // (the web server's own request span).
  const active = context.active();
  const parent = incoming && !trace.getSpan(active) ? propagation.extract(active, incoming, headerGetter) : active;
  return trace.getTracer(TRACER).startActiveSpan(name, { attributes }, parent, async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
      throw error;
    } finally {
      span.end();
    }
  });
}
