/**
 * The claim and lock transitions on each backend: two claimers never get the same job (SQLite by
 * the conditional UPDATE, PostgreSQL by FOR UPDATE SKIP LOCKED across two connection pools), a
 * stale lock is recovered, and a worker that lost its lock cannot overwrite the new owner.
 */
import { skipWithoutPg } from '../helpers/pg-schema.js';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { Kysely, Migrator, PostgresDialect } from 'kysely';
import pg from 'pg';
import { AccountRepository } from '../../src/store/account-repository.js';
import { StoreHealth } from '../../src/store/availability.js';
import { backendProfiles } from '../../src/store/backend.js';
import { openStore, type Store } from '../../src/store/database.js';
import { JobRepository } from '../../src/jobs/job-repository.js';
import { migrations } from '../../src/store/migrations/index.js';
import type { Database } from '../../src/store/schema.js';

const T0 = Date.parse('2030-01-01T00:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms).toISOString();

/**
 * Our own PostgreSQL store on a schema of its own. Not openStore: Kysely's Migrator, without
 * migrationTableSchema, takes kysely_migration tables of *another* schema of the same database for
 * its own and then fails ("kysely_migration_lock does not exist"); reported to the lead.
 */
async function openPgStore(url: string, schema: string): Promise<Store> {
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 4 }) }) });
  const migrator = new Migrator({ db, migrationTableSchema: schema, provider: { getMigrations: async () => migrations } });
  const { error } = await migrator.migrateToLatest();
  if (error) throw error;
  const health = new StoreHealth({ probe: async () => {}, log: { info() {}, warn() {}, error() {} }, maxProbeIntervalMs: 1000 });
  return { db, backend: backendProfiles.postgres, health, close: () => db.destroy() };
}

async function seed(store: Store, count: number): Promise<{ accountId: string; ids: string[] }> {
  const account = await new AccountRepository(store.db).create('jobs-test');
  const repo = new JobRepository(store.db, store.backend);
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const id = `job_${i.toString().padStart(3, '0')}_${Math.random().toString(36).slice(2, 8)}`;
    ids.push(id);
    await repo.submit({
      id,
      accountId: account.id,
      requestId: `req-${id}`,
      audio: new Uint8Array([i % 256, 1, 2, 3]),
      contentType: 'audio/wav',
      options: '{}',
      webhookUrl: 'http://127.0.0.1:9/hook',
      webhookExtra: '{}',
      now: at(i),
    });
  }
  return { accountId: account.id, ids };
}

async function exercise(storeA: Store, storeB: Store): Promise<void> {
  const { ids } = await seed(storeA, 40);
  const a = new JobRepository(storeA.db, storeA.backend);
  const b = new JobRepository(storeB.db, storeB.backend);

  // Two workers race for the same due jobs, several claims each at once; then they drain the rest.
  const claims = await Promise.all(
    [a, b, a, b, a, b, a, b].map((repo, i) => repo.claim({ lockedBy: i % 2 ? 'worker-b' : 'worker-a', limit: 7, now: at(1000) })),
  );
  for (let i = 0; i < 8; i++) claims.push(await [a, b][i % 2]!.claim({ lockedBy: i % 2 ? 'worker-b' : 'worker-a', limit: 7, now: at(1000) }));
  const claimed = claims.flat().map((j) => j.id);
  assert.equal(new Set(claimed).size, claimed.length, 'no job claimed twice');
  assert.deepEqual([...claimed].sort(), [...ids].sort(), 'every due job claimed once');
  assert.ok(claims.flat().every((j) => j.state === 'running'));
  assert.deepEqual(await a.claim({ lockedBy: 'worker-c', limit: 5, now: at(1000) }), [], 'locked jobs are not claimed');

  // worker-a dies; its locks are older than the stale cutoff and are released.
  const ofA = claims.filter((_, i) => i % 2 === 0).flat().map((j) => j.id);
  await b.heartbeat('worker-b', claims.filter((_, i) => i % 2 === 1).flat().map((j) => j.id), at(60_000));
  const recovered = await b.recoverStale({ staleBefore: at(30_000), exceptLockedBy: 'worker-b', now: at(61_000) });
  assert.equal(recovered, ofA.length);
  const again = await b.claim({ lockedBy: 'worker-b2', limit: 100, now: at(61_000) });
  assert.deepEqual(again.map((j) => j.id).sort(), [...ofA].sort());

  // worker-a comes back and tries to finish a job it no longer owns: refused.
  const stolen = ofA[0]!;
  assert.equal(await a.completeTranscription(stolen, 'worker-a', { outcome: 'success', result: '{}', error: null }, at(62_000)), false);
  assert.deepEqual(new Uint8Array((await b.readAudio(stolen))!), new Uint8Array([ids.indexOf(stolen) % 256, 1, 2, 3]), 'the audio stays while transcription has not ended');
  assert.equal(await b.completeTranscription(stolen, 'worker-b2', { outcome: 'success', result: '{}', error: null }, at(62_000)), true);
  assert.equal(await b.readAudio(stolen), null, 'the audio is deleted when transcription ends');

  // Delivery: claimed as delivering, an attempt recorded with the reschedule, then acknowledged.
  const [delivering] = await a.claim({ lockedBy: 'worker-d', limit: 1, now: at(62_000) });
  assert.equal(delivering?.id, stolen);
  assert.equal(delivering?.state, 'delivering');
  const attempt1 = { attempt: 1, attemptedAt: at(62_001), statusCode: 500, error: 'receiver answered HTTP 500', durationMs: 3 };
  assert.equal(await a.reschedule(stolen, 'worker-d', attempt1, at(70_000)), true);
  assert.deepEqual(await a.claim({ lockedBy: 'worker-d', limit: 1, now: at(69_999) }), [], 'not due before run_at');
  const [retry] = await a.claim({ lockedBy: 'worker-d', limit: 1, now: at(70_000) });
  assert.equal(retry?.attempts, 1);
  const attempt2 = { attempt: 2, attemptedAt: at(70_001), statusCode: 200, error: null, durationMs: 2 };
  assert.equal(await a.acknowledge(stolen, 'worker-d', attempt2, 'succeeded', at(70_003)), true);
  const found = await a.findForAccount(delivering!.account_id, delivering!.request_id);
  assert.equal(found?.job.state, 'succeeded');
  assert.equal(found?.job.audio_path, null);
  assert.deepEqual(found?.attempts.map((x) => [x.attempt, x.status_code]), [[1, 500], [2, 200]]);
}

describe('job repository', () => {
  it('claims, recovers and guards locks on SQLite', async () => {
    const store = await openStore({ databaseUrl: '', dataDir: mkdtempSync(path.join(tmpdir(), 'parley-jobs-db-')) });
    try {
      await exercise(store, store);
    } finally {
      await store.close();
    }
  });

  const pgUrl = process.env.PARLEY_TEST_DATABASE_URL;
  it('claims with FOR UPDATE SKIP LOCKED across two pools on PostgreSQL', { skip: skipWithoutPg }, async () => {
    const schema = `jobs_${Date.now()}_${process.pid}`;
    const admin = new pg.Client({ connectionString: pgUrl });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    const url = new URL(pgUrl!);
    url.searchParams.set('options', `-c search_path=${schema}`);
    const storeA = await openPgStore(url.toString(), schema);
    const storeB = await openPgStore(url.toString(), schema);
    try {
      assert.equal(storeA.backend.skipLocked, true);
      await exercise(storeA, storeB);
    } finally {
      await storeA.close();
      await storeB.close();
      await admin.query(`drop schema ${schema} cascade`);
      await admin.end();
    }
  });
});
