/**
 * Upgrading a SQLite database made by a version before key roles and database-held job audio:
 * the oldest active key becomes admin, an operator key stored twice is kept once, and a job queued
 * with its audio in `<dataDir>/jobs/` is moved into the database, transcribed and delivered.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { SqliteDatabase } from '../../src/store/sqlite-driver.js';
import { Kysely, Migrator, SqliteDialect } from 'kysely';
import type { JobService } from '../../src/jobs/job-service.js';
import { migrations } from '../../src/store/migrations/index.js';
import { startTestServer } from '../helpers/server.js';
import { plainOptions, silentLog as silent } from '../jobs/fixtures/job-options.js';
import { startReceiver } from '../jobs/fixtures/receiver.js';
import { makeWav, wavTranscribe } from '../jobs/fixtures/wav-transcribe.js';


describe('upgrade from a database before 0004', () => {
  it('makes the oldest key admin, keeps one row per key, and adopts queued job audio files', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'parley-upgrade-'));
    const file = path.join(dataDir, 'parley.db');
    const db = new Kysely<any>({ dialect: new SqliteDialect({ database: new SqliteDatabase(file) }) });
    const { error } = await new Migrator({ db, provider: { getMigrations: async () => migrations } }).migrateTo('0002-jobs');
    assert.equal(error, undefined);
    const t = (s: number) => new Date(Date.UTC(2025, 0, 1, 0, 0, s)).toISOString();
    await db.insertInto('accounts').values({ id: 'acct_1', name: 'a', webhook_secret: 'whsec_x', created_at: t(0) }).execute();
    const key = (id: string, hash: string, s: number, revoked = false) => ({
      id, account_id: 'acct_1', name: id, prefix: 'abcdefgh', hash, created_at: t(s), revoked_at: revoked ? t(s + 1) : null,
    });
    await db.insertInto('api_keys').values([
      key('key_revoked', 'h0', 0, true),
      key('key_first', 'h1', 1),
      key('key_env_a', 'h2', 2),
      key('key_env_b', 'h2', 3), // the same key stored by a second node
      key('key_other', 'h3', 4),
    ]).execute();
    mkdirSync(path.join(dataDir, 'jobs'));
    writeFileSync(path.join(dataDir, 'jobs', 'job_legacy.audio'), makeWav(0.3));
    writeFileSync(path.join(dataDir, 'jobs', 'job_gone.audio.123.tmp'), 'half a file');
    await db.insertInto('jobs').values({
      id: 'job_legacy', account_id: 'acct_1', request_id: 'legacy', state: 'queued', audio_path: 'job_legacy.audio', content_type: 'audio/wav',
      options: JSON.stringify(plainOptions),
      webhook_url: 'http://127.0.0.1:9/replaced-below', webhook_extra: '{}', attempts: 0, run_at: t(5), created_at: t(5), updated_at: t(5),
    }).execute();
    const receiver = await startReceiver();
    await db.updateTable('jobs').set({ webhook_url: receiver.url }).execute();
    await db.destroy();

    let jobs!: JobService;
    const s = await startTestServer({
      config: { dataDir, webhooks: { pollMs: 20 } },
      transcribe: wavTranscribe(),
    jobs: { log: silent },
    });
    jobs = s.server.jobs!.service;
    try {
      const rows = await s.server.storage.store.db.selectFrom('api_keys').select(['id', 'role']).where('name', '!=', 'test').orderBy('created_at').execute();
      assert.deepEqual(rows, [
        { id: 'key_revoked', role: 'user' },
        { id: 'key_first', role: 'admin' },
        { id: 'key_env_a', role: 'user' },
        { id: 'key_other', role: 'user' },
      ]);

      const deadline = Date.now() + 15_000;
      while ((await jobs.get('acct_1', 'legacy'))?.state !== 'succeeded') {
        assert.ok(Date.now() < deadline, 'the legacy job was delivered');
        await new Promise((r) => setTimeout(r, 20));
      }
      const [delivery] = receiver.forRequest('legacy');
      assert.equal(delivery?.json.duration, 0.3, 'transcribed from the adopted file');
      assert.equal(existsSync(path.join(dataDir, 'jobs')), false, 'the old audio folder is gone');
    } finally {
      await s.close();
      await receiver.close();
    }
  });
});
