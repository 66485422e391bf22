/**
 * The rate-limit stores on an injected clock: the in-process buckets refill at perMinute/60 per
 * second up to burst; the shared store lets a request through (and reports) when its database fails.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RateLimitedError } from '../../../src/errors.js';
import { rateLimit } from '../../../src/http/plugins/rate-limit.js';
import { InProcessRateLimitStore, SharedRateLimitStore } from '../../../src/store/rate-limits.js';

const limit = { perMinute: 60, burst: 3 };

describe('InProcessRateLimitStore', () => {
  it('gives burst tokens at once, then one per second, and says how long to wait', () => {
    const store = new InProcessRateLimitStore();
    try {
      const t0 = 1_000_000;
      assert.deepEqual([0, 1, 2].map(() => store.take('a', limit, t0)), [0, 0, 0]);
      assert.equal(store.take('a', limit, t0), 1, 'empty: one second to the next token');
      assert.equal(store.take('b', limit, t0), 0, 'another key has its own bucket');
      assert.ok(Math.abs(store.take('a', limit, t0 + 500) - 0.5) < 1e-9, 'half a token refilled: half a second more');
      assert.equal(store.take('a', limit, t0 + 1500), 0, 'a full token after 1.5 s (0.5 s already counted)');
      assert.equal(store.take('a', limit, t0 + 600_000), 0, 'refill stops at burst...');
      assert.equal(store.take('a', limit, t0 + 600_000), 0);
      assert.equal(store.take('a', limit, t0 + 600_000), 0);
      assert.ok(store.take('a', limit, t0 + 600_000) > 0, '...so a long pause gives burst tokens, not more');
    } finally {
      store.close();
    }
  });
});

describe('SharedRateLimitStore', () => {
  it('answers what the database says, and lets the request through when it fails', async () => {
    const errors: unknown[] = [];
    let fail = false;
    const store = new SharedRateLimitStore(
      {
        async take(key, burst, perMinute) {
          if (fail) throw new Error('connection refused');
          return key === 'full' ? 60 / perMinute : burst > 0 ? 0 : 1;
        },
      },
      (err) => errors.push(err),
    );
    assert.equal(await store.take('a', limit), 0);
    assert.equal(await store.take('full', limit), 1);
    assert.equal(await store.take('a', { perMinute: 30, burst: 0 }), 2, 'a bucket of size 0 never holds a token');
    fail = true;
    assert.equal(await store.take('a', limit), 0);
    assert.equal(errors.length, 1);
  });
});

describe('rateLimit hook', () => {
  it('throws RateLimitedError with the wait once the account bucket is empty; perMinute 0 disables it', async () => {
    const store = new InProcessRateLimitStore();
    try {
      const now = 5_000_000;
      const hook = rateLimit(store, 'synthesis', { perMinute: 60, burst: 1 }, () => now);
      const request = { accountId: 'acc' } as Parameters<typeof hook>[0];
      const reply = {} as Parameters<typeof hook>[1];
      await hook(request, reply);
      await assert.rejects(hook(request, reply), (err: unknown) => err instanceof RateLimitedError && err.retryAfterSeconds === 1);
      const off = rateLimit(store, 'synthesis', { perMinute: 0, burst: 0 }, () => now);
      for (let i = 0; i < 5; i++) await off(request, reply);
    } finally {
      store.close();
    }
  });
});
