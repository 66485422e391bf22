import { mkdirSync, statSync, type Stats } from 'node:fs';
import path from 'node:path';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type Dialect, type Migration, type MigrationProvider } from 'kysely';
import pg from 'pg';
import { classifyStoreError, guardedDialect, StoreHealth, type StoreLogger } from './availability.js';
import { backendProfiles, type BackendProfile } from './backend.js';
import { migrations } from './migrations/index.js';
import { SqliteDatabase, type SqliteConnection } from './sqlite-driver.js';
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

/** How often a SQLite file's permissions and identity are compared with those it was opened with, ms. */
const SQLITE_FILE_CHECK_MS = 1_000;

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
    const sqlite = new SqliteFile(file, log);
    dialect = new SqliteDialect({ database: sqlite.database });
    backend = backendProfiles.sqlite;
    probe = async () => sqlite.probe();
    release = () => sqlite.stopWatching();
  }
  const health = new StoreHealth({ probe, log, maxProbeIntervalMs: settings.probeMaxIntervalMs });
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

/**
 * A SQLite file behind one connection that can be reopened. An open file descriptor keeps the
 * rights it was opened with, so a file made read-only (or replaced, or restored from a backup)
 * under a running server would go on being written as before; the file is therefore compared
 * with what was opened every second, and reopened between transactions when it changed: from
 * then on SQLite itself refuses writes to a read-only file (503s), and accepts them again once
 * the file is writable and has changed back.
 */
class SqliteFile {
  private current: SqliteConnection;
  private openedAs: Stats | null;
  private watcher: NodeJS.Timeout | null = null;

  /** What Kysely's SqliteDialect holds: statements always go to the current connection. */
  readonly database = {
    prepare: (source: string) => this.current.prepare(source),
    close: () => this.current.close(),
  };

  constructor(
    private readonly file: string,
    private readonly log: StoreLogger,
  ) {
    this.current = SqliteFile.open(file, false);
    this.openedAs = this.identity();
    if (file !== ':memory:') {
      this.watcher = setInterval(() => this.reopenIfChanged(), SQLITE_FILE_CHECK_MS);
      this.watcher.unref();
    }
  }

  private static open(file: string, mustExist: boolean): SqliteConnection {
    const db = new SqliteDatabase(file, { fileMustExist: mustExist });
    // WAL lets readers go on while the job runner writes; busy_timeout rides out short write locks.
    if (!db.readonly) db.pragma('journal_mode = WAL');
    db.pragma('busy_timeout = 5000');
    db.pragma('foreign_keys = ON');
    return db;
  }

  private identity(): Stats | null {
    if (this.file === ':memory:') return null;
    try {
      return statSync(this.file);
    } catch {
      return null;
    }
  }

  /** Reopen when the file's owner, mode or inode changed; not inside a transaction. */
  reopenIfChanged(): void {
    const now = this.identity();
    const before = this.openedAs;
    if (!now || !before || this.current.inTransaction) return;
    if (now.ino === before.ino && now.dev === before.dev && now.mode === before.mode && now.uid === before.uid && now.gid === before.gid) return;
    try {
      const next = SqliteFile.open(this.file, true);
      const previous = this.current;
      this.current = next;
      this.openedAs = now;
      previous.close();
      this.log.warn({ readonly: next.readonly, mode: (now.mode & 0o777).toString(8) }, 'the database file changed under the server (permissions, owner or a new file); reopened it');
    } catch (err) {
      this.log.error({ err }, 'the database file changed under the server and could not be reopened; the open connection is kept');
      this.openedAs = now;
    }
  }

  /** A write that commits (the header's user_version, to its own value): the file takes writes again. */
  probe(): void {
    this.reopenIfChanged();
    if (this.current.inTransaction) throw Object.assign(new Error('a transaction is open'), { code: 'SQLITE_BUSY' });
    const version = this.current.pragma('user_version', { simple: true }) as number;
    this.current.pragma(`user_version = ${Number(version) | 0}`);
  }

  stopWatching(): void {
    if (this.watcher) clearInterval(this.watcher);
    this.watcher = null;
  }
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
