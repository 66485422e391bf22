/**
 * A bound on work running at once (ffmpeg processes, decodes), with a bounded, time-limited queue
 * in front of it: past the queue, or past the wait, the caller gets 503 with Retry-After
 * rather than piling up memory and time.
 */
import { AbortedError, OverloadedError } from '../errors.js';

export interface ConcurrencyLimits {
  maxConcurrent: number;
  /** Callers allowed to wait for a slot. */
  queueSize: number;
  /** Longest wait for a slot. */
  queueTimeoutMs: number;
  /** The 503's sentence. */
  busyMessage: string;
}

export class ConcurrencyLimit {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limits: ConcurrencyLimits) {}

  /** Waits for a slot and returns its release (idempotent); OverloadedError when none comes. */
  async acquire(signal?: AbortSignal): Promise<() => void> {
    if (this.running < this.limits.maxConcurrent) return this.take();
    if (this.waiting.length >= this.limits.queueSize) throw this.busy();
    return new Promise((resolve, reject) => {
      const grant = () => {
        cleanup();
        resolve(this.take());
      };
      const giveUp = (error: Error) => {
        cleanup();
        const at = this.waiting.indexOf(grant);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(error);
      };
      const timer = setTimeout(() => giveUp(this.busy()), this.limits.queueTimeoutMs);
      const onAbort = () => giveUp(new AbortedError());
      const cleanup = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(grant);
    });
  }

  /** Runs `work` in a slot. */
  async run<T>(work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const release = await this.acquire(signal);
    try {
      return await work();
    } finally {
      release();
    }
  }

  private take(): () => void {
    this.running++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      this.waiting.shift()?.();
    };
  }

  private busy(): OverloadedError {
    return new OverloadedError(Math.max(1, Math.ceil(this.limits.queueTimeoutMs / 1000)), this.limits.busyMessage);
  }
}
