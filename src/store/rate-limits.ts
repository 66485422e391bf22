/**
 * Per-account token buckets, one per route family (synthesis, transcription, management).
 * The store is a small contract: in process for one node (SQLite), in the database when several
 * nodes serve one account (PostgreSQL).
 */
import type { RateLimit } from '../config.js';

export interface RateLimitStore {
  /**
   * Take one token from bucket `key` (capacity `burst`, refilled at `perMinute`/60 per second).
   * Returns 0 when a token was taken, else the seconds until one is available. Never throws.
   * `now` is this node's clock; a shared store uses the database clock instead.
   */
  take(key: string, limit: RateLimit, now: number): number | Promise<number>;
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

/**
 * The buckets of every node in one database table (RateLimitRepository): an account's limit holds
 * across the cluster. When the database cannot answer, the request is let through and the error
 * reported: the limit protects capacity, and refusing all traffic for a database hiccup would not.
 */
export class SharedRateLimitStore implements RateLimitStore {
  constructor(
    private readonly buckets: { take(key: string, burst: number, perMinute: number): Promise<number> },
    private readonly onError: (err: unknown) => void,
  ) {}

  async take(key: string, limit: RateLimit): Promise<number> {
    // A bucket of size 0 never holds a token, as in the in-process store.
    if (limit.burst < 1) return 60 / limit.perMinute;
    try {
      return await this.buckets.take(key, limit.burst, limit.perMinute);
    } catch (err) {
      this.onError(err);
      return 0;
    }
  }

  close(): void {}
}
