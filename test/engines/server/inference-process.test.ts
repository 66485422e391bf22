/**
 * The supervisor's bounds on a real inference process (a child running Silero VAD): a task past
 * its deadline fails with 503 and, when the process does not let go of it, the process is killed
 * and replaced; a process over its memory ceiling is replaced after its task; an aborted task
 * stops inside the child instead of running to its end.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { requireFiles } from '../../../src/engines/inference/inference-core.js';
import type { InferenceProcess, InferenceProcessOptions } from '../../../src/engines/server/inference-process.js';
import { testInferenceProcess } from '../../helpers/inference.js';
import type { VadTask } from '../../../src/engines/sherpa-tasks.js';
import { AbortedError, InferenceUnavailableError, ModelPackError } from '../../../src/errors.js';
import { sileroEngine } from '../stt-fixtures.js';
import { needs, REAL_TEST_MODELS } from '../../helpers/models.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD] });

const processWith = testInferenceProcess;

/** `seconds` of low noise at 16 kHz: the VAD scans all of it and finds nothing. */
function noise(seconds: number): Float32Array {
  const samples = new Float32Array(seconds * 16_000);
  let seed = 7;
  for (let i = 0; i < samples.length; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    samples[i] = ((seed / 0x7fffffff) * 2 - 1) * 0.001;
  }
  return samples;
}

const vadTask = (samples: Float32Array): VadTask => ({ kind: 'vad', key: 'silero', config: sileroEngine().config, bufferSeconds: 70, samples });

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('InferenceProcess', { skip: NEEDS }, () => {
  const processes: InferenceProcess[] = [];
  const make = (options: Partial<InferenceProcessOptions> = {}) => {
    const p = processWith(options);
    processes.push(p);
    return p;
  };
  after(() => Promise.all(processes.map((p) => p.close())));

  it('runs a task in a child process and says which', async () => {
    const inference = make();
    const { spans } = await inference.submit(vadTask(noise(2)));
    assert.deepEqual(spans, []);
    const status = inference.status();
    assert.equal(status.state, 'ready');
    assert.notEqual(status.pid, process.pid);
    assert.deepEqual(status.models, ['silero']);
    assert.equal(status.tasks.completed, 1);
  });

  it('fails a task past its deadline with 503, and kills and replaces a process that does not let go', async () => {
    const inference = make({ deadlines: { baseMs: 3_000, perAudioSecondMs: 0, perCharacterMs: 0 } });
    await inference.submit(vadTask(noise(1))); // started and warm
    const pid = inference.pid!;
    process.kill(pid, 'SIGSTOP'); // stuck: it cannot answer the cancellation
    await assert.rejects(inference.submit(vadTask(noise(5))), (e: unknown) => e instanceof InferenceUnavailableError && /deadline of 3 s/.test(e.message));
    await until(() => inference.status().restarts === 1, 'the stuck process to be killed');
    assert.equal(inference.status().lastExit?.reason, 'was killed by SIGKILL');
    const { spans } = await inference.submit(vadTask(noise(1)));
    assert.deepEqual(spans, []);
    assert.notEqual(inference.pid, pid);
  });

  it('replaces a process over its memory ceiling after its current task', async () => {
    const inference = make({ memoryCeilingBytes: 1 });
    const first = inference.submit(vadTask(noise(1)));
    const firstPid = inference.pid;
    await first;
    assert.equal(inference.status().pid, null, 'no process takes new tasks: the old one is leaving');
    const second = inference.submit(vadTask(noise(1)));
    const secondPid = inference.pid;
    assert.deepEqual(await second, { spans: [] });
    assert.ok(firstPid && secondPid && firstPid !== secondPid, 'a new process ran the second task');
    const status = inference.status();
    assert.equal(status.restarts, 0, 'a replacement, not a crash');
    assert.equal(status.tasks.completed, 2);
  });

  it('stops an aborted task inside the child rather than letting it run to its end', async () => {
    const inference = make({ cancelGraceMs: 30_000 });
    await inference.submit(vadTask(noise(1)));
    const controller = new AbortController();
    const long = inference.submit(vadTask(noise(600)), { signal: controller.signal });
    await until(() => inference.status().tasks.running === 1, 'the task to start');
    controller.abort();
    await assert.rejects(long, AbortedError);
    // The child answers "aborted" (it checks between windows), so the task leaves without completing.
    await until(() => inference.status().tasks.running === 0, 'the child to let go');
    assert.equal(inference.status().tasks.completed, 1, 'only the warm-up completed');
    assert.equal(inference.status().restarts, 0);
  });
});

describe('model files checked before sherpa sees them', () => {
  it('checks each file of a comma-joined lexicon, and names the missing ones', () => {
    const here = fileURLToPath(import.meta.url);
    assert.doesNotThrow(() => requireFiles([`${here},${here}`, here]));
    assert.throws(
      () => requireFiles([`${here},/nonexistent/lexicon-zh.txt`]),
      (e: unknown) => e instanceof ModelPackError && /lexicon-zh\.txt/.test(e.message) && !e.message.includes(here),
    );
  });
});
