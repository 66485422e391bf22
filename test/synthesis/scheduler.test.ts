/** The synthesis scheduler's order: streams about to run dry, then first pieces, then least slack, the least-served stream, the oldest. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AbortedError } from '../../src/errors.js';
import { outputUrgency, SynthesisScheduler, SynthesisStream, type OutputUrgency } from '../../src/synthesis/scheduler.js';

/** Asks for a slot and records, when granted, the label; the slot is held until release is called. */
function ask(scheduler: SynthesisScheduler, engine: object, stream: SynthesisStream, label: string, granted: string[], signal?: AbortSignal) {
  return scheduler.acquire(engine, stream, signal).then((release) => {
    granted.push(label);
    return release;
  });
}

describe('SynthesisScheduler', () => {
  it('serves every waiting first piece before any later piece, then the stream served least', async () => {
    const scheduler = new SynthesisScheduler(1);
    const engine = {};
    const [a, b, c] = [new SynthesisStream(), new SynthesisStream(), new SynthesisStream()];
    const granted: string[] = [];
    const releaseA1 = await ask(scheduler, engine, a, 'a1', granted);
    // While a1 runs: a's second piece asks first, then b's and c's first pieces.
    const a2 = ask(scheduler, engine, a, 'a2', granted);
    const b1 = ask(scheduler, engine, b, 'b1', granted);
    const c1 = ask(scheduler, engine, c, 'c1', granted);
    releaseA1();
    (await b1)();
    (await c1)();
    // Every stream has had one piece: from here on the oldest request goes first.
    const b2 = ask(scheduler, engine, b, 'b2', granted);
    (await a2)();
    const c2 = ask(scheduler, engine, c, 'c2', granted);
    (await b2)();
    (await c2)();
    assert.deepEqual(granted, ['a1', 'b1', 'c1', 'a2', 'b2', 'c2']);
  });

  it('prefers the stream with fewer pieces served over an older request', async () => {
    const scheduler = new SynthesisScheduler(1);
    const engine = {};
    const [a, b] = [new SynthesisStream(), new SynthesisStream()];
    const granted: string[] = [];
    (await ask(scheduler, engine, a, 'a1', granted))();
    const releaseA2 = await ask(scheduler, engine, a, 'a2', granted);
    const a3 = ask(scheduler, engine, a, 'a3', granted); // older, but a has had 2 pieces
    const b1 = ask(scheduler, engine, b, 'b1', granted);
    releaseA2();
    (await b1)();
    (await a3)();
    assert.deepEqual(granted, ['a1', 'a2', 'b1', 'a3']);
  });

  it('serves a playing stream about to run dry before first pieces, and other playing streams by least slack', async () => {
    const scheduler = new SynthesisScheduler(1, 1);
    const engine = {};
    const [x, a, b, c, d] = [new SynthesisStream(), new SynthesisStream(), new SynthesisStream(), new SynthesisStream(), new SynthesisStream()];
    const granted: string[] = [];
    // Each of a, c, d has had its first piece; their listeners hold 0.5 s, 20 s and 5 s of audio beyond what has played.
    for (const [stream, seconds] of [
      [a, 0.5],
      [c, 20],
      [d, 5],
    ] as const) {
      (await scheduler.acquire(engine, stream))();
      stream.played(seconds);
    }
    assert.ok(a.slack() < 1 && d.slack() > 4 && new SynthesisStream().slack() === Infinity);
    const releaseX = await ask(scheduler, engine, x, 'x1', granted);
    const c2 = ask(scheduler, engine, c, 'c2', granted);
    const d2 = ask(scheduler, engine, d, 'd2', granted);
    const b1 = ask(scheduler, engine, b, 'b1', granted);
    const a2 = ask(scheduler, engine, a, 'a2', granted);
    releaseX();
    (await a2)();
    (await b1)();
    (await d2)();
    (await c2)();
    assert.deepEqual(granted, ['x1', 'a2', 'b1', 'd2', 'c2']);
  });

  it('runs up to workersPerEngine pieces at once per engine, and engines do not share slots', async () => {
    const scheduler = new SynthesisScheduler(2);
    const [e1, e2] = [{}, {}];
    const granted: string[] = [];
    await ask(scheduler, e1, new SynthesisStream(), 'x', granted);
    await ask(scheduler, e1, new SynthesisStream(), 'y', granted);
    const waiting = ask(scheduler, e1, new SynthesisStream(), 'z', granted);
    await ask(scheduler, e2, new SynthesisStream(), 'other engine', granted);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(granted, ['x', 'y', 'other engine']);
    void waiting;
  });

  it('drops a waiter whose signal aborts, and passes the slot on to the next', async () => {
    const scheduler = new SynthesisScheduler(1);
    const engine = {};
    const granted: string[] = [];
    const release = await ask(scheduler, engine, new SynthesisStream(), 'first', granted);
    const abort = new AbortController();
    const gone = ask(scheduler, engine, new SynthesisStream(), 'gone', granted, abort.signal);
    const next = ask(scheduler, engine, new SynthesisStream(), 'next', granted);
    abort.abort();
    await assert.rejects(gone, AbortedError);
    release();
    release(); // a second call is ignored
    (await next)();
    assert.deepEqual(granted, ['first', 'next']);
  });

  it("ranks output work as the engine's: a playing stream about to run dry, then first audio, then least slack, then a whole file", () => {
    const now = 10_000;
    const playing = (seconds: number) => {
      const stream = new SynthesisStream();
      stream.played(seconds, now - 1000); // its first audio one second ago
      return stream;
    };
    const urgencies: [string, OutputUrgency][] = [
      ['whole file', outputUrgency(playing(3), false, 1, now)],
      ['20 s ahead', outputUrgency(playing(21), true, 1, now)],
      ['first audio', outputUrgency(new SynthesisStream(), true, 1, now)],
      ['4 s ahead', outputUrgency(playing(5), true, 1, now)],
      ['0.5 s ahead', outputUrgency(playing(1.5), true, 1, now)],
      ['ran dry', outputUrgency(playing(0.5), true, 1, now)],
    ];
    const order = [...urgencies].sort(([, a], [, b]) => a.tier - b.tier || a.slack - b.slack).map(([name]) => name);
    assert.deepEqual(order, ['ran dry', '0.5 s ahead', 'first audio', '4 s ahead', '20 s ahead', 'whole file']);
  });
});
