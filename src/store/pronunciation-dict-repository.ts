import type { Kysely } from 'kysely';
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
}

/** Dictionaries are private to their account: every query is scoped by account id. */
export class PronunciationDictRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async create(accountId: string, items: PronunciationItem[]): Promise<PronunciationDict> {
    const now = nowIso();
    const row = { id: newId('dict', 12), account_id: accountId, items: JSON.stringify(items), created_at: now, updated_at: now };
    await this.db.insertInto('pronunciation_dicts').values(row).execute();
    return toDict(row);
  }

  async list(accountId: string): Promise<PronunciationDict[]> {
    const rows = await this.db
      .selectFrom('pronunciation_dicts')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('created_at')
      .execute();
    return rows.map(toDict);
  }

  /** The account's dictionaries with these ids, in the order asked; missing ids are listed. */
  async findMany(accountId: string, ids: string[]): Promise<{ found: PronunciationDict[]; missing: string[] }> {
    if (ids.length === 0) return { found: [], missing: [] };
    const rows = await this.db
      .selectFrom('pronunciation_dicts')
      .selectAll()
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
    const row = await this.db.selectFrom('pronunciation_dicts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
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

function toDict(row: { id: string; items: string; created_at: string; updated_at: string }): PronunciationDict {
  return { id: row.id, items: JSON.parse(row.items) as PronunciationItem[], createdAt: row.created_at, updatedAt: row.updated_at };
}
