/**
 * Per-account token buckets, one per route family (synthesis, transcription, management).
 * The store is a small contract so that a shared store (database, Redis) can replace the
 * in-process one when several nodes serve one account.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RateLimit } from '../../config.js';
import { RateLimitedError } from '../../errors.js';

export interface RateLimitStore {
  /**
   * Take one token from bucket `key` (capacity `burst`, refilled at `perMinute`/60 per second).
   * Returns 0 when a token was taken, else the seconds until one is available. Never throws.
   */
  take(key: string, limit: RateLimit, now: number): number;
  close(): void;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

export class InProcessRateLimitStore implements RateLimitStore {
  private readonly buckets = new Map<string, Bucket>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(sweepEveryMs = 60_000) {
    // Full buckets hold no information; dropping them keeps memory bounded by active accounts.
    this.sweeper = setInterval(() => this.sweep(Date.now()), sweepEveryMs);
    this.sweeper.unref();
  }

  take(key: string, limit: RateLimit, now: number): number {
    const perMs = limit.perMinute / 60_000;
    const b = this.buckets.get(key) ?? { tokens: limit.burst, updatedAt: now };
    b.tokens = Math.min(limit.burst, b.tokens + (now - b.updatedAt) * perMs);
    b.updatedAt = now;
    this.buckets.set(key, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return (1 - b.tokens) / perMs / 1000;
  }

  private sweep(now: number): void {
    for (const [k, b] of this.buckets) if (now - b.updatedAt > 10 * 60_000) this.buckets.delete(k);
  }

  close(): void {
    clearInterval(this.sweeper);
    this.buckets.clear();
  }
}

/** onRequest hook (after auth): one token per request from the account's bucket of `family`. */
export function rateLimit(store: RateLimitStore, family: string, limit: RateLimit, clock: () => number = Date.now) {
  return async function limitRequests(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    if (limit.perMinute <= 0) return;
    const wait = store.take(`${family}:${request.accountId}`, limit, clock());
    if (wait > 0) throw new RateLimitedError(wait);
  };
}
