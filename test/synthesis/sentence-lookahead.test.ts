import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setImmediate as tick } from 'node:timers/promises';
import { synthesizeAhead } from '../../src/synthesis/sentence-lookahead.js';

/**
 * A scripted engine: each sentence yields `piecesPerSentence` one-sample pieces whose value encodes
 * (sentence, piece), with a macrotask between pieces like a worker's messages. It logs when each
 * sentence starts, ends or is stopped by its signal.
 */
function scriptedEngine(options: { piecesPerSentence?: number; failOn?: string } = {}) {
  const pieces = options.piecesPerSentence ?? 3;
  const log: string[] = [];
  const synthesize = async function* (sentence: string, signal: AbortSignal): AsyncGenerator<Float32Array> {
    log.push(`start ${sentence}`);
    try {
      for (let p = 0; p < pieces; p++) {
        await tick();
        if (signal.aborted) {
          log.push(`stopped ${sentence}`);
          throw new Error('aborted');
        }
        if (sentence === options.failOn && p === 1) throw new Error(`engine failed on ${sentence}`);
        yield Float32Array.of(Number(sentence.slice(1)) * 10 + p);
      }
      log.push(`end ${sentence}`);
    } finally {
      // Nothing to free; the log shows the order of events.
    }
  };
  return { log, synthesize };
}

async function collect(iterable: AsyncIterable<Float32Array>): Promise<number[]> {
  const out: number[] = [];
  for await (const piece of iterable) out.push(...piece);
  return out;
}

describe('synthesizeAhead', () => {
  test('yields every sentence in order, piece by piece', async () => {
    const engine = scriptedEngine();
    const values = await collect(synthesizeAhead(['s1', 's2', 's3'], engine.synthesize, new AbortController().signal));
    assert.deepEqual(values, [10, 11, 12, 20, 21, 22, 30, 31, 32]);
  });

  test('the next sentence is synthesised while the caller still holds the current one', async () => {
    const engine = scriptedEngine();
    const audio = synthesizeAhead(['s1', 's2', 's3'], engine.synthesize, new AbortController().signal);
    assert.deepEqual([...(await audio.next()).value!], [10]);
    // The caller is busy with s1's first piece; meanwhile the engine finishes s1 and moves on.
    for (let i = 0; i < 20; i++) await tick();
    assert.ok(engine.log.includes('end s1'), engine.log.join(', '));
    assert.ok(engine.log.includes('start s2'), `s2 should have started: ${engine.log.join(', ')}`);
    // Only one sentence ahead: s3 waits until the caller reaches s2.
    assert.ok(!engine.log.includes('start s3'), `s3 started too early: ${engine.log.join(', ')}`);
    assert.deepEqual(await collect(audio), [11, 12, 20, 21, 22, 30, 31, 32]);
  });

  test('stopping early stops the sentence being prefetched', async () => {
    const engine = scriptedEngine({ piecesPerSentence: 50 });
    const audio = synthesizeAhead(['s1', 's2', 's3'], engine.synthesize, new AbortController().signal);
    for await (const piece of audio) {
      if (piece[0] === 20) break; // s2 under way, s3 prefetching or about to
    }
    assert.ok(!engine.log.some((l) => l.startsWith('end s3')), engine.log.join(', '));
    const startedLater = engine.log.filter((l) => l.startsWith('start')).length;
    for (let i = 0; i < 20; i++) await tick();
    // Nothing new starts after the caller has gone, and what was running stopped.
    assert.equal(engine.log.filter((l) => l.startsWith('start')).length, startedLater);
    if (engine.log.includes('start s3')) assert.ok(engine.log.includes('stopped s3'), engine.log.join(', '));
  });

  test('an engine error surfaces after the sentences before it', async () => {
    const engine = scriptedEngine({ failOn: 's2' });
    const got: number[] = [];
    await assert.rejects(async () => {
      for await (const piece of synthesizeAhead(['s1', 's2', 's3'], engine.synthesize, new AbortController().signal)) got.push(...piece);
    }, /engine failed on s2/);
    assert.deepEqual(got, [10, 11, 12, 20]);
    assert.ok(!engine.log.includes('start s3'), engine.log.join(', '));
  });

  test('aborting the outer signal stops the engine and ends the iteration', async () => {
    const engine = scriptedEngine({ piecesPerSentence: 50 });
    const abort = new AbortController();
    const audio = synthesizeAhead(['s1', 's2'], engine.synthesize, abort.signal);
    await audio.next();
    abort.abort();
    await assert.rejects(collect(audio), /aborted/);
    assert.ok(engine.log.includes('stopped s1'), engine.log.join(', '));
  });
});
