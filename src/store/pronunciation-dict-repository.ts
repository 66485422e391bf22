import { sql, type Kysely } from 'kysely';
import { newId, nowIso } from './ids.js';
import type { Database } from './schema.js';

export interface PronunciationItem {
  word: string;
  pronunciation: string;
}

export interface PronunciationDict {
  id: string;
  items: PronunciationItem[];
  createdAt: string;
  updatedAt: string;
  /** Changes whenever the items change: what a cache of compiled dictionaries is keyed by. */
  version: string;
}

/** Thrown by create when the account already holds the most dictionaries allowed. */
export class DictionaryLimitError extends Error {
  constructor(readonly limit: number) {
    super(`an account may hold at most ${limit} pronunciation dictionaries`);
  }
}

/**
 * The version of a row: its update time and the length of its items. The length tells apart two
 * writes that land in the same millisecond with different items (on two nodes, say).
 */
const version = sql<string>`updated_at || '/' || cast(length(items) as text)`;

/** Dictionaries are private to their account: every query is scoped by account id. */
export class PronunciationDictRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Create a dictionary unless the account already has `maxPerAccount` (0 = no limit). The count
   * and the insert run in one transaction that first writes the account row, so concurrent
   * creations for one account take turns (PostgreSQL row lock; SQLite has one writer anyway).
   */
  async create(accountId: string, items: PronunciationItem[], options: { maxPerAccount?: number } = {}): Promise<PronunciationDict> {
    const now = nowIso();
    const row = { id: newId('dict', 12), account_id: accountId, items: JSON.stringify(items), created_at: now, updated_at: now };
    const max = options.maxPerAccount ?? 0;
    await this.db.transaction().execute(async (trx) => {
      if (max > 0) {
        await trx.updateTable('accounts').set({ name: sql`name` }).where('id', '=', accountId).execute();
        const { n } = await trx
          .selectFrom('pronunciation_dicts')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('account_id', '=', accountId)
          .executeTakeFirstOrThrow();
        if (Number(n) >= max) throw new DictionaryLimitError(max);
      }
      await trx.insertInto('pronunciation_dicts').values(row).execute();
    });
    const { version: v } = await this.db.selectFrom('pronunciation_dicts').select(version.as('version')).where('id', '=', row.id).executeTakeFirstOrThrow();
    return toDict({ ...row, version: v });
  }

  async list(accountId: string): Promise<PronunciationDict[]> {
    const rows = await this.db
      .selectFrom('pronunciation_dicts')
      .selectAll()
      .select(version.as('version'))
      .where('account_id', '=', accountId)
      .orderBy('created_at')
      .execute();
    return rows.map(toDict);
  }

  /** The current version of each of the account's dictionaries among `ids` (absent ids are not in the map). */
  async versions(accountId: string, ids: string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('pronunciation_dicts')
      .select(['id', version.as('version')])
      .where('account_id', '=', accountId)
      .where('id', 'in', ids)
      .execute();
    return new Map(rows.map((r) => [r.id, r.version]));
  }

  /** The account's dictionaries with these ids, in the order asked; missing ids are listed. */
  async findMany(accountId: string, ids: string[]): Promise<{ found: PronunciationDict[]; missing: string[] }> {
    if (ids.length === 0) return { found: [], missing: [] };
    const rows = await this.db
      .selectFrom('pronunciation_dicts')
      .selectAll()
      .select(version.as('version'))
      .where('account_id', '=', accountId)
      .where('id', 'in', ids)
      .execute();
    const byId = new Map(rows.map((r) => [r.id, toDict(r)]));
    return {
      found: ids.flatMap((id) => (byId.has(id) ? [byId.get(id)!] : [])),
      missing: ids.filter((id) => !byId.has(id)),
    };
  }

  async update(accountId: string, id: string, items: PronunciationItem[]): Promise<PronunciationDict | undefined> {
    const r = await this.db
      .updateTable('pronunciation_dicts')
      .set({ items: JSON.stringify(items), updated_at: nowIso() })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) return undefined;
    const row = await this.db.selectFrom('pronunciation_dicts').selectAll().select(version.as('version')).where('id', '=', id).executeTakeFirstOrThrow();
    return toDict(row);
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('pronunciation_dicts')
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}

function toDict(row: { id: string; items: string; created_at: string; updated_at: string; version: string }): PronunciationDict {
  return {
    id: row.id,
    items: JSON.parse(row.items) as PronunciationItem[],
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    version: row.version,
  };
}
