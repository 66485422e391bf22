import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * What several nodes on one database share: job audio in the database instead of a
 * node's disk, a lease row per cluster-wide task (retention), rate-limit buckets, and the index
 * retention deletes by. Columns are documented in schema.ts.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;

  // In chunks: no statement carries a whole 25 MB upload, and no result is parsed in one piece.
  await db.schema
    .createTable('job_audio')
    .addColumn('job_id', 'text', (c) => c.notNull().references('jobs.id').onDelete('cascade'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('bytes', postgres ? sql`bytea` : 'blob', (c) => c.notNull())
    .addPrimaryKeyConstraint('job_audio_pk', ['job_id', 'seq'])
    .execute();

  await db.schema
    .createTable('leases')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('holder', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();

  // UNLOGGED on PostgreSQL: a bucket change writes no WAL, so taking a token commits without a
  // disk flush. After a database crash the table is empty, i.e. every bucket full: fine for limits.
  await db.schema
    .createTable('rate_limit_buckets')
    .$call((t) => (postgres ? t.modifyFront(sql`unlogged`) : t))
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('tokens', 'double precision', (c) => c.notNull())
    .addColumn('updated_ms', 'double precision', (c) => c.notNull())
    .execute();

  await db.schema.createIndex('jobs_finished').on('jobs').column('finished_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('jobs_finished').execute();
  for (const t of ['rate_limit_buckets', 'leases', 'job_audio']) await db.schema.dropTable(t).execute();
}
