import { mkdirSync } from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type Migration, type MigrationProvider } from 'kysely';
import pg from 'pg';
import { backendProfiles, type BackendProfile } from './backend.js';
import { migrations } from './migrations/index.js';
import type { Database } from './schema.js';

export interface Store {
  db: Kysely<Database>;
  backend: BackendProfile;
  close(): Promise<void>;
}

/**
 * Open the database named by `databaseUrl` (PostgreSQL) or the SQLite file in `dataDir`,
 * and bring its schema up to date.
 */
export async function openStore(options: { databaseUrl: string; dataDir: string }): Promise<Store> {
  const { databaseUrl, dataDir } = options;
  let db: Kysely<Database>;
  let backend: BackendProfile;
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) {
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
    db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    backend = backendProfiles.postgres;
  } else {
    const file = databaseUrl.startsWith('sqlite:') ? databaseUrl.slice('sqlite:'.length) : path.join(dataDir, 'parley.db');
    if (file !== ':memory:') mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    const sqlite = new SqliteDatabase(file);
    // WAL lets readers go on while the job runner writes; busy_timeout rides out short write locks.
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('foreign_keys = ON');
    db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
    backend = backendProfiles.sqlite;
  }
  try {
    await migrateToLatest(db, backend.name === 'postgres');
  } catch (err) {
    await db.destroy();
    throw err;
  }
  return { db, backend, close: () => db.destroy() };
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
