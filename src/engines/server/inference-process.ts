/**
 * A supervised inference process, seen from the server: a TaskRunner whose tasks run in a child
 * process (inference-host.ts), so that nothing native can take the server down.
 *
 * - A process that dies (signal, exit, out-of-memory kill) fails only the tasks it held, with
 *   InferenceUnavailableError (503 + Retry-After), and is started again after a backoff that
 *   doubles with each crash in a row. Tasks submitted meanwhile wait for it (a bounded queue).
 * - Every task has a deadline that grows with its audio (or text), for its run, and the same again
 *   for waiting on a process that is starting. A task past it is failed and cancelled; if the
 *   process does not let go of it within a grace period, it is killed.
 * - A process whose resident memory passes the ceiling gets no new tasks: a fresh one takes them,
 *   and the old one leaves once its current tasks are done.
 * - An aborted signal cancels the task inside the child.
 * - A live recognition stream (online-stream tasks) belongs to the process that opened it: its
 *   later tasks go there, even while that process is retiring (it leaves once its streams are
 *   closed too). When that process dies the stream is lost: its tasks fail with
 *   InferenceUnavailableError, and the caller opens a new one.
 * Nothing is retried here: a synchronous request fails, and the job runner decides for jobs.
 */
import type { ChildProcess } from 'node:child_process';
import { AbortedError, EngineError, InferenceUnavailableError, ModelPackError, OverloadedError } from '../../errors.js';
import type { HostReply, HostRequest, HostSettings } from '../inference-protocol.js';
import { isStreamTask, NO_RECOGNITION, taskAudioSeconds, type InferenceTask, type SubmitOptions, type TaskProgress, type TaskResults, type TaskRunner } from '../sherpa-tasks.js';
import { forkChild } from '../spawn.js';

export interface InferenceDeadlines {
  /** Every task gets this much, ms. */
  baseMs: number;
  /** Plus this much per second of audio it carries, ms. */
  perAudioSecondMs: number;
  /** Plus this much per character of text (synthesis), ms. */
  perCharacterMs: number;
}

export interface InferenceLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** One observed task: ended once with its outcome; `carrier` is its trace context, sent to the process with it. */
export interface ObservedTask {
  carrier?: Record<string, string>;
  end(outcome: InferenceTaskOutcome): void;
}

export type InferenceTaskOutcome = 'ok' | 'aborted' | 'overloaded' | 'unavailable' | 'failed';

/** What metrics and traces learn from the supervisor; implemented outside the engines. */
export interface InferenceObserver {
  taskStarted(process: string, kind: InferenceTask['kind']): ObservedTask;
  restarted(process: string): void;
  /** A task overran its deadline (reported again with killed=true when its process is killed for not letting go). */
  deadlineOverrun(process: string, killed: boolean): void;
}

export interface InferenceProcessOptions {
  /** Shown in logs and status: the model group the process serves. */
  name: string;
  /** Worker threads for the synchronous sherpa calls inside the process. */
  threads: number;
  /** Tasks that may wait for one of those threads inside the process. */
  queueSize: number;
  /** Tasks that may wait here while the process is (re)starting. */
  maxWaiting: number;
  deadlines: InferenceDeadlines;
  /** Resident memory past which the process is replaced after its current tasks, bytes. */
  memoryCeilingBytes: number;
  /** First restart delay after a crash, ms; doubles per crash in a row up to restartDelayCapMs. */
  restartDelayMs: number;
  restartDelayCapMs: number;
  /** How long a cancelled or overdue task may take to let go before its process is killed, ms. */
  cancelGraceMs: number;
  /** Live recognition streams one process holds at once; default 256. */
  maxStreams?: number;
  /** A stream with no task for this long is closed inside the process, ms; default 15 minutes. */
  streamIdleMs?: number;
  log: InferenceLog;
  observer?: InferenceObserver;
  /** A module the child imports before it takes tasks (its trace exporter); a file URL. */
  hostPreload?: string;
}

export interface InferenceProcessStatus {
  name: string;
  pid: number | null;
  state: 'not started' | 'starting' | 'ready' | 'restarting' | 'closed';
  /** Models (task keys) the live process holds. */
  models: string[];
  restarts: number;
  lastExit: { at: string; reason: string } | null;
  /** running: tasks the processes hold (a cancelled one until its process lets go of it). */
  tasks: { running: number; waiting: number; completed: number; failed: number };
  rssMb: number | null;
  /** Processes over the memory ceiling that finish their tasks before leaving. */
  retiring: Array<{ pid: number; tasks: number }>;
}

/** A process that stayed up this long is healthy again: the next crash starts the backoff anew. */
const HEALTHY_AFTER_MS = 60_000;
/** How long a process asked to leave gets before it is killed. */
export const EXIT_GRACE_MS = 5_000;

interface Pending {
  id: number;
  task: InferenceTask;
  onProgress?: (data: unknown) => void;
  resolve(result: unknown): void;
  reject(error: Error): void;
  signal?: AbortSignal;
  onAbort?: () => void;
  deadline: NodeJS.Timeout;
  deadlineMs: number;
  /** Set once the caller has its answer; the entry stays until the child lets go of the task. */
  settled: boolean;
  /** Kills the process if a cancelled task is not let go of in time. */
  graceTimer?: NodeJS.Timeout;
  host?: Host;
  observed?: ObservedTask;
  overdue?: boolean;
}

/** One start of the child process. */
interface Host {
  child: ChildProcess;
  pid: number;
  ready: boolean;
  startedAt: number;
  tasks: Map<number, Pending>;
  rss: number;
  models: string[];
  /** Over the memory ceiling, or shutting down: takes no new tasks. */
  leaving: boolean;
  exited: Promise<void>;
  /** Ids of the recognition streams open in it. */
  streams: Set<string>;
}

export class InferenceProcess implements TaskRunner {
  private host: Host | undefined;
  private readonly leaving = new Set<Host>();
  /** The process each live recognition stream was opened in. */
  private readonly streams = new Map<string, Host>();
  private readonly waiting: Pending[] = [];
  private restartTimer: NodeJS.Timeout | undefined;
  private crashesInARow = 0;
  private nextId = 1;
  private closed = false;
  private restarts = 0;
  private completed = 0;
  private failed = 0;
  private lastExit: InferenceProcessStatus['lastExit'] = null;

  constructor(private readonly options: InferenceProcessOptions) {}

  get name(): string {
    return this.options.name;
  }

  /** The live process's id, once started (tests and /readyz). */
  get pid(): number | null {
    return this.host?.pid ?? null;
  }

  submit<K extends InferenceTask>(task: K, options: SubmitOptions<TaskProgress[K['kind']]> = {}): Promise<TaskResults[K['kind']]> {
    if (this.closed) return Promise.reject(new EngineError('inference is shutting down'));
    if (options.signal?.aborted) return Promise.reject(new AbortedError());
    return new Promise((resolve, reject) => {
      const { deadlines } = this.options;
      const text = task.kind === 'tts' || task.kind === 'punctuate' ? task.text.length : 0;
      const deadlineMs = Math.round(deadlines.baseMs + deadlines.perAudioSecondMs * taskAudioSeconds(task) + deadlines.perCharacterMs * text);
      const pending: Pending = {
        id: this.nextId++,
        task,
        onProgress: options.onProgress as ((data: unknown) => void) | undefined,
        resolve: resolve as (result: unknown) => void,
        reject,
        signal: options.signal,
        deadlineMs,
        deadline: setTimeout(() => this.overdue(pending), deadlineMs),
        settled: false,
        observed: this.options.observer?.taskStarted(this.options.name, task.kind),
      };
      if (options.signal) {
        pending.onAbort = () => this.cancel(pending, new AbortedError());
        options.signal.addEventListener('abort', pending.onAbort, { once: true });
      }
      if (isStreamTask(task) && task.op !== 'open') {
        const owner = this.streams.get(task.stream);
        if (task.op === 'finish' || task.op === 'close') this.forgetStream(task.stream);
        if (owner) this.dispatch(owner, pending);
        else if (task.op === 'close') this.settle(pending, undefined, NO_RECOGNITION);
        else this.settle(pending, new InferenceUnavailableError('The inference process that held this recognition stream is gone (it died or was restarted); the stream is lost', this.retryAfterSeconds()));
        return;
      }
      const host = this.liveHost();
      if (host?.ready) this.dispatch(host, pending);
      else if (this.waiting.length >= this.options.maxWaiting) this.settle(pending, new OverloadedError(this.retryAfterSeconds()));
      else this.waiting.push(pending);
    });
  }

  /** Drops a model from the process (it is loaded again if a later task names it). */
  unload(key: string): void {
    for (const host of [this.host, ...this.leaving]) if (host?.ready) this.send(host, { type: 'unload', key });
  }

  status(): InferenceProcessStatus {
    const host = this.host;
    // What the processes hold: a cancelled task counts until its process lets go of it.
    let running = 0;
    for (const h of [host, ...this.leaving]) running += h?.tasks.size ?? 0;
    const state = this.closed ? 'closed' : host ? (host.ready ? 'ready' : 'starting') : this.restartTimer ? 'restarting' : 'not started';
    return {
      name: this.options.name,
      pid: host?.pid ?? null,
      state,
      models: host?.models ?? [],
      restarts: this.restarts,
      lastExit: this.lastExit,
      tasks: { running, waiting: this.waiting.length, completed: this.completed, failed: this.failed },
      rssMb: host ? Math.round(host.rss / 2 ** 20) : null,
      retiring: [...this.leaving].map((h) => ({ pid: h.pid, tasks: h.tasks.size })),
    };
  }

  /** Fails what waits, asks every process to leave, kills those that do not within the grace period. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.restartTimer);
    const error = new EngineError('inference is shutting down');
    for (const pending of this.waiting.splice(0)) this.settle(pending, error);
    const hosts = [this.host, ...this.leaving].filter((h): h is Host => h !== undefined);
    this.host = undefined;
    this.streams.clear();
    for (const host of hosts) {
      for (const pending of host.tasks.values()) this.settle(pending, error);
      this.dismiss(host);
    }
    await Promise.all(hosts.map((h) => h.exited));
  }

  /** The process new tasks go to, started if there is none (and no restart is pending). */
  private liveHost(): Host | undefined {
    if (!this.host && !this.restartTimer && !this.closed) this.host = this.start();
    return this.host;
  }

  private start(): Host {
    const settings: HostSettings = {
      threads: this.options.threads,
      queueSize: this.options.queueSize,
      maxStreams: this.options.maxStreams,
      streamIdleMs: this.options.streamIdleMs,
      preload: this.options.hostPreload,
    };
    const child = forkChild(new URL('../inference/inference-host.js', import.meta.url), [JSON.stringify(settings)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      // onnxruntime's warnings would otherwise fill the server's log on every model load.
      env: { ...process.env, ORT_LOGGING_LEVEL: process.env.ORT_LOGGING_LEVEL ?? '3' },
    });
    let exited!: () => void;
    const host: Host = {
      child,
      pid: child.pid ?? -1,
      ready: false,
      startedAt: Date.now(),
      tasks: new Map(),
      rss: 0,
      models: [],
      leaving: false,
      exited: new Promise<void>((resolve) => (exited = resolve)),
      streams: new Set(),
    };
    child.on('message', (reply: HostReply) => this.onReply(host, reply));
    let gone = false;
    const onGone = (reason: string) => {
      if (gone) return;
      gone = true;
      exited();
      this.onExit(host, reason);
    };
    child.on('exit', (code, signal) => onGone(signal ? `was killed by ${signal}` : `exited with code ${code}`));
    child.on('error', (error) => {
      // Spawning failed (no 'exit' follows), or a message could not be sent (the process is going).
      if (child.pid === undefined || child.exitCode !== null) onGone(`could not run: ${error.message}`);
    });
    this.options.log.info({ process: this.options.name, pid: host.pid }, 'inference process starting');
    return host;
  }

  private onReply(host: Host, reply: HostReply): void {
    if (reply.type === 'ready') {
      host.ready = true;
      host.rss = reply.rss;
      this.options.log.info({ process: this.options.name, pid: host.pid }, 'inference process ready');
      if (host === this.host) for (const pending of this.waiting.splice(0)) this.dispatch(host, pending);
      return;
    }
    if (reply.type === 'health') {
      host.rss = reply.rss;
      host.models = reply.models;
      return;
    }
    const pending = host.tasks.get(reply.id);
    if (!pending) return;
    if (reply.type === 'progress') {
      if (pending.settled) return;
      try {
        pending.onProgress?.(reply.data);
      } catch {
        // A throwing listener must not break the channel; the task's promise still settles.
      }
      return;
    }
    host.tasks.delete(reply.id);
    clearTimeout(pending.graceTimer);
    host.rss = reply.rss;
    host.models = reply.models;
    const task = pending.task;
    // An open that failed leaves no stream; one whose caller gave up is closed in the process.
    if (isStreamTask(task) && task.op === 'open' && (reply.type === 'error' || pending.settled)) {
      this.forgetStream(task.stream);
      if (reply.type === 'done') this.send(host, { type: 'run', id: this.nextId++, task: { ...task, op: 'close' } });
    }
    if (reply.type === 'done') {
      this.settle(pending, undefined, reply.result);
    } else {
      const { message } = reply;
      this.settle(
        pending,
        reply.reason === 'aborted'
          ? new AbortedError()
          : reply.reason === 'load'
            ? new ModelPackError(message)
            : reply.reason === 'overloaded'
              ? new OverloadedError(reply.retryAfterSeconds ?? 1, message)
              : new EngineError(message),
      );
    }
    if (host === this.host && host.rss > this.options.memoryCeilingBytes) {
      this.options.log.warn(
        { process: this.options.name, pid: host.pid, rssMb: Math.round(host.rss / 2 ** 20), ceilingMb: Math.round(this.options.memoryCeilingBytes / 2 ** 20) },
        'inference process over its memory ceiling: replacing it after its current tasks',
      );
      this.host = undefined;
      this.leaving.add(host);
    }
    if (host.leaving || this.leaving.has(host)) {
      if (host.tasks.size === 0 && host.streams.size === 0) this.dismiss(host);
    }
  }

  private forgetStream(id: string): void {
    const host = this.streams.get(id);
    if (!host) return;
    this.streams.delete(id);
    host.streams.delete(id);
  }

  private onExit(host: Host, reason: string): void {
    this.leaving.delete(host);
    const expected = host.leaving;
    const lived = Date.now() - host.startedAt;
    if (host === this.host) this.host = undefined;
    if (expected) {
      this.options.log.info({ process: this.options.name, pid: host.pid }, 'inference process left');
      return;
    }
    this.lastExit = { at: new Date().toISOString(), reason };
    this.crashesInARow = lived >= HEALTHY_AFTER_MS ? 1 : this.crashesInARow + 1;
    const delay = Math.min(this.options.restartDelayCapMs, this.options.restartDelayMs * 2 ** (this.crashesInARow - 1));
    const running = [...host.tasks.values()];
    this.options.log.error(
      { process: this.options.name, pid: host.pid, reason, tasks: running.filter((p) => !p.settled).map((p) => p.task.kind), restartInMs: delay },
      'inference process died',
    );
    const retryAfter = Math.max(1, Math.ceil(delay / 1000));
    for (const pending of running) {
      clearTimeout(pending.graceTimer);
      this.settle(pending, new InferenceUnavailableError(`The inference process ${reason} while working on this request; it is being restarted`, retryAfter));
    }
    host.tasks.clear();
    for (const id of host.streams) this.streams.delete(id);
    host.streams.clear();
    if (this.closed) return;
    this.restarts++;
    this.options.observer?.restarted(this.options.name);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (this.closed || this.host) return;
      this.host = this.start();
    }, delay);
    this.restartTimer.unref();
  }

  private dispatch(host: Host, pending: Pending): void {
    // The deadline bounds the run itself; time spent waiting for a (re)starting process had its own.
    clearTimeout(pending.deadline);
    pending.deadline = setTimeout(() => this.overdue(pending), pending.deadlineMs);
    pending.host = host;
    host.tasks.set(pending.id, pending);
    const { task } = pending;
    if (isStreamTask(task) && task.op === 'open') {
      this.streams.set(task.stream, host);
      host.streams.add(task.stream);
    }
    this.send(host, { type: 'run', id: pending.id, task: pending.task, ...(pending.observed?.carrier && { trace: pending.observed.carrier }) });
  }

  private send(host: Host, request: HostRequest): void {
    try {
      if (host.child.connected) host.child.send(request);
    } catch {
      // The channel closed under us: the exit handler fails the task.
    }
  }

  /** The caller gave up (abort) or time ran out: answer now, and make the child let go. */
  private cancel(pending: Pending, error: Error): void {
    if (pending.settled) return;
    const index = this.waiting.indexOf(pending);
    if (index >= 0) {
      this.waiting.splice(index, 1);
      this.settle(pending, error);
      return;
    }
    this.settle(pending, error);
    const host = pending.host;
    if (!host) return;
    this.send(host, { type: 'cancel', id: pending.id });
    // sherpa calls cannot be interrupted; a task stuck in one holds its thread until the process goes.
    pending.graceTimer = setTimeout(() => {
      if (!host.tasks.has(pending.id)) return;
      this.options.log.error(
        { process: this.options.name, pid: host.pid, task: pending.task.kind, graceMs: this.options.cancelGraceMs },
        'a cancelled inference task did not stop: killing its process',
      );
      if (pending.overdue) this.options.observer?.deadlineOverrun(this.options.name, true);
      host.child.kill('SIGKILL');
    }, this.options.cancelGraceMs);
    pending.graceTimer.unref();
  }

  private overdue(pending: Pending): void {
    const seconds = Math.round(pending.deadlineMs / 100) / 10;
    this.options.log.warn({ process: this.options.name, task: pending.task.kind, deadlineMs: pending.deadlineMs }, 'inference task overran its deadline');
    pending.overdue = true;
    this.options.observer?.deadlineOverrun(this.options.name, false);
    this.cancel(pending, new InferenceUnavailableError(`Inference took longer than its deadline of ${seconds} s`, this.retryAfterSeconds()));
  }

  private settle(pending: Pending, error?: Error, result?: unknown): void {
    if (pending.settled) return;
    pending.settled = true;
    clearTimeout(pending.deadline);
    if (pending.onAbort) pending.signal?.removeEventListener('abort', pending.onAbort);
    pending.observed?.end(outcomeOf(error));
    if (error) {
      if (!(error instanceof AbortedError)) this.failed++;
      pending.reject(error);
    } else {
      this.completed++;
      pending.resolve(result);
    }
  }

  /** Asks a process to leave (closing its channel ends it) and kills it if it has not after the grace period. */
  private dismiss(host: Host): void {
    host.leaving = true;
    this.leaving.add(host);
    try {
      host.child.disconnect();
    } catch {
      // already disconnected
    }
    const timer = setTimeout(() => host.child.kill('SIGKILL'), EXIT_GRACE_MS);
    timer.unref();
    void host.exited.then(() => clearTimeout(timer));
  }

  private retryAfterSeconds(): number {
    return Math.max(1, Math.ceil(this.options.restartDelayMs / 1000));
  }
}

function outcomeOf(error: Error | undefined): InferenceTaskOutcome {
  if (!error) return 'ok';
  if (error instanceof AbortedError) return 'aborted';
  if (error instanceof OverloadedError) return 'overloaded';
  if (error instanceof InferenceUnavailableError) return 'unavailable';
  return 'failed';
}
