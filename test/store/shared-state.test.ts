/**
 * What nodes sharing one database rely on, on each backend: job audio stored in the database (in
 * chunks, deleted when transcription ends and with its job), retention deleting exactly the
 * finished jobs past the cut-off, leases held by one node at a time, times taken from the database
 * clock, and (PostgreSQL) one rate-limit bucket per account whichever connection pool takes from it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { AccountRepository } from '../../src/store/account-repository.js';
import { openStore, type Store } from '../../src/store/database.js';
import { JOB_AUDIO_CHUNK_BYTES, JobRepository } from '../../src/jobs/job-repository.js';
import { LeaseRepository } from '../../src/store/lease-repository.js';
import { RateLimitRepository } from '../../src/store/rate-limit-repository.js';
import { skipWithoutPg, withPgSchema } from '../helpers/pg-schema.js';

const DAY = 86_400_000;
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

function sampleAudio(bytes: number): Uint8Array {
  const a = new Uint8Array(bytes);
  for (let i = 0; i < bytes; i++) a[i] = (i * 7 + (i >> 11)) & 0xff;
  return a;
}

async function submit(repo: JobRepository, accountId: string, requestId: string, audio: Uint8Array, now?: string): Promise<string> {
  const id = `job_${requestId}`;
  await repo.submit({ id, accountId, requestId, audio, contentType: 'audio/wav', options: '{}', webhookUrl: 'http://127.0.0.1:9/h', webhookExtra: '{}', ...(now ? { now } : {}) });
  return id;
}

/** Drive a job to a final state with its finish time at `finishedAt`. */
async function finish(repo: JobRepository, id: string, state: 'succeeded' | 'failed', finishedAt: string): Promise<void> {
  const [job] = await repo.claim({ lockedBy: 'w', limit: 1, now: '9999-01-01T00:00:00.000Z' });
  assert.equal(job?.id, id);
  // Delivery due in 2000, before anything else waiting, so the next claim takes this job.
  assert.equal(await repo.completeTranscription(id, 'w', { outcome: 'success', result: '{}', error: null }, '2000-01-01T00:00:00.000Z'), true);
  assert.equal((await repo.claim({ lockedBy: 'w', limit: 1, now: '9999-01-01T00:00:00.000Z' }))[0]?.id, id);
  const attempt = { attempt: 1, attemptedAt: finishedAt, statusCode: 200, error: null, durationMs: 1 };
  const done = state === 'succeeded' ? await repo.acknowledge(id, 'w', attempt, state, finishedAt) : await repo.giveUp(id, 'w', attempt, 'no', finishedAt);
  assert.equal(done, true);
}

async function count(store: Store, table: 'jobs' | 'job_attempts' | 'job_audio', jobId: string): Promise<number> {
  const column = table === 'jobs' ? 'id' : 'job_id';
  const r = await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)} where ${sql.ref(column)} = ${jobId}`.execute(store.db);
  return Number(r.rows[0]!.n);
}

async function exercise(store: Store): Promise<void> {
  const repo = new JobRepository(store.db, store.backend);
  const accounts = new AccountRepository(store.db);
  const alice = (await accounts.create('alice')).id;
  const bob = (await accounts.create('bob')).id;

  // Audio larger than two chunks comes back byte for byte, and goes when transcription ends.
  const big = sampleAudio(2 * JOB_AUDIO_CHUNK_BYTES + 12_345);
  const bigJob = await submit(repo, alice, 'big', big, ago(50 * DAY));
  assert.equal(await count(store, 'job_audio', bigJob), 3);
  assert.ok(Buffer.from(big).equals(Buffer.from((await repo.readAudio(bigJob))!)), 'the audio round-trips');
  const empty = await submit(repo, alice, 'empty', new Uint8Array(0), ago(49 * DAY));
  assert.equal((await repo.readAudio(empty))?.byteLength, 0, 'an empty upload is stored as empty, not as missing');
  await finish(repo, bigJob, 'succeeded', ago(8 * DAY));
  assert.equal((await repo.claim({ lockedBy: 'w', limit: 1 }))[0]?.id, empty, '"empty" is running from now on');
  assert.equal(await count(store, 'job_audio', bigJob), 0, 'no audio after transcription');

  // Retention: the finished jobs older than 7 days go, with their attempts; nothing else does.
  const oldFailed = await submit(repo, bob, 'old-failed', sampleAudio(10));
  await finish(repo, oldFailed, 'failed', ago(30 * DAY));
  const recent = await submit(repo, alice, 'recent', sampleAudio(10));
  await finish(repo, recent, 'succeeded', ago(6 * DAY));
  const oldQueued = await submit(repo, alice, 'old-queued', sampleAudio(10), ago(40 * DAY));
  const cutoff = repo.clock.offset(-7 * DAY);
  assert.equal(await repo.deleteFinishedBefore(cutoff, 1), 1, 'one per batch');
  assert.equal(await repo.deleteFinishedBefore(cutoff, 1), 1);
  assert.equal(await repo.deleteFinishedBefore(cutoff, 1), 0, 'nothing more to delete');
  for (const gone of [bigJob, oldFailed]) {
    assert.equal(await count(store, 'jobs', gone), 0);
    assert.equal(await count(store, 'job_attempts', gone), 0, 'attempts go with their job');
  }
  assert.equal(await repo.findForAccount(alice, 'big'), undefined);
  assert.equal((await repo.findForAccount(alice, 'recent'))?.job.state, 'succeeded', 'finished 6 days ago: kept');
  assert.equal(await count(store, 'job_attempts', recent), 1);
  assert.equal((await repo.findForAccount(alice, 'empty'))?.job.state, 'running', 'unfinished: kept');
  assert.equal((await repo.findForAccount(alice, 'old-queued'))?.job.state, 'queued', 'created 40 days ago but not finished: kept');
  assert.equal(await count(store, 'job_audio', oldQueued), 1, 'with its audio');

  // A job's audio never outlives it, whatever deletes the job.
  await store.db.deleteFrom('jobs').where('id', '=', oldQueued).execute();
  assert.equal(await count(store, 'job_audio', oldQueued), 0);

  // Times come from the database clock: a node whose clock runs an hour ahead does not take a job
  // due in ten minutes, and its lock is stamped with the database's time.
  const later = await submit(repo, bob, 'later', sampleAudio(10), new Date(Date.now() + 10 * 60_000).toISOString());
  const realNow = Date.now;
  Date.now = () => realNow() + 3_600_000;
  try {
    assert.deepEqual(await repo.claim({ lockedBy: 'fast-clock', limit: 10 }), []);
  } finally {
    Date.now = realNow;
  }
  await store.db.updateTable('jobs').set({ run_at: ago(1000) }).where('id', '=', later).execute();
  const [claimed] = await repo.claim({ lockedBy: 'w2', limit: 10 });
  assert.equal(claimed?.id, later);
  assert.ok(Math.abs(Date.parse(claimed!.locked_at!) - Date.now()) < 5_000, `locked_at ${claimed!.locked_at} is the database's now`);

  // Leases: one holder at a time; the holder renews; a lapsed lease goes to whoever asks next.
  const leases = new LeaseRepository(store.db, store.backend);
  assert.equal(await leases.acquire('retention', 'node-a', 60_000), true);
  assert.equal(await leases.acquire('retention', 'node-b', 60_000), false);
  assert.equal(await leases.acquire('retention', 'node-a', 60_000), true, 'renewed');
  assert.equal(await leases.acquire('other-task', 'node-b', 60_000), true, 'leases are per task');
  await leases.release('retention', 'node-b');
  assert.equal(await leases.acquire('retention', 'node-b', 60_000), false, 'only the holder can release');
  assert.equal(await leases.acquire('retention', 'node-a', -1), true, 'node-a renews with a lease that has already lapsed');
  assert.equal(await leases.acquire('retention', 'node-b', 60_000), true, 'a lapsed lease is taken over');
  await leases.release('retention', 'node-b');
  assert.equal(await leases.acquire('retention', 'node-a', 60_000), true, 'a released lease is free');
}

describe('shared node state', () => {
  it('on SQLite', async () => {
    const store = await openStore({ databaseUrl: '', dataDir: mkdtempSync(path.join(tmpdir(), 'parley-shared-')) });
    try {
      await exercise(store);
    } finally {
      await store.close();
    }
  });

  /** Two stores (two connection pools, as two nodes) on a schema of this test's own. */
  async function withPgStores(name: string, body: (a: Store, b: Store) => Promise<void>): Promise<void> {
    await withPgSchema(name, async (url) => {
      const a = await openStore({ databaseUrl: url, dataDir: '' });
      const b = await openStore({ databaseUrl: url, dataDir: '' });
      try {
        await body(a, b);
      } finally {
        await a.close();
        await b.close();
      }
    });
  }

  it('on PostgreSQL', { skip: skipWithoutPg }, () => withPgStores('shared', (store) => exercise(store)));

  it('on PostgreSQL, rate-limit buckets are shared across pools and refill by the database clock', { skip: skipWithoutPg }, () =>
    withPgStores('buckets', async (a, b) => {
      const persistence = await sql<{ p: string }>`select relpersistence as p from pg_class where relname = 'rate_limit_buckets' and relnamespace = current_schema()::regnamespace`.execute(a.db);
      assert.equal(persistence.rows[0]?.p, 'u', 'unlogged: taking a token writes no WAL');
      const nodes = [new RateLimitRepository(a.db), new RateLimitRepository(b.db)];
      // Burst 10, 6 per minute (one token per 10 s): 10 takes from the two pools, then a wait.
      const waits = await Promise.all(Array.from({ length: 10 }, (_, i) => nodes[i % 2]!.take('management:acct_x', 10, 6)));
      assert.deepEqual(waits, Array(10).fill(0));
      const wait = await nodes[0]!.take('management:acct_x', 10, 6);
      assert.ok(wait > 9 && wait <= 10, `the 11th waits about 10 s for a token (got ${wait})`);
      assert.equal(await nodes[1]!.take('management:acct_y', 10, 6), 0, 'another account has its own bucket');
      // 20 concurrent requests on a fresh bucket of 5 (one token a minute): exactly 5 get through.
      const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => nodes[i % 2]!.take('synthesis:acct_z', 5, 1)));
      assert.equal(burst.filter((w) => w === 0).length, 5);
      // Refill: make the bucket's last change two minutes old (two tokens).
      await a.db.updateTable('rate_limit_buckets').set({ updated_ms: sql<number>`updated_ms - 120000` }).where('key', '=', 'synthesis:acct_z').execute();
      const after = await Promise.all([0, 1, 2].map((i) => nodes[i % 2]!.take('synthesis:acct_z', 5, 1)));
      assert.equal(after.filter((w) => w === 0).length, 2);
      // Idle buckets are full buckets: deleting them changes nothing for the account.
      await a.db.updateTable('rate_limit_buckets').set({ updated_ms: 0 }).where('key', '=', 'management:acct_y').execute();
      assert.equal(await nodes[0]!.deleteIdle(DAY), 1);
    }),
  );
});
