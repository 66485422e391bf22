import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { calculateDelay } from '../../src/jobs/backoff.js';

describe('calculateDelay', () => {
  it('doubles per attempt within the upper half of the window', () => {
    for (let attempt = 1; attempt <= 8; attempt++) {
      const window = 2000 * 2 ** (attempt - 1);
      assert.equal(calculateDelay(attempt, 2000, 1e9, () => 0), window / 2);
      assert.equal(calculateDelay(attempt, 2000, 1e9, () => 0.999999), Math.round(window / 2 + 0.999999 * (window / 2)));
    }
  });

  it('never exceeds the cap, even for huge attempt numbers', () => {
    for (const attempt of [10, 11, 50, 1000]) {
      const d = calculateDelay(attempt, 2000, 300_000, () => 0.999999);
      assert.ok(d <= 300_000 && d >= 150_000, `attempt ${attempt}: ${d}`);
    }
  });

  it('spreads retries of jobs that failed together (jitter)', () => {
    const delays = new Set(Array.from({ length: 50 }, () => calculateDelay(5, 2000, 300_000)));
    assert.ok(delays.size > 10, `only ${delays.size} distinct delays`);
  });
});
