/**
 * Retention through a real server: a finished job disappears after the retention period (its
 * status endpoint answers 404, its attempts are gone), while a job still being delivered, and every
 * job of a server that keeps jobs (days = 0), stay. The period is a fraction of a day here.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { JobService } from '../../src/jobs/job-service.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { plainOptions as options, silentLog as silent, until } from './fixtures/job-options.js';
import { startReceiver } from './fixtures/receiver.js';
import { makeWav, wavTranscribe } from './fixtures/wav-transcribe.js';

/** 1.5 seconds, in days. */
const SHORT_DAYS = 1.5 / 86_400;

async function startWithJobs(retentionDays: number): Promise<{ t: TestServer; jobs: JobService; deleted: number[] }> {
  let jobs!: JobService;
  const t = await startTestServer({
    config: {
      webhooks: { backoffBaseMs: 3_000, backoffCapMs: 3_000, timeoutMs: 1_000, pollMs: 20 },
      retention: { days: retentionDays, intervalMs: 100, batchSize: 2 },
      rateLimits: { transcription: { perMinute: 0 } },
    },
    transcribe: wavTranscribe(),
    jobs: { log: silent },
  });
  jobs = t.server.jobs!.service;
  const deleted: number[] = [];
  jobs.events.on('jobs:deleted', (e) => deleted.push(e.count));
  return { t, jobs, deleted };
}

async function status(t: TestServer, requestId: string): Promise<{ status: number; body: any }> {
  const r = await t.api(`/api/v1/stt/jobs/${requestId}`);
  return { status: r.status, body: await r.json() };
}

describe('retention', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  before(async () => {
    // "keep-*" jobs are refused with 503 (retried after 3 s), so they stay delivering meanwhile.
    receiver = await startReceiver(({ requestId }) => (requestId.startsWith('keep-') ? 503 : 200));
  });
  after(() => receiver?.close());

  it('deletes finished jobs after the period (status 404, attempts gone) and keeps the rest', async () => {
    const { t, jobs, deleted } = await startWithJobs(SHORT_DAYS);
    try {
      const submit = (requestId: string) =>
        jobs.submit({ accountId: t.accountId, requestId, input: { bytes: makeWav(0.2), contentType: 'audio/wav' }, options, webhookUrl: receiver.url, webhookExtra: {} });
      for (const id of ['done-1', 'done-2', 'done-3', 'keep-1']) await submit(id);

      await until('the three jobs to succeed', async () => {
        const states = await Promise.all(['done-1', 'done-2', 'done-3'].map(async (id) => (await status(t, id)).body.state));
        return states.every((s) => s === 'succeeded');
      });
      const finished = await status(t, 'done-1');
      assert.equal(finished.body.attempts.length, 1);

      await until('retention to delete them', async () => (await status(t, 'done-3')).status === 404 && (await status(t, 'done-1')).status === 404);
      for (const id of ['done-1', 'done-2', 'done-3']) {
        const gone = await status(t, id);
        assert.equal(gone.status, 404);
        assert.deepEqual(gone.body, { error: `No job with request_id ${id}`, request_id: gone.body.request_id });
      }
      assert.equal(deleted.reduce((a, b) => a + b, 0), 3, 'three jobs deleted, in batches of at most two');
      assert.ok(deleted.length >= 1);

      const { db } = t.server.storage.store;
      const left = await sql<{ n: number }>`select count(*) as n from job_attempts a join jobs j on j.id = a.job_id where j.request_id like 'done-%'`.execute(db);
      assert.equal(Number(left.rows[0]!.n), 0, 'their attempts went with them');
      const orphans = await sql<{ n: number }>`select count(*) as n from job_attempts where job_id not in (select id from jobs)`.execute(db);
      assert.equal(Number(orphans.rows[0]!.n), 0, 'no attempt outlives its job');

      const kept = await status(t, 'keep-1');
      assert.equal(kept.status, 200, 'a job still being delivered is kept');
      assert.equal(kept.body.state, 'delivering');
      assert.ok(kept.body.attempts.length >= 1);
      assert.equal(await sql<{ n: number }>`select count(*) as n from job_audio`.execute(db).then((r) => Number(r.rows[0]!.n)), 0, 'no job audio after transcription');
    } finally {
      await t.close();
    }
  });

  it('keeps everything when days is 0', async () => {
    const { t, jobs, deleted } = await startWithJobs(0);
    try {
      await jobs.submit({ accountId: t.accountId, requestId: 'kept', input: { bytes: makeWav(0.2), contentType: 'audio/wav' }, options, webhookUrl: receiver.url, webhookExtra: {} });
      await until('the job to succeed', async () => (await status(t, 'kept')).body.state === 'succeeded');
      // Make it finished long ago: with retention off it stays anyway.
      await t.server.storage.store.db.updateTable('jobs').set({ finished_at: '2000-01-01T00:00:00.000Z' }).execute();
      await new Promise((r) => setTimeout(r, 500));
      assert.equal((await status(t, 'kept')).status, 200);
      assert.deepEqual(deleted, []);
    } finally {
      await t.close();
    }
  });
});
