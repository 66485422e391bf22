import type { Kysely } from 'kysely';

/** jobs.runs: transcription runs started and not ended normally (src/jobs/job-runner.ts, poison jobs). */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('jobs').addColumn('runs', 'integer', (c) => c.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('jobs').dropColumn('runs').execute();
}
