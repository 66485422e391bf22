/**
 * CLI commands other than `serve` build what they need and start no background work: run while a
 * server (same SQLite data dir) is transcribing a job, `parley keys list` and `parley voices`
 * leave that job as it was — still running, still locked by the server, transcribed once and
 * delivered once. A job runner started by a command would requeue every locked job at its start-up.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { JobService } from '../../src/jobs/job-service.js';
import type { Transcribe } from '../../src/transcription/types.js';
import { repoRoot } from '../helpers/models.js';
import { startTestServer } from '../helpers/server.js';
import { plainOptions, silentLog as silent } from '../jobs/fixtures/job-options.js';
import { startReceiver } from '../jobs/fixtures/receiver.js';
import { makeWav, wavTranscribe } from '../jobs/fixtures/wav-transcribe.js';

const run = promisify(execFile);

function parley(args: string[], env: NodeJS.ProcessEnv) {
  return run(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'src/cli/parley.ts'), ...args], { cwd: repoRoot, env: { ...process.env, ...env } });
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('CLI commands beside a running server', () => {
  it('`parley keys list` and `parley voices` leave a job the server is transcribing untouched', { timeout: 120_000 }, async () => {
    const receiver = await startReceiver();
    // Transcription waits for the test's go, so the job stays running and locked meanwhile.
    let go!: () => void;
    const gate = new Promise<void>((r) => (go = r));
    let transcriptions = 0;
    const inner = wavTranscribe();
    const gated: Transcribe = async (input, options, context) => {
      transcriptions++;
      await gate;
      return inner(input, options, context);
    };
    let jobs!: JobService;
    const s = await startTestServer({
      config: { webhooks: { pollMs: 20 } },
      transcribe: gated, jobs: { log: silent },
    });
    jobs = s.server.jobs!.service;
    try {
      const { db } = s.server.storage.store;
      await jobs.submit({
        accountId: s.accountId,
        requestId: 'held-job',
        input: { bytes: makeWav(0.5), contentType: 'audio/wav' },
        options: plainOptions,
        webhookUrl: receiver.url,
        webhookExtra: {},
      });
      const row = () => db.selectFrom('jobs').select(['state', 'locked_by']).where('request_id', '=', 'held-job').executeTakeFirstOrThrow();
      const held = await until('the server to hold the job', async () => {
        const r = await row();
        return r.state === 'running' ? r : undefined;
      });
      assert.equal(held.locked_by, s.server.storage.nodeId);

      const env = { PARLEY_DATA_DIR: s.config.dataDir, PARLEY_MODELS_DIR: mkdtempSync(path.join(tmpdir(), 'parley-no-models-')), DATABASE_URL: '', PARLEY_LOG_LEVEL: 'warn' };
      const listed = JSON.parse((await parley(['keys', 'list', '--json'], env)).stdout) as Array<{ name: string; role: string }>;
      assert.ok(listed.some((k) => k.name === 'test' && k.role === 'admin'));
      const voices = (await parley(['voices'], env)).stdout;
      assert.match(voices, /^espeak-en-us-male\t/m);

      assert.deepEqual(await row(), { state: 'running', locked_by: s.server.storage.nodeId }, 'the job is still running, held by the server');
      assert.equal(transcriptions, 1, 'nobody else started transcribing it');

      go();
      const done = await until('the job to end', async () => {
        const view = await jobs.get(s.accountId, 'held-job');
        return view?.state === 'succeeded' ? view : undefined;
      });
      assert.equal(done.attempts.length, 1);
      assert.equal(receiver.forRequest('held-job').length, 1, 'delivered once');
      assert.equal(transcriptions, 1);
    } finally {
      go();
      await s.close();
      await receiver.close();
    }
  });
});
