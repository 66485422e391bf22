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
 */
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { AbortedError, EngineError, ModelPackError, OverloadedError } from '../errors.js';
import type { PoolTask, SubmitOptions, TaskProgress, TaskResults, TaskRunner, WorkerReply, WorkerRequest } from './sherpa-tasks.js';
import { startWorkerThread } from './spawn.js';

export interface WorkerPoolOptions {
  /** Worker threads; default min(2, cores). */
  workers?: number;
  /** Tasks allowed to wait for a free worker; default 32. */
  queueSize?: number;
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
}

interface PoolWorker {
  thread: Worker;
  current?: PendingTask;
  startedAt: number;
  /** Set by the worker's first message; a worker that dies before it cannot start at all. */
  ready: boolean;
  /** Called when the running task's reply arrives (close() waits on it). */
  onIdle?: () => void;
}

/** Retry-After bounds (seconds) for OverloadedError. */
const MIN_RETRY_AFTER = 1;
const MAX_RETRY_AFTER = 60;

export class WorkerPool implements TaskRunner<PoolTask> {
  readonly size: number;
  readonly queueSize: number;
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
    for (let i = 0; i < this.size; i++) this.workers.push(this.spawn());
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

  /**
   * Rejects queued and running tasks with EngineError, asks running ones to stop, waits for their
   * workers to come back (at most `graceMs`), then terminates every worker. Terminating a thread
   * while it is inside a sherpa call aborts the whole process (the addon throws a C++ exception
   * no one catches), hence the wait; a diarization pass cannot be stopped early, so it runs out.
   */
  async close(graceMs = 30_000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const error = new EngineError('worker pool closed');
    for (const pending of this.queue.splice(0)) this.settle(pending, error);
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
    const worker: PoolWorker = { thread, startedAt: 0, ready: false };
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
    return worker;
  }

  private dispatch(worker: PoolWorker, pending: PendingTask): void {
    worker.current = pending;
    worker.startedAt = performance.now();
    // Copied only now, so a queued task holds no second copy of its audio.
    const samples = new Float32Array(pending.task.samples);
    const request: WorkerRequest = { type: 'run', id: pending.id, task: { ...pending.task, samples }, cancel: pending.cancel };
    worker.thread.postMessage(request, [samples.buffer]);
  }

  private drain(): void {
    for (const worker of this.workers) {
      if (worker.current) continue;
      const next = this.queue.shift();
      if (!next) return;
      this.dispatch(worker, next);
    }
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
    const index = this.queue.indexOf(pending);
    if (index >= 0) {
      this.queue.splice(index, 1);
      this.settle(pending, new AbortedError());
      return;
    }
    // Running: the worker polls this flag between windows/decode steps and answers 'aborted'.
    Atomics.store(new Int32Array(pending.cancel), 0, 1);
  }

  private settle(pending: PendingTask, error?: Error, result?: unknown): void {
    if (pending.onAbort) pending.signal?.removeEventListener('abort', pending.onAbort);
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
