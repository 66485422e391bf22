import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * Voice cloning: what a clone was made from and how it speaks, kept in the database so
 * every node can serve it. The sample (at most cloning.sampleSeconds of 16-bit PCM, ~720 kB at
 * 24 kHz) lives in its own table, so listing clones never reads it. Columns are documented in schema.ts.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  for (const column of ['description', 'language', 'transcript', 'engine', 'engine_settings', 'profile', 'error']) {
    await db.schema.alterTable('cloned_voices').addColumn(column, 'text').execute();
  }
  await db.schema
    .createTable('cloned_voice_samples')
    .addColumn('voice_id', 'text', (c) => c.primaryKey().references('cloned_voices.id').onDelete('cascade'))
    .addColumn('sample_rate', 'integer', (c) => c.notNull())
    .addColumn('pcm', postgres ? sql`bytea` : 'blob', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('cloned_voice_samples').execute();
  for (const column of ['error', 'profile', 'engine_settings', 'engine', 'transcript', 'language', 'description']) {
    await db.schema.alterTable('cloned_voices').dropColumn(column).execute();
  }
}
