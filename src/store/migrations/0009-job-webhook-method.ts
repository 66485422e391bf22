import type { Kysely } from 'kysely';

/**
 * The HTTP method a job's webhook is delivered with (`webhook_method`), stored with the job so
 * that whichever node delivers it uses the method the client asked for. Jobs stored before it
 * are delivered with POST, as they always were.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('jobs').addColumn('webhook_method', 'text', (c) => c.notNull().defaultTo('POST')).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('jobs').dropColumn('webhook_method').execute();
}
