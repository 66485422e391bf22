/**
 * The database as something that can go away: which failures count as an outage, how the health
 * tracker probes and recovers, and that a statement failing inside a transaction is reported with
 * its own cause (SQLite ends the transaction itself on a full disk; the ROLLBACK that follows
 * fails with "cannot rollback - no transaction is active", which must not hide it).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { classifyStoreError, DatabaseUnavailableError, StoreHealth } from '../../src/store/availability.js';
import { openStore } from '../../src/store/database.js';

const quiet = { info() {}, warn() {}, error() {} };

describe('classifyStoreError', () => {
  it('tells an unreachable database, one that cannot write, and a statement that waited too long from errors about the statement', () => {
    const pgError = (code: string, message: string) => Object.assign(new Error(message), { code });
    assert.equal(classifyStoreError(pgError('57P01', 'terminating connection due to administrator command'))?.scope, 'connection');
    assert.equal(classifyStoreError(pgError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'))?.scope, 'connection');
    assert.equal(classifyStoreError(new Error('Connection terminated unexpectedly'))?.scope, 'connection');
    assert.equal(classifyStoreError(new Error('timeout exceeded when trying to connect'))?.scope, 'connection');
    assert.equal(classifyStoreError(pgError('53100', 'could not extend file: No space left on device'))?.scope, 'storage');
    assert.equal(classifyStoreError(pgError('25006', 'cannot execute INSERT in a read-only transaction'))?.scope, 'storage');
    assert.equal(classifyStoreError(pgError('57014', 'canceling statement due to statement timeout'))?.scope, 'contention');
    assert.equal(classifyStoreError(pgError('SQLITE_FULL', 'database or disk is full'))?.scope, 'storage');
    assert.equal(classifyStoreError(pgError('SQLITE_READONLY', 'attempt to write a readonly database'))?.scope, 'storage');
    assert.equal(classifyStoreError(pgError('SQLITE_IOERR_WRITE', 'disk I/O error'))?.scope, 'storage');
    assert.equal(classifyStoreError(pgError('SQLITE_BUSY', 'database is locked'))?.scope, 'contention');
    assert.equal(classifyStoreError(pgError('23505', 'duplicate key value violates unique constraint')), null);
    assert.equal(classifyStoreError(pgError('SQLITE_CONSTRAINT_UNIQUE', 'UNIQUE constraint failed')), null);
    assert.equal(classifyStoreError(new TypeError('x is not a function')), null);
  });
});

describe('StoreHealth', () => {
  it('is unavailable from a connection fault until a probe succeeds, probing with growing delays', async () => {
    const probes: number[] = [];
    let up = false;
    const started = Date.now();
    const health = new StoreHealth({
      probe: async () => {
        probes.push(Date.now() - started);
        if (!up) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
      },
      log: quiet,
      firstProbeDelayMs: 20,
      maxProbeIntervalMs: 80,
    });
    try {
      assert.equal(health.available, true);
      health.report({ scope: 'connection', reason: 'ECONNREFUSED' }, new Error('ECONNREFUSED'));
      assert.equal(health.available, false);
      assert.equal(health.unreachable, true);
      assert.equal(health.view().ok, false);
      assert.equal(health.view().error, 'ECONNREFUSED');
      assert.ok(health.retryAfterSeconds >= 1);
      const back = health.whenAvailable();
      await new Promise((r) => setTimeout(r, 300));
      assert.ok(probes.length >= 3, `probed ${probes.length} times`);
      const gaps = probes.slice(1).map((t, i) => t - probes[i]!);
      assert.ok(gaps.every((g) => g <= 80 + 40), `capped: ${gaps}`);
      assert.ok(gaps[gaps.length - 1]! > gaps[0]! - 5, `growing: ${gaps}`);
      up = true;
      // The probe timer does not hold the process open (a server has its sockets for that); this test does.
      const keepOpen = setInterval(() => {}, 1_000);
      await back.finally(() => clearInterval(keepOpen));
      assert.equal(health.available, true);
      assert.deepEqual(health.view(), { ok: true });
    } finally {
      health.close();
    }
  });

  it('a statement that waited too long fails alone: the database stays available', () => {
    const health = new StoreHealth({ probe: async () => {}, log: quiet, maxProbeIntervalMs: 100 });
    health.report({ scope: 'contention', reason: 'SQLITE_BUSY' }, new Error('database is locked'));
    assert.equal(health.available, true);
    health.close();
  });
});

describe('a SQLite store on a full disk', () => {
  it('fails a transaction with DatabaseUnavailableError carrying SQLite\'s own cause, then recovers', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'parley-store-full-'));
    const store = await openStore({ databaseUrl: '', dataDir: dir, log: quiet });
    try {
      const pages = Number((await sql<{ page_count: number }>`pragma page_count`.execute(store.db)).rows[0]!.page_count);
      // The file may not grow: SQLite answers SQLITE_FULL, as on a full disk, and ends the transaction itself.
      await sql.raw(`pragma max_page_count = ${pages}`).execute(store.db);
      const write = () =>
        store.db.transaction().execute(async (trx) => {
          for (let i = 0; i < 50; i++) await trx.insertInto('accounts').values({ id: `acct_${i}`, name: 'x'.repeat(4000), created_at: new Date().toISOString(), webhook_secret: 's' }).execute();
        });
      const err = await write().then(() => null, (e: unknown) => e);
      assert.ok(err instanceof DatabaseUnavailableError, `got ${String(err)}`);
      assert.equal(err.status, 503);
      assert.equal((err.cause as { code?: string }).code, 'SQLITE_FULL');
      assert.match(err.fault.reason, /database or disk is full/);
      assert.equal(store.health.available, false);

      await sql.raw(`pragma max_page_count = ${pages * 1000}`).execute(store.db);
      await store.health.probeNow();
      assert.equal(store.health.available, true);
      await write();
      assert.equal(Number((await sql<{ n: number }>`select count(*) as n from accounts`.execute(store.db)).rows[0]!.n), 50);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
