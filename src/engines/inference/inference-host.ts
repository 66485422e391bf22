/**
 * Entry of a supervised inference process: the only kind of process in which Parley's server
 * runs sherpa-onnx. A native abort here (onnxruntime on an unexpected tensor, an allocation
 * failure, sherpa's own exit()) ends this process and the tasks it held, never the server, whose
 * supervisor (inference-process.ts) starts a new one.
 *
 * It takes tasks over IPC and runs them on an InferenceCore; its own event loop only passes
 * messages, so cancellations reach running tasks at once.
 */
import { context, propagation, ROOT_CONTEXT, SpanStatusCode, trace } from '@opentelemetry/api';
import { AbortedError, ModelPackError, OverloadedError } from '../../errors.js';
import { dropThisProcessFiles } from '../sherpa-hotwords.js';
import { InferenceCore } from './inference-core.js';
import type { HostHealth, HostReply, HostRequest, HostSettings, TaskFailure } from '../inference-protocol.js';

const settings = JSON.parse(process.argv[2] ?? '{}') as Partial<HostSettings>;
const core = new InferenceCore({ workers: settings.threads, queueSize: settings.queueSize, maxStreams: settings.maxStreams, streamIdleMs: settings.streamIdleMs });
const running = new Map<number, AbortController>();
// Without a registered tracer (no preload) every span below is a no-op that records nothing.
if (settings.preload) await import(settings.preload);
const tracer = trace.getTracer('parley-inference');

function send(reply: HostReply): void {
  // A supervisor that went away leaves nothing to answer to: the disconnect handler exits. The
  // callback takes a failed write (the channel closing under it) instead of an 'error' event.
  if (process.connected) process.send!(reply, undefined, undefined, () => undefined);
}

const health = (): HostHealth => ({ rss: process.memoryUsage.rss(), models: core.models });

function failure(error: unknown): { reason: TaskFailure; retryAfterSeconds?: number } {
  if (error instanceof AbortedError) return { reason: 'aborted' };
  if (error instanceof ModelPackError) return { reason: 'load' };
  if (error instanceof OverloadedError) return { reason: 'overloaded', retryAfterSeconds: error.retryAfterSeconds };
  return { reason: 'run' };
}

process.on('message', (request: HostRequest) => {
  switch (request.type) {
    case 'run': {
      const controller = new AbortController();
      running.set(request.id, controller);
      const parent = request.trace ? propagation.extract(ROOT_CONTEXT, request.trace) : ROOT_CONTEXT;
      const span = tracer.startSpan(`inference run ${request.task.kind}`, { attributes: { 'parley.task.kind': request.task.kind, 'parley.task.key': request.task.key } }, parent);
      context
        .with(trace.setSpan(parent, span), () =>
          core.submit(request.task, { signal: controller.signal, onProgress: (data) => send({ type: 'progress', id: request.id, data }) }),
        )
        .then(
          (result) => send({ type: 'done', id: request.id, result, ...health() }),
          (error: unknown) => {
            span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
            send({ type: 'error', id: request.id, message: (error as Error).message ?? String(error), ...failure(error), ...health() });
          },
        )
        .finally(() => {
          span.end();
          running.delete(request.id);
        });
      return;
    }
    case 'cancel':
      running.get(request.id)?.abort();
      return;
    case 'unload':
      core.unload(request.key);
      send({ type: 'health', ...health() });
      return;
  }
});

// Hotwords files its threads wrote for their models (only where per-stream hotwords are unavailable).
process.on('exit', dropThisProcessFiles);

// The supervisor closed the channel (it is shutting down, or died): finish nothing, leave.
process.on('disconnect', () => {
  for (const controller of running.values()) controller.abort();
  void core.close(1_000).finally(() => process.exit(0));
});

send({ type: 'ready', pid: process.pid, ...health() });
