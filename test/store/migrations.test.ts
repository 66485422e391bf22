import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { skipWithoutPg } from '../helpers/pg-schema.js';
import { ApiKeyService } from '../../src/accounts/api-keys.js';
import { AccountRepository } from '../../src/store/account-repository.js';
import { ApiKeyRepository } from '../../src/store/api-key-repository.js';
import { migrateToLatest, openStore, type Store } from '../../src/store/database.js';
import { migrations } from '../../src/store/migrations/index.js';
import { PronunciationDictRepository } from '../../src/store/pronunciation-dict-repository.js';

/** The same checks on each backend: schema from nothing, idempotent re-run, repositories work. */
async function exerciseStore(store: Store): Promise<void> {
  assert.deepEqual(await migrateToLatest(store.db), [], 'a second run applies nothing');
  const recorded = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(store.db);
  assert.deepEqual(recorded.rows.map((r) => r.name), Object.keys(migrations).sort());

  const keys = new ApiKeyService(new ApiKeyRepository(store.db), new AccountRepository(store.db));
  const created = await keys.create({ name: 'migration-test' });
  assert.equal((await keys.authenticate(created.key))?.accountId, created.account.id);
  assert.equal(await keys.authenticate(created.key.slice(0, -1) + (created.key.endsWith('a') ? 'b' : 'a')), null);
  const dicts = new PronunciationDictRepository(store.db);
  const d = await dicts.create(created.account.id, [{ word: 'a', pronunciation: 'b' }]);
  const { found, missing } = await dicts.findMany(created.account.id, [d.id, 'dict_missing']);
  assert.deepEqual(found.map((x) => x.id), [d.id]);
  assert.deepEqual(missing, ['dict_missing']);
}

describe('migrations', () => {
  it('build the schema on an empty SQLite file', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'parley-db-'));
    const store = await openStore({ databaseUrl: '', dataDir });
    try {
      assert.equal(store.backend.name, 'sqlite');
      await exerciseStore(store);
    } finally {
      await store.close();
    }
  });

  const pgUrl = process.env.PARLEY_TEST_DATABASE_URL;
  it('build the schema on PostgreSQL', { skip: skipWithoutPg }, async () => {
    // A schema of its own per run keeps repeated runs independent.
    const schema = `t_${Date.now()}_${process.pid}`;
    const admin = new pg.Client({ connectionString: pgUrl });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    await admin.end();
    const url = new URL(pgUrl!);
    url.searchParams.set('options', `-c search_path=${schema}`);
    const store = await openStore({ databaseUrl: url.toString(), dataDir: '' });
    try {
      assert.equal(store.backend.name, 'postgres');
      await exerciseStore(store);
    } finally {
      await store.close();
    }
  });
});
