/**
 * OpenTelemetry traces, exported over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT (or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set, and nothing at all otherwise: the SDK is not even
 * loaded, no hook is added, and the recorders get no tracer. The exporter reads the standard
 * OTEL_* variables itself (headers, timeout, service name).
 *
 * Tracing is process-wide (one context manager, one provider), so the first start sets it up and
 * later servers in the same process share it.
 */
import { context, propagation, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { version } from '../version.js';

export interface TracedTask {
  /** The W3C trace context of the task's span, for the process that runs it. */
  carrier: Record<string, string>;
  end(outcome: string): void;
}

export interface Tracing {
  readonly tracer: Tracer;
  /** A span for one inference task, child of whatever span is active (the request's). */
  startTask(process: string, kind: string): TracedTask;
  /** Sends what is buffered (at shutdown). */
  flush(): Promise<void>;
}

export function tracingWanted(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED === 'true' || env.OTEL_TRACES_EXPORTER === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

let started: Promise<Tracing> | undefined;

/** The process's tracing, started on first call; undefined when no OTLP endpoint is configured. */
export function startTracing(serviceName = 'parley', env: NodeJS.ProcessEnv = process.env): Promise<Tracing> | undefined {
  if (!tracingWanted(env)) return undefined;
  return (started ??= setUp(env.OTEL_SERVICE_NAME || serviceName));
}

async function setUp(serviceName: string): Promise<Tracing> {
  const [{ BasicTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }, { W3CTraceContextPropagator }, { AsyncLocalStorageContextManager }] =
    await Promise.all([
      import('@opentelemetry/sdk-trace-base'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/core'),
      import('@opentelemetry/context-async-hooks'),
    ]);
  // Short batches: spans of a request show up within a second, and few are lost at a crash.
  const processor = new BatchSpanProcessor(new OTLPTraceExporter(), { scheduledDelayMillis: 500 });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName, 'service.version': version }),
    spanProcessors: [processor],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  const tracer = provider.getTracer('parley', version);
  return {
    tracer,
    startTask(process, kind) {
      const span = tracer.startSpan(`inference ${kind}`, { kind: SpanKind.CLIENT, attributes: { 'parley.inference.process': process, 'parley.task.kind': kind } });
      const carrier: Record<string, string> = {};
      propagation.inject(trace.setSpan(context.active(), span), carrier);
      return {
        carrier,
        end(outcome) {
          span.setAttribute('parley.task.outcome', outcome);
          if (outcome !== 'ok' && outcome !== 'aborted') span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
          span.end();
        },
      };
    },
    flush: () => provider.forceFlush(),
  };
}


/** The module an inference process imports first to trace (compiled, or its source under tsx), as a file URL. */
export function inferenceTracingPreload(): string {
  const compiled = new URL('./inference-tracing.js', import.meta.url);
  return existsSync(fileURLToPath(compiled)) ? compiled.href : compiled.href.replace(/\.js$/, '.ts');
}
