import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type Dialect, type Migration, type MigrationProvider } from 'kysely';
import pg from 'pg';
import { classifyStoreError, guardedDialect, StoreHealth, type StoreLogger } from './availability.js';
import { backendProfiles, type BackendProfile } from './backend.js';
import { migrations } from './migrations/index.js';
import { SqliteFile } from './sqlite-file.js';
import type { Database } from './schema.js';

export interface Store {
  db: Kysely<Database>;
  backend: BackendProfile;
  /** Whether the database is usable now; probes it while it is not. */
  health: StoreHealth;
  close(): Promise<void>;
}

export interface StoreSettings {
  poolSize: number;
  connectTimeoutMs: number;
  statementTimeoutMs: number;
  probeMaxIntervalMs: number;
}

const defaultSettings: StoreSettings = { poolSize: 10, connectTimeoutMs: 5_000, statementTimeoutMs: 10_000, probeMaxIntervalMs: 5_000 };

const quietLog: StoreLogger = { info() {}, warn() {}, error() {} };

/**
 * Open the database named by `databaseUrl` (PostgreSQL) or the SQLite file in `dataDir`,
 * and bring its schema up to date.
 */
export async function openStore(options: { databaseUrl: string; dataDir: string; settings?: StoreSettings; log?: StoreLogger }): Promise<Store> {
  const { databaseUrl, dataDir } = options;
  const settings = options.settings ?? defaultSettings;
  const log = options.log ?? quietLog;
  let dialect: Dialect;
  let backend: BackendProfile;
  let probe: () => Promise<void>;
  let release: () => void = () => {};
  // The SQLite file reports faults it finds by watching its files; the tracker is made below.
  let health: StoreHealth | undefined;
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) {
    const pool = new pg.Pool({
      connectionString: databaseUrl,
      max: settings.poolSize,
      connectionTimeoutMillis: settings.connectTimeoutMs,
      // Server side, so a statement stuck on a lock is cancelled there; the client-side timer
      // covers a server that stopped answering at all (a lost network path).
      statement_timeout: settings.statementTimeoutMs,
      query_timeout: settings.statementTimeoutMs + settings.connectTimeoutMs,
      idle_in_transaction_session_timeout: settings.statementTimeoutMs + settings.connectTimeoutMs,
      keepAlive: true,
    });
    // node-postgres emits 'error' on the pool for an idle connection that breaks (the server
    // restarting, an administrator ending sessions), and on a client checked out between two
    // statements; unhandled, either ends the process. The pool drops a broken client by itself;
    // the statement that meets the outage reports it to the health tracker.
    const onConnectionError = (err: Error) => log.warn({ err, reason: classifyStoreError(err)?.reason ?? err.message }, 'a database connection broke; it is replaced when needed');
    pool.on('error', onConnectionError);
    pool.on('connect', (client) => client.on('error', onConnectionError));
    dialect = new PostgresDialect({ pool });
    backend = backendProfiles.postgres;
    // A standby answers reads but refuses writes: after a failover, ready means promoted.
    probe = async () => {
      const { rows } = await pool.query<{ standby: boolean }>('select pg_is_in_recovery() as standby');
      if (rows[0]?.standby) throw Object.assign(new Error('the database is a read-only standby (in recovery)'), { code: '25006' });
    };
  } else {
    const file = databaseUrl.startsWith('sqlite:') ? databaseUrl.slice('sqlite:'.length) : path.join(dataDir, 'parley.db');
    if (file !== ':memory:') mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    const sqlite = new SqliteFile(file, log, (fault, err) => health?.report(fault, err));
    dialect = new SqliteDialect({ database: sqlite.database });
    backend = backendProfiles.sqlite;
    probe = async () => sqlite.probe();
    release = () => sqlite.stopWatching();
  }
  health = new StoreHealth({ probe, log, maxProbeIntervalMs: settings.probeMaxIntervalMs });
  const db = new Kysely<Database>({ dialect: guardedDialect(dialect, health) });
  const close = async () => {
    health.close();
    release();
    await db.destroy();
  };
  try {
    await migrateToLatest(db, backend.name === 'postgres');
  } catch (err) {
    await close();
    throw err;
  }
  return { db, backend, health, close };
}

class StaticMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return migrations;
  }
}

/** Apply every numbered migration not yet recorded (Kysely records them in kysely_migration). */
export async function migrateToLatest(db: Kysely<any>, postgres = false): Promise<string[]> {
  // On PostgreSQL the bookkeeping tables go in the connection's own schema: without a schema,
  // Kysely finds kysely_migration tables of another schema of the same database and skips creating its own.
  const migrationTableSchema = postgres
    ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema
    : undefined;
  const migrator = new Migrator({ db, provider: new StaticMigrationProvider(), ...(migrationTableSchema ? { migrationTableSchema } : {}) });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw new Error(`Database migration failed: ${(error as Error).message ?? error}`);
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
