import type { Kysely } from 'kysely';

/**
 * Webhook secret rotation with an overlap: the secret replaced by a rotation is kept, with the
 * time until which deliveries are signed with it too, so receivers can switch at their pace.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('accounts').addColumn('previous_webhook_secret', 'text').execute();
  await db.schema.alterTable('accounts').addColumn('previous_webhook_secret_until', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('accounts').dropColumn('previous_webhook_secret_until').execute();
  await db.schema.alterTable('accounts').dropColumn('previous_webhook_secret').execute();
}
