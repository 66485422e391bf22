/**
 * Worker threads that decode and resample transcription uploads (decode-worker.ts), so the event
 * loop does no per-sample work for them: it hands the upload over and gets the samples back
 * transferred, not copied. The upload itself is copied (the caller keeps its bytes: a job may run
 * again); it is the smaller of the two. A call goes to the thread with the fewest calls. Threads
 * do not keep the process alive while idle; one that dies fails only its own calls and is
 * replaced by the next call. The decode concurrency bound and the duration cap apply as on the
 * event loop; ffmpeg processes stay bounded across the server by slots held here.
 */
import type { Worker } from 'node:worker_threads';
import { boundedDecode, ffmpegOf, type DecodeHint, type DecodeOptions } from '../audio/decode.js';
import type { FfmpegRunner } from '../audio/ffmpeg.js';
import type { PcmAudio } from '../audio/pcm.js';
import type { WarmUpUploads } from '../audio/warm-up.js';
import { terminateThreads } from '../concurrency/worker-threads.js';
import { startWorkerThread } from '../engines/spawn.js';
import { AbortedError, EngineError } from '../errors.js';
import { errorFromWire, errorToWire, type DecodeReply, type DecodeRequest } from './decode-protocol.js';

type Done = Extract<DecodeReply, { op: 'done' }>;
type Call = Exclude<DecodeRequest, { op: 'abort' | 'slot' }>;
type Payload = Call extends infer C ? (C extends unknown ? Omit<C, 'call'> : never) : never;

interface Pending {
  resolve: (reply: Done) => void;
  reject: (err: Error) => void;
  /** The request's ffmpeg, for the slots its decode asks for. */
  ffmpeg?: FfmpegRunner;
  signal?: AbortSignal;
}

interface Thread {
  worker: Worker;
  pending: Map<number, Pending>;
  /** ffmpeg slots the thread holds, freed if it dies. */
  slots: Map<number, () => void>;
  dead: boolean;
  /** Its latest warm-up, and the samples it ran on. */
  warming: Promise<string[]>;
  warmedOn: WarmUpUploads;
}

export class DecodeWorkers {
  private readonly threads: (Thread | undefined)[];
  private uploads: WarmUpUploads = {};
  private nextCall = 1;
  private closed = false;

  constructor(readonly size: number) {
    if (!(size >= 1)) throw new RangeError('DecodeWorkers needs at least one thread');
    this.threads = Array.from({ length: size }, () => undefined);
  }

  /** decodeAudio in a thread: the same checks, bound, cap and errors. */
  decode(bytes: Uint8Array, hint: DecodeHint, options: DecodeOptions = {}): Promise<PcmAudio> {
    return boundedDecode(bytes, options, async () => {
      const ffmpeg = ffmpegOf(options) ?? undefined;
      const payload: Payload = {
        op: 'decode',
        bytes,
        hint: { contentType: hint.contentType, filename: hint.filename },
        sampleRate: options.sampleRate,
        maxSeconds: options.maxSeconds,
        ffmpeg: ffmpeg ? { path: ffmpeg.shared.path, timeoutMs: ffmpeg.shared.timeoutMs } : false,
      };
      return (await this.call(payload, { ffmpeg, signal: options.signal })).audio!;
    });
  }

  /** resampleYielding in a thread (the pipeline's Resample). */
  resample = async (samples: Float32Array, fromRate: number, toRate: number, signal?: AbortSignal): Promise<Float32Array> => {
    if (fromRate === toRate) return samples;
    return (await this.call({ op: 'resample', samples, fromRate, toRate }, { signal })).samples!;
  };

  /**
   * Starts every thread, each warming its decoders on `uploads` (the encoders' samples), and
   * resolves with what the first one warmed once all are done. A thread started later (a
   * replacement) warms on the same samples before its first call.
   */
  async warmUp(uploads: WarmUpUploads): Promise<string[]> {
    this.uploads = uploads;
    const warmed = await Promise.all(
      this.threads.map((_, i) => {
        const thread = this.threads[i] && !this.threads[i]!.dead ? this.threads[i]! : (this.threads[i] = this.start());
        if (thread.warmedOn !== uploads) this.warm(thread);
        return thread.warming;
      }),
    );
    return warmed[0] ?? [];
  }

  async close(): Promise<void> {
    this.closed = true;
    await terminateThreads(this.threads);
  }

  private call(payload: Payload, context: Omit<Pending, 'resolve' | 'reject'>): Promise<Done> {
    if (this.closed) return Promise.reject(new EngineError('the decode workers are closed'));
    if (context.signal?.aborted) return Promise.reject(new AbortedError());
    return this.send(this.pick(), payload, context);
  }

  /** The running thread with the fewest calls; a dead or unstarted one is started in its place when it would have fewer. */
  private pick(): Thread {
    const running = (i: number) => this.threads[i] !== undefined && !this.threads[i]!.dead;
    const load = (i: number) => (running(i) ? this.threads[i]!.pending.size : 0);
    let best = 0;
    for (let i = 1; i < this.threads.length; i++) {
      if (load(i) < load(best) || (load(i) === load(best) && running(i) && !running(best))) best = i;
    }
    if (running(best)) return this.threads[best]!;
    return (this.threads[best] = this.start());
  }

  private start(): Thread {
    const worker = startWorkerThread(new URL('./decode-worker.js', import.meta.url));
    const thread: Thread = { worker, pending: new Map(), slots: new Map(), dead: false, warming: Promise.resolve([]), warmedOn: {} };
    worker.unref();
    worker.on('message', (reply: DecodeReply) => {
      if (reply.op === 'acquire') return this.grantSlot(thread, reply.call, reply.slot);
      if (reply.op === 'release') {
        thread.slots.get(reply.slot)?.();
        thread.slots.delete(reply.slot);
        return;
      }
      const waiter = thread.pending.get(reply.call);
      if (!waiter) return;
      thread.pending.delete(reply.call);
      if (thread.pending.size === 0) worker.unref();
      if (reply.op === 'done') waiter.resolve(reply);
      else waiter.reject(errorFromWire(reply.error));
    });
    const fail = (message: string) => {
      thread.dead = true;
      for (const waiter of thread.pending.values()) waiter.reject(new EngineError(message));
      thread.pending.clear();
      for (const release of thread.slots.values()) release();
      thread.slots.clear();
    };
    worker.on('error', (err) => fail(`audio decoding thread failed: ${err.message}`));
    worker.on('exit', (code) => fail(`audio decoding thread exited with code ${code}`));
    this.warm(thread);
    return thread;
  }

  /** Warms the thread's decoders on the samples known now; its later calls run after that. */
  private warm(thread: Thread): void {
    thread.warmedOn = this.uploads;
    thread.warming = this.send(thread, { op: 'warm', uploads: this.uploads }, {}).then((reply) => reply.warmed ?? []);
    thread.warming.catch(() => undefined); // awaited by warmUp(); a thread that dies fails its calls itself
  }

  /** An ffmpeg slot for a thread's decode, waited for here (with the request's signal) where the server-wide bound lives. */
  private grantSlot(thread: Thread, call: number, slot: number): void {
    const waiter = thread.pending.get(call);
    const answer = (error?: unknown) => {
      if (!thread.dead) thread.worker.postMessage({ call: 0, op: 'slot', slot, ...(error ? { error: errorToWire(error) } : {}) } satisfies DecodeRequest);
    };
    if (!waiter?.ffmpeg) return answer(new EngineError('no ffmpeg for this call'));
    waiter.ffmpeg.shared.acquire(waiter.signal).then(
      (release) => {
        if (thread.dead) return release();
        thread.slots.set(slot, release);
        answer();
      },
      (err: unknown) => answer(err),
    );
  }

  private send(thread: Thread, payload: Payload, context: Omit<Pending, 'resolve' | 'reject'>): Promise<Done> {
    if (thread.dead) return Promise.reject(new EngineError('audio decoding thread is gone'));
    const call = this.nextCall++;
    const { signal } = context;
    const onAbort = () => {
      if (!thread.dead) thread.worker.postMessage({ call, op: 'abort' } satisfies DecodeRequest);
    };
    return new Promise<Done>((resolve, reject) => {
      thread.pending.set(call, { ...context, resolve, reject });
      thread.worker.ref();
      signal?.addEventListener('abort', onAbort, { once: true });
      // Copied, not moved: the caller keeps its upload and samples.
      thread.worker.postMessage({ ...payload, call } as DecodeRequest);
    }).finally(() => signal?.removeEventListener('abort', onAbort));
  }
}
