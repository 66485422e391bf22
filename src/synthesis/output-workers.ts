/**
 * Worker threads that resample and encode synthesis output (output-worker.ts), so the event loop
 * does no per-sample work: it hands each engine piece over (transferred, not copied) and gets the
 * response's next bytes back the same way. Every response's pipeline lives on one thread (its
 * resampler and encoder keep state between pieces); a new one goes to the thread holding the
 * fewest. Threads start on first use, do not keep the process alive while idle, and a thread that
 * dies fails its responses' calls and is replaced on the next open.
 *
 * A thread works on at most `inFlight` calls at a time; the rest wait here, and the next to go is
 * the most urgent (the synthesis scheduler's order: a playing stream about to run dry, then a
 * stream's first audio, then the least slack), not the oldest: otherwise a new stream's first
 * piece waits behind every later piece other streams sent before it. A pipeline's calls still go
 * in the order they were made (its state is sequential).
 */
import type { Worker } from 'node:worker_threads';
import type { AudioPipeline, PipelineInfo, PipelineOptions, PipelineOutput } from '../audio/pipeline.js';
import { startWorkerThread } from '../engines/spawn.js';
import { AbortedError, EngineError } from '../errors.js';
import type { OutputReply, OutputRequest } from './output-worker.js';
import { postTransferring } from './post-transferring.js';
import type { OutputUrgency } from './scheduler.js';

type Payload = Omit<OutputRequest, 'call' | 'pipeline'> & Record<string, unknown>;

interface Waiter {
  resolve: (reply: OutputReply & { ok: true }) => void;
  reject: (err: Error) => void;
}

/** A call not yet posted to its thread. */
interface Queued extends Waiter {
  call: number;
  pipeline: number;
  payload: Payload;
  transfer: ArrayBuffer[];
  urgency: () => OutputUrgency;
}

interface Thread {
  worker: Worker;
  pipelines: number;
  /** Posted calls awaiting their reply. */
  pending: Map<number, Waiter>;
  queue: Queued[];
  dead: boolean;
}

/** Work with nothing to say about its urgency (a warm-up) goes first. */
const FIRST: OutputUrgency = { tier: -1, slack: -Infinity };
const firstUrgency = () => FIRST;

/** Calls one thread works on at a time unless told otherwise: one running, one ready to start as it ends. */
export const DEFAULT_IN_FLIGHT = 2;

export class OutputWorkers {
  private readonly threads: (Thread | undefined)[];
  private nextCall = 1;
  private nextPipeline = 1;
  private closed = false;

  /**
   * @param size threads
   * @param inFlight calls posted to one thread at a time (more wait here, most urgent first)
   */
  constructor(
    readonly size: number,
    readonly inFlight = DEFAULT_IN_FLIGHT,
  ) {
    if (!(size >= 1)) throw new RangeError('OutputWorkers needs at least one thread');
    if (!(inFlight >= 1)) throw new RangeError('OutputWorkers needs at least one call in flight per thread');
    this.threads = Array.from({ length: size }, () => undefined);
  }

  /**
   * A pipeline on the least loaded thread. `urgency` is asked, when the thread is free, how soon
   * this pipeline's waiting call is needed; without it the pipeline's calls go first.
   */
  async open(options: PipelineOptions, urgency: () => OutputUrgency = firstUrgency): Promise<AudioPipeline> {
    if (this.closed) throw new EngineError('the output workers are closed');
    const thread = this.pick();
    const id = this.nextPipeline++;
    thread.pipelines++;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      thread.pipelines--;
    };
    const call = (payload: Payload, transfer: ArrayBuffer[] = []) => this.call(thread, id, payload, transfer, urgency);
    let info: PipelineInfo;
    try {
      info = (await call({ op: 'open', options })).info!;
    } catch (err) {
      finish();
      throw err;
    }
    const output = async (payload: Payload, transfer?: ArrayBuffer[]): Promise<PipelineOutput> => (await call(payload, transfer)).output!;
    return {
      info,
      inThread: false,
      begin: async (fromRate) => void (await call({ op: 'begin', fromRate })),
      push: (samples) => {
        // Handed over whole: a view into a larger buffer is copied, since transferring would detach the rest.
        const own = samples.byteOffset === 0 && samples.byteLength === samples.buffer.byteLength && samples.buffer instanceof ArrayBuffer ? samples : samples.slice();
        return output({ op: 'push', samples: own }, [own.buffer as ArrayBuffer]);
      },
      flush: () => output({ op: 'flush' }),
      end: async () => {
        try {
          return await output({ op: 'end' });
        } finally {
          finish();
        }
      },
      close: () => {
        if (done) return;
        finish();
        // Its waiting calls are dropped (no one wants their output); one already posted runs before the close.
        for (const queued of thread.queue.filter((q) => q.pipeline === id)) queued.reject(new AbortedError());
        thread.queue = thread.queue.filter((q) => q.pipeline !== id);
        if (!thread.dead) thread.worker.postMessage({ call: 0, op: 'close', pipeline: id } satisfies OutputRequest);
      },
    };
  }

  /** Starts every thread and runs each encoder once in it (WebAssembly compiles per thread). */
  async warmUp(): Promise<string[]> {
    const warmed = await Promise.all(
      this.threads.map(async (_, i) => {
        const thread = this.threads[i] && !this.threads[i]!.dead ? this.threads[i]! : (this.threads[i] = this.start());
        return (await this.call(thread, 0, { op: 'warm' }, [], firstUrgency)).warmed ?? [];
      }),
    );
    return warmed[0] ?? [];
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(
      this.threads.map(async (thread) => {
        if (!thread || thread.dead) return;
        thread.dead = true;
        thread.worker.ref();
        await thread.worker.terminate();
      }),
    );
  }

  /** The thread with the fewest pipelines; among equals one already running (a dead or unstarted thread holds none). */
  private pick(): Thread {
    const running = (i: number) => this.threads[i] !== undefined && !this.threads[i]!.dead;
    const load = (i: number) => (running(i) ? this.threads[i]!.pipelines : 0);
    let best = 0;
    for (let i = 1; i < this.threads.length; i++) {
      if (load(i) < load(best) || (load(i) === load(best) && running(i) && !running(best))) best = i;
    }
    if (running(best)) return this.threads[best]!;
    const thread = this.start();
    this.threads[best] = thread;
    return thread;
  }

  private start(): Thread {
    const worker = startWorkerThread(new URL('./output-worker.js', import.meta.url));
    const thread: Thread = { worker, pipelines: 0, pending: new Map(), queue: [], dead: false };
    worker.unref();
    worker.on('message', (reply: OutputReply) => {
      const waiter = thread.pending.get(reply.call);
      if (!waiter) return;
      thread.pending.delete(reply.call);
      this.post(thread);
      if (thread.pending.size === 0) worker.unref();
      if (reply.ok) waiter.resolve(reply);
      else waiter.reject(new EngineError(`audio output failed: ${reply.message}`));
    });
    const fail = (message: string) => {
      thread.dead = true;
      for (const waiter of [...thread.pending.values(), ...thread.queue]) waiter.reject(new EngineError(message));
      thread.pending.clear();
      thread.queue = [];
    };
    worker.on('error', (err) => fail(`audio output thread failed: ${err.message}`));
    worker.on('exit', (code) => fail(`audio output thread exited with code ${code}`));
    return thread;
  }

  private call(thread: Thread, pipeline: number, payload: Payload, transfer: ArrayBuffer[], urgency: () => OutputUrgency): Promise<OutputReply & { ok: true }> {
    if (thread.dead) return Promise.reject(new EngineError('audio output thread is gone'));
    const call = this.nextCall++;
    return new Promise((resolve, reject) => {
      thread.queue.push({ call, pipeline, payload, transfer, urgency, resolve, reject });
      this.post(thread);
    });
  }

  /** Posts the most urgent waiting calls while the thread has room for them. */
  private post(thread: Thread): void {
    while (!thread.dead && thread.pending.size < this.inFlight && thread.queue.length > 0) {
      const [next] = thread.queue.splice(mostUrgent(thread.queue), 1);
      const { call, pipeline, payload, transfer, resolve, reject } = next!;
      thread.pending.set(call, { resolve, reject });
      thread.worker.ref();
      postTransferring(thread.worker, { ...payload, call, pipeline } as OutputRequest, transfer);
    }
  }
}

/**
 * The index of the call to post next: among each pipeline's oldest waiting call (its later ones
 * must follow it), lowest tier, then least slack, then oldest. Waiting calls are few (about one per
 * response on the thread), so a linear pick is fine.
 */
function mostUrgent(queue: readonly Queued[]): number {
  const seen = new Set<number>();
  let best = -1;
  let bestUrgency: OutputUrgency = FIRST;
  for (let i = 0; i < queue.length; i++) {
    const { pipeline, urgency } = queue[i]!;
    if (seen.has(pipeline)) continue;
    seen.add(pipeline);
    const u = urgency();
    if (best < 0 || u.tier < bestUrgency.tier || (u.tier === bestUrgency.tier && u.slack < bestUrgency.slack)) {
      best = i;
      bestUrgency = u;
    }
  }
  return best;
}
