import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * The WebSockets open on every node, one row each, so an account's socket limit holds across the
 * cluster. Columns are documented in schema.ts.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  // UNLOGGED on PostgreSQL, as rate_limit_buckets: opening a socket commits without a disk flush,
  // and after a database crash the table is empty (every slot free), which is fine for a limit.
  await db.schema
    .createTable('socket_slots')
    .$call((t) => (postgres ? t.modifyFront(sql`unlogged`) : t))
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('node', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('opened_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('socket_slots_account').on('socket_slots').column('account_id').execute();
  await db.schema.createIndex('socket_slots_node').on('socket_slots').column('node').execute();
  await db.schema.createIndex('socket_slots_expires').on('socket_slots').column('expires_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('socket_slots').execute();
}
