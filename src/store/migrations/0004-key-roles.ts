import { sql, type Kysely } from 'kysely';

/**
 * Key roles (`admin` may call /api/v1/admin/*, `user` may not), and one active row per key.
 * Before roles every key could do everything: the oldest active key — the one printed at first
 * start, or PARLEY_API_KEY — becomes admin, the others user (`parley keys create --admin` makes more).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('role', 'text', (c) => c.notNull().defaultTo('user')).execute();
  await sql`update api_keys set role = 'admin' where id = (
    select id from api_keys where revoked_at is null order by created_at, id limit 1)`.execute(db);

  // Nodes starting together with the same PARLEY_API_KEY could each store it; keep the oldest
  // active row of a key and let the unique index make the insert of a second one fail from now on.
  await sql`delete from api_keys where revoked_at is null and exists (
    select 1 from api_keys b where b.hash = api_keys.hash and b.revoked_at is null
      and (b.created_at < api_keys.created_at or (b.created_at = api_keys.created_at and b.id < api_keys.id)))`.execute(db);
  await db.schema.createIndex('api_keys_active_hash').on('api_keys').column('hash').unique().where(sql.ref('revoked_at'), 'is', null).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('api_keys_active_hash').execute();
  await db.schema.alterTable('api_keys').dropColumn('role').execute();
}
