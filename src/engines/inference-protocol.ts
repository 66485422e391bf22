/**
 * Messages between a supervised inference process (inference-host.ts) and its supervisor
 * (inference-process.ts), over Node's IPC channel with V8 serialisation: audio crosses as the
 * raw bytes of Float32Arrays.
 */
import type { InferenceTask } from './sherpa-tasks.js';

/** Why a task failed, as the supervisor needs to tell it: each maps to one domain error. */
export type TaskFailure = 'aborted' | 'load' | 'run' | 'overloaded';

export type HostRequest =
  /** `trace`: the caller's trace context (W3C traceparent), so the process's span is its child. */
  | { type: 'run'; id: number; task: InferenceTask; trace?: Record<string, string> }
  | { type: 'cancel'; id: number }
  | { type: 'unload'; key: string };

export interface HostHealth {
  /** Resident memory of the process, bytes. */
  rss: number;
  /** Keys of the models the process holds. */
  models: string[];
}

export type HostReply =
  | ({ type: 'ready'; pid: number } & HostHealth)
  /** Sent after an unload, so the supervisor's view of the loaded models stays true. */
  | ({ type: 'health' } & HostHealth)
  | { type: 'progress'; id: number; data: unknown }
  | ({ type: 'done'; id: number; result: unknown } & HostHealth)
  | ({ type: 'error'; id: number; reason: TaskFailure; message: string; retryAfterSeconds?: number } & HostHealth);

/** argv[2] of the host: how many worker threads and how deep a queue its synchronous calls get, and its stream bounds. */
export interface HostSettings {
  threads: number;
  queueSize: number;
  /** Live recognition streams the process holds at once. */
  maxStreams?: number;
  /** A stream with no task for this long is closed, ms. */
  streamIdleMs?: number;
  /** A module imported before the first task (a file URL): the trace exporter, when tracing is on. */
  preload?: string;
}
