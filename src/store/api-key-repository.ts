import type { Kysely } from 'kysely';
import { nowIso } from './ids.js';
import type { ApiKeyTable, Database } from './schema.js';

export type ApiKeyRow = ApiKeyTable;

export class ApiKeyRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: ApiKeyRow): Promise<void> {
    await this.db.insertInto('api_keys').values(row).execute();
  }

  /** Active keys whose prefix matches (normally one). */
  async findActiveByPrefix(prefix: string): Promise<ApiKeyRow[]> {
    return this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('prefix', '=', prefix)
      .where('revoked_at', 'is', null)
      .execute();
  }

  async find(id: string): Promise<ApiKeyRow | undefined> {
    return this.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Which of `ids` are keys still active (not revoked, not gone). */
  async activeAmong(ids: readonly string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.selectFrom('api_keys').select('id').where('id', 'in', [...ids]).where('revoked_at', 'is', null).execute();
    return rows.map((r) => r.id);
  }

  async list(): Promise<ApiKeyRow[]> {
    return this.db.selectFrom('api_keys').selectAll().orderBy('created_at').execute();
  }

  async countActive(): Promise<number> {
    const r = await this.db
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('revoked_at', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  async setRole(id: string, role: string): Promise<boolean> {
    const r = await this.db.updateTable('api_keys').set({ role }).where('id', '=', id).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** True when a key was active and is now revoked. */
  async revoke(id: string): Promise<boolean> {
    const r = await this.db
      .updateTable('api_keys')
      .set({ revoked_at: nowIso() })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }
}
