/**
 * A fixed set of worker threads for sherpa-onnx's synchronous calls (VAD, streaming ASR,
 * diarization, tagging), which would otherwise stall an event loop for the whole inference. Each
 * worker loads a model the first time a task names its key and keeps it (sherpa-worker.ts). In the
 * server the pool lives inside an inference process (inference-core.ts), so that process keeps
 * taking messages (new tasks, cancellations) while its threads compute; sherpa-onnx-node is
 * context-aware, so two threads can each load their own copy of a model.
 *
 * In front of the workers sits a bounded FIFO queue: when every worker is busy and the queue is
 * full, submit() rejects with OverloadedError (HTTP 503 + Retry-After) instead of letting work pile
 * up. An AbortSignal drops a queued task at once and asks a running one to stop at its next check
 * (sherpa calls themselves cannot be interrupted; the VAD checks every few hundred ms of audio).
 *
 * Live recognition streams (online-stream tasks) are bound to the thread that opened them, where
 * their sherpa OnlineStream lives: their tasks wait in that worker's own queue, and a free worker
 * takes the older of its own queue's head and the shared queue's head. Streams are bounded
 * (maxStreams: one more open is OverloadedError), one left without a task for streamIdleMs is
 * closed, and those of a thread that dies are lost (their tasks fail with EngineError).
 */
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { AbortedError, EngineError, ModelPackError, OverloadedError } from '../../errors.js';
import { dropHotwordsFiles, processOwner } from '../sherpa-hotwords.js';
import { isStreamTask, NO_RECOGNITION, type OnlineStreamTask, type PoolTask, type SubmitOptions, type TaskProgress, type TaskResults, type TaskRunner, type WorkerReply, type WorkerRequest } from '../sherpa-tasks.js';
import { startWorkerThread } from '../spawn.js';

export interface WorkerPoolOptions {
  /** Worker threads; default min(2, cores). */
  workers?: number;
  /** Tasks allowed to wait for a free worker; default 32 (tasks of open streams wait apart, bounded per stream). */
  queueSize?: number;
  /** Recognition streams open at once across the threads; default 256. */
  maxStreams?: number;
  /** A stream with no task for this long is closed, ms; default 15 minutes. */
  streamIdleMs?: number;
}

/** Tasks of one stream that may wait for its thread (a caller sends one at a time; this is slack). */
const MAX_QUEUED_PER_STREAM = 8;

interface OpenStream {
  /** The task that opened it (closing it again needs its key and config). */
  opened: OnlineStreamTask;
  worker: PoolWorker;
  lastUsed: number;
  queued: number;
}

interface PendingTask {
  id: number;
  task: PoolTask;
  cancel: SharedArrayBuffer;
  signal?: AbortSignal;
  onAbort?: () => void;
  onProgress?: (data: unknown) => void;
  resolve: (result: unknown) => void;
  reject: (error: Error) => void;
  /** The stream a stream task belongs to. */
  pinnedTo?: OpenStream;
}

interface PoolWorker {
  thread: Worker;
  current?: PendingTask;
  startedAt: number;
  /** Set by the worker's first message; a worker that dies before it cannot start at all. */
  ready: boolean;
  /** Called when the running task's reply arrives (close() waits on it). */
  onIdle?: () => void;
  /** Tasks of the streams this thread holds, oldest first. */
  pinned: PendingTask[];
  streams: number;
}

/** Retry-After bounds (seconds) for OverloadedError. */
const MIN_RETRY_AFTER = 1;
const MAX_RETRY_AFTER = 60;

export class WorkerPool implements TaskRunner<PoolTask> {
  readonly size: number;
  readonly queueSize: number;
  readonly maxStreams: number;
  private readonly streamIdleMs: number;
  private readonly streams = new Map<string, OpenStream>();
  private readonly idleSweep: NodeJS.Timeout;
  private readonly workers: PoolWorker[] = [];
  private readonly queue: PendingTask[] = [];
  private nextId = 0;
  private closed = false;
  /** Why workers cannot start (e.g. the worker script does not load); no respawn after that. */
  private broken: string | undefined;
  /** Moving average of task run time, for the Retry-After estimate. */
  private averageTaskMs = 1000;

  constructor(options: WorkerPoolOptions = {}) {
    this.size = Math.max(1, Math.floor(options.workers ?? Math.min(2, availableParallelism())));
    this.queueSize = Math.max(0, Math.floor(options.queueSize ?? 32));
    this.maxStreams = Math.max(0, Math.floor(options.maxStreams ?? 256));
    this.streamIdleMs = Math.max(1, options.streamIdleMs ?? 15 * 60_000);
    for (let i = 0; i < this.size; i++) this.workers.push(this.spawn());
    this.idleSweep = setInterval(() => this.closeIdleStreams(), Math.min(60_000, Math.max(100, this.streamIdleMs / 4)));
    this.idleSweep.unref();
  }

  /** Recognition streams open now. */
  get openStreams(): number {
    return this.streams.size;
  }

  /** Tasks waiting for a worker. */
  get queued(): number {
    return this.queue.length;
  }

  /** Workers running a task now. */
  get busy(): number {
    return this.workers.filter((w) => w.current).length;
  }

  /**
   * Runs `task` on the first free worker. The samples are copied at dispatch and the copy moved to the
   * worker, so the caller keeps its array. Rejects with OverloadedError when the queue is full,
   * AbortedError when `signal` aborts first, ModelPackError when the model does not load, and
   * EngineError when sherpa fails or the worker dies.
   */
  submit<T extends PoolTask>(task: T, options: SubmitOptions<TaskProgress[T['kind']]> = {}): Promise<TaskResults[T['kind']]> {
    if (this.closed) return Promise.reject(new EngineError('worker pool is closed'));
    if (this.broken) return Promise.reject(new EngineError(this.broken));
    if (options.signal?.aborted) return Promise.reject(new AbortedError());
    if (isStreamTask(task)) return this.submitToStream(task, options) as Promise<TaskResults[T['kind']]>;
    const idle = this.workers.find((w) => !w.current);
    if (!idle && this.queue.length >= this.queueSize) {
      return Promise.reject(new OverloadedError(this.retryAfterSeconds()));
    }
    return new Promise<TaskResults[T['kind']]>((resolve, reject) => {
      const pending: PendingTask = {
        id: this.nextId++,
        task,
        cancel: new SharedArrayBuffer(4),
        signal: options.signal,
        onProgress: options.onProgress as ((data: unknown) => void) | undefined,
        resolve: resolve as (result: unknown) => void,
        reject,
      };
      if (options.signal) {
        pending.onAbort = () => this.abort(pending);
        options.signal.addEventListener('abort', pending.onAbort, { once: true });
      }
      if (idle) this.dispatch(idle, pending);
      else this.queue.push(pending);
    });
  }

  /** A task of a live stream: queued on the thread that holds (or will hold) the stream. */
  private submitToStream(task: OnlineStreamTask, options: SubmitOptions<never>): Promise<unknown> {
    let open = this.streams.get(task.stream);
    if (task.op === 'open') {
      if (open) return Promise.reject(new EngineError(`recognition stream ${task.stream} is already open`));
      if (this.streams.size >= this.maxStreams) return Promise.reject(new OverloadedError(this.retryAfterSeconds(), `Server is busy: ${this.maxStreams} recognition streams are open. Please try again later.`));
      // The thread holding the fewest streams; ties go to the one with the shortest queue.
      const worker = this.workers.reduce((a, b) => (b.streams < a.streams || (b.streams === a.streams && b.pinned.length < a.pinned.length) ? b : a));
      open = { opened: task, worker, lastUsed: Date.now(), queued: 0 };
      worker.streams++;
      this.streams.set(task.stream, open);
    } else if (!open) {
      if (task.op === 'close') return Promise.resolve(NO_RECOGNITION);
      return Promise.reject(new EngineError(`recognition stream ${task.stream} is not open (closed after ${Math.round(this.streamIdleMs / 1000)} s without audio, or its thread died)`));
    } else if (open.queued >= MAX_QUEUED_PER_STREAM && task.op === 'accept') {
      return Promise.reject(new OverloadedError(this.retryAfterSeconds(), `Server is busy: this recognition stream has ${open.queued} tasks waiting. Please try again later.`));
    }
    // A finished or closed stream is gone for new tasks at once; its thread drops it in order.
    if (task.op === 'finish' || task.op === 'close') this.forget(task.stream, open);
    open.lastUsed = Date.now();
    open.queued++;
    const stream = open;
    return new Promise((resolve, reject) => {
      const pending: PendingTask = {
        id: this.nextId++,
        task,
        cancel: new SharedArrayBuffer(4),
        signal: options.signal,
        resolve,
        reject,
        pinnedTo: stream,
      };
      if (options.signal) {
        pending.onAbort = () => this.abort(pending);
        options.signal.addEventListener('abort', pending.onAbort, { once: true });
      }
      stream.worker.pinned.push(pending);
      if (!stream.worker.current) this.next(stream.worker);
    });
  }

  private forget(id: string, open: OpenStream): void {
    if (this.streams.get(id) !== open) return;
    this.streams.delete(id);
    open.worker.streams--;
  }

  /** Closes streams that had no task for streamIdleMs (a caller that forgot them, or went away without closing). */
  private closeIdleStreams(): void {
    const before = Date.now() - this.streamIdleMs;
    for (const [id, open] of this.streams) {
      if (open.queued > 0 || open.lastUsed > before) continue;
      void this.submitToStream({ ...open.opened, op: 'close', samples: new Float32Array(0) }, {}).catch(() => undefined);
    }
  }

  /**
   * Rejects queued and running tasks with EngineError, asks running ones to stop, waits for their
   * workers to come back (at most `graceMs`), then terminates every worker. Terminating a thread
   * while it is inside a sherpa call aborts the whole process (the addon throws a C++ exception
   * no one catches), hence the wait; a diarization pass cannot be stopped early, so it runs out.
   */
  async close(graceMs = 30_000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.idleSweep);
    const error = new EngineError('worker pool closed');
    for (const pending of this.queue.splice(0)) this.settle(pending, error);
    for (const worker of this.workers) for (const pending of worker.pinned.splice(0)) this.settle(pending, error);
    const running = this.workers.filter((w) => w.current);
    for (const w of running) {
      Atomics.store(new Int32Array(w.current!.cancel), 0, 1);
      this.settle(w.current!, error);
    }
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(running.map((w) => new Promise<void>((resolve) => (w.onIdle = resolve)))),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs))),
    ]);
    clearTimeout(timer);
    await Promise.all(this.workers.map((w) => w.thread.terminate()));
  }

  /** Drops the model `key` from every thread (each builds it again if a later task names it). */
  unload(key: string): void {
    const message: WorkerRequest = { type: 'unload', key };
    for (const worker of this.workers) worker.thread.postMessage(message);
  }

  private spawn(): PoolWorker {
    const thread = startWorkerThread(new URL('./sherpa-worker.js', import.meta.url));
    const worker: PoolWorker = { thread, startedAt: 0, ready: false, pinned: [], streams: 0 };
    thread.on('message', (reply: WorkerReply) => {
      if (reply.type === 'ready') worker.ready = true;
      else this.onReply(worker, reply);
    });
    const onDeath = (reason: string) => {
      worker.onIdle?.();
      if (this.closed) return;
      const index = this.workers.indexOf(worker);
      if (index < 0) return;
      const running = worker.current;
      worker.current = undefined;
      // Its streams lived in the thread: they are gone, and so are the tasks waiting for them.
      for (const [id, open] of this.streams) if (open.worker === worker) this.forget(id, open);
      for (const pending of worker.pinned.splice(0)) this.settle(pending, new EngineError(`sherpa worker ${reason}: recognition stream lost`));
      if (!worker.ready) {
        // Respawning a worker whose script cannot even load would loop forever.
        this.broken = `sherpa worker could not start: ${reason}`;
        this.workers.splice(index, 1);
        if (running) this.settle(running, new EngineError(this.broken));
        if (this.workers.length === 0) for (const pending of this.queue.splice(0)) this.settle(pending, new EngineError(this.broken));
        else this.drain();
        return;
      }
      // Replace the thread first so the queue keeps moving; the lost task is not retried, since the
      // same input would likely kill the next thread too.
      this.workers[index] = this.spawn();
      if (running) this.settle(running, new EngineError(`sherpa worker ${reason} during a ${running.task.kind} task`));
      this.drain();
    };
    thread.on('error', (error) => onDeath(`crashed (${error.message})`));
    thread.on('exit', (code) => onDeath(`exited with code ${code}`));
    // Hotwords files the thread wrote (only where streams cannot take hotwords): its folder goes with it.
    const hotwordsOwner = processOwner(thread.threadId);
    thread.once('exit', () => dropHotwordsFiles(hotwordsOwner));
    return worker;
  }

  private dispatch(worker: PoolWorker, pending: PendingTask): void {
    worker.current = pending;
    worker.startedAt = performance.now();
    const { task } = pending;
    if (!('samples' in task)) {
      worker.thread.postMessage({ type: 'run', id: pending.id, task, cancel: pending.cancel } satisfies WorkerRequest);
      return;
    }
    // Copied only now, so a queued task holds no second copy of its audio.
    const samples = new Float32Array(task.samples);
    const request: WorkerRequest = { type: 'run', id: pending.id, task: { ...task, samples }, cancel: pending.cancel };
    worker.thread.postMessage(request, [samples.buffer]);
  }

  private drain(): void {
    for (const worker of this.workers) if (!worker.current) this.next(worker);
  }

  /** Gives a free worker the older of its own streams' next task and the shared queue's next task. */
  private next(worker: PoolWorker): void {
    const own = worker.pinned[0];
    const shared = this.queue[0];
    if (own && (!shared || own.id < shared.id)) this.dispatch(worker, worker.pinned.shift()!);
    else if (shared) this.dispatch(worker, this.queue.shift()!);
  }

  private onReply(worker: PoolWorker, reply: Exclude<WorkerReply, { type: 'ready' }>): void {
    const pending = worker.current;
    if (!pending || pending.id !== reply.id) return;
    if (reply.type === 'progress') {
      if (this.closed) return;
      try {
        pending.onProgress?.(reply.data);
      } catch {
        // A throwing progress listener must not take the pool down; the task's own promise still settles.
      }
      return;
    }
    worker.current = undefined;
    worker.onIdle?.();
    if (this.closed) return;
    const elapsed = performance.now() - worker.startedAt;
    this.averageTaskMs = 0.8 * this.averageTaskMs + 0.2 * elapsed;
    if (reply.type === 'done') this.settle(pending, undefined, reply.result);
    else if (reply.reason === 'aborted') this.settle(pending, new AbortedError());
    else if (reply.reason === 'load') this.settle(pending, new ModelPackError(`could not load model ${pending.task.key}: ${reply.message}`));
    else this.settle(pending, new EngineError(`sherpa ${pending.task.kind} failed: ${reply.message}`));
    this.drain();
  }

  private abort(pending: PendingTask): void {
    const queue = pending.pinnedTo ? pending.pinnedTo.worker.pinned : this.queue;
    const index = queue.indexOf(pending);
    if (index >= 0) {
      queue.splice(index, 1);
      this.settle(pending, new AbortedError());
      return;
    }
    // Running: the worker polls this flag between windows/decode steps and answers 'aborted'.
    Atomics.store(new Int32Array(pending.cancel), 0, 1);
  }

  private settle(pending: PendingTask, error?: Error, result?: unknown): void {
    if (pending.onAbort) pending.signal?.removeEventListener('abort', pending.onAbort);
    const stream = pending.pinnedTo;
    if (stream) {
      stream.queued--;
      stream.lastUsed = Date.now();
      // An open that failed (the model did not load) leaves no stream behind.
      if (error && pending.task.kind === 'online-stream' && pending.task.op === 'open') {
        for (const [id, open] of this.streams) if (open === stream) this.forget(id, open);
      }
    }
    if (error) pending.reject(error);
    else pending.resolve(result);
  }

  private retryAfterSeconds(): number {
    const seconds = ((this.queue.length + this.size) * this.averageTaskMs) / this.size / 1000;
    return Math.min(MAX_RETRY_AFTER, Math.max(MIN_RETRY_AFTER, Math.ceil(seconds)));
  }
}

export function createWorkerPool(options: WorkerPoolOptions = {}): WorkerPool {
  return new WorkerPool(options);
}
