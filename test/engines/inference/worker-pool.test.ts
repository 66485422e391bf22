import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AbortedError, EngineError, ModelPackError, OverloadedError } from '../../../src/errors.js';
import type { VadTask } from '../../../src/engines/sherpa-tasks.js';
import { WorkerPool, createWorkerPool } from '../../../src/engines/inference/worker-pool.js';
import { loadCorpusAudio, sileroEngine } from '../stt-fixtures.js';
import { needs, REAL_TEST_MODELS } from '../../helpers/models.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD], corpus: true });

/** A real task with real work: Silero VAD over a corpus recording. */
function vadTask(samples: Float32Array, model?: string): VadTask {
  const config = sileroEngine().config;
  if (model) config.sileroVad.model = model;
  return { kind: 'vad', key: `test/vad#${config.sileroVad.model}`, config, bufferSeconds: 70, samples };
}

describe('WorkerPool', { skip: NEEDS }, () => {
  let long: Float32Array;
  let short: Float32Array;
  before(() => {
    long = loadCorpusAudio('diarization/ami-meeting-mixture-60s.wav').samples;
    short = loadCorpusAudio('en/jfk-inaugural-1961.wav').samples;
  });

  describe('with two workers', () => {
    let pool: WorkerPool;
    before(() => (pool = createWorkerPool({ workers: 2, queueSize: 4 })));
    after(() => pool.close());

    it('runs two tasks at once and returns what each would return alone', async () => {
      const alone = await pool.submit(vadTask(short));
      const both = [pool.submit(vadTask(long)), pool.submit(vadTask(short))];
      assert.equal(pool.busy, 2, 'both workers take a task');
      assert.equal(pool.queued, 0);
      const [longResult, shortResult] = await Promise.all(both);
      assert.deepEqual(shortResult, alone);
      assert.ok(longResult.spans.length > 0);
      assert.ok(longResult.spans.at(-1)![1] > 30 * 16000, 'the long task scanned the whole minute');
    });

    it('leaves the caller its samples (a copy is moved to the worker)', async () => {
      const mine = short.slice(0, 16000 * 3);
      await pool.submit(vadTask(mine));
      assert.equal(mine.length, 16000 * 3);
      assert.equal(mine.buffer.byteLength, 16000 * 3 * 4);
    });
  });

  it('rejects with OverloadedError once every worker is busy and the queue is full', async () => {
    const pool = createWorkerPool({ workers: 1, queueSize: 1 });
    try {
      const running = pool.submit(vadTask(long));
      const queued = pool.submit(vadTask(short));
      await assert.rejects(pool.submit(vadTask(short)), (error: unknown) => {
        assert.ok(error instanceof OverloadedError);
        assert.equal(error.status, 503);
        assert.ok(error.retryAfterSeconds! >= 1);
        return true;
      });
      // The refused task did not disturb the accepted ones.
      assert.ok((await running).spans.length > 0);
      assert.ok((await queued).spans.length > 0);
    } finally {
      await pool.close();
    }
  });

  it('drops a queued task when its signal aborts, and stops a running one', async () => {
    const pool = createWorkerPool({ workers: 1, queueSize: 4 });
    try {
      const runningAbort = new AbortController();
      const queuedAbort = new AbortController();
      const running = pool.submit(vadTask(long), { signal: runningAbort.signal });
      const queued = pool.submit(vadTask(short), { signal: queuedAbort.signal });
      const after = pool.submit(vadTask(short));
      assert.equal(pool.queued, 2);
      queuedAbort.abort();
      assert.equal(pool.queued, 1, 'the aborted task left the queue at once');
      await assert.rejects(queued, AbortedError);
      runningAbort.abort();
      await assert.rejects(running, AbortedError);
      // The worker survived the abort and serves the next task.
      assert.ok((await after).spans.length > 0);
      await assert.rejects(pool.submit(vadTask(short), { signal: AbortSignal.abort() }), AbortedError);
    } finally {
      await pool.close();
    }
  });

  it('reports a model that cannot load as ModelPackError and keeps working', async () => {
    const pool = createWorkerPool({ workers: 1 });
    try {
      await assert.rejects(pool.submit(vadTask(short, '/nonexistent/silero_vad.onnx')), ModelPackError);
      assert.ok((await pool.submit(vadTask(short))).spans.length > 0);
    } finally {
      await pool.close();
    }
  });

  it('fails queued and new tasks with EngineError after close()', async () => {
    const pool = createWorkerPool({ workers: 1, queueSize: 2 });
    const running = assert.rejects(pool.submit(vadTask(long)), EngineError);
    const queued = assert.rejects(pool.submit(vadTask(short)), EngineError);
    await pool.close();
    await running;
    await queued;
    await assert.rejects(pool.submit(vadTask(short)), EngineError);
  });
});
