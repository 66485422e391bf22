/** Releasers run in reverse order and all of them run; readiness is the conjunction of its checks. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Releasers, runReadinessChecks } from '../src/lifecycle.js';

describe('Releasers', () => {
  it('releases in reverse order, keeps going past a failure, and reports it', async () => {
    const order: string[] = [];
    const logged: string[] = [];
    const r = new Releasers();
    r.add('database', () => order.push('database'));
    r.add('engines', () => {
      order.push('engines');
      throw new Error('stuck');
    });
    r.add('sender', async () => void order.push('sender'));
    await r.releaseAll((msg, err) => logged.push(`${msg}: ${(err as Error).message}`));
    assert.deepEqual(order, ['sender', 'engines', 'database']);
    assert.deepEqual(logged, ['releasing engines failed: stuck']);
    assert.equal(r.size, 0);
    await r.releaseAll();
    assert.deepEqual(order, ['sender', 'engines', 'database'], 'nothing is released twice');
  });
});

describe('runReadinessChecks', () => {
  it('is ready only when every check is ok; a throwing check is not ok with its message', async () => {
    assert.deepEqual(await runReadinessChecks({ a: async () => ({ ok: true, detail: 1 }) }), { ready: true, checks: { a: { ok: true, detail: 1 } }, notes: [] });
    const report = await runReadinessChecks({
      a: async () => ({ ok: true }),
      b: async () => {
        throw new Error('database down');
      },
    });
    assert.equal(report.ready, false);
    assert.deepEqual(report.checks.b, { ok: false, detail: 'database down' });
  });

  it("gathers the checks' notes without making the node unready", async () => {
    const report = await runReadinessChecks({ a: async () => ({ ok: true, note: 'offline: transcription waits for a pack' }), b: async () => ({ ok: true }) });
    assert.deepEqual(report, { ready: true, checks: { a: { ok: true, note: 'offline: transcription waits for a pack' }, b: { ok: true } }, notes: ['offline: transcription waits for a pack'] });
  });
});
