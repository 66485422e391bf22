import type { Kysely } from 'kysely';
import type { ClonedVoiceTable, Database } from './schema.js';

export type ClonedVoiceRow = ClonedVoiceTable;

/** Cloned voices are private to their account: every query is scoped by account id. */
export class ClonedVoiceRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: ClonedVoiceRow): Promise<void> {
    await this.db.insertInto('cloned_voices').values(row).execute();
  }

  async listForAccount(accountId: string): Promise<ClonedVoiceRow[]> {
    return this.db
      .selectFrom('cloned_voices')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('created_at')
      .execute();
  }

  async findForAccount(accountId: string, id: string): Promise<ClonedVoiceRow | undefined> {
    return this.db
      .selectFrom('cloned_voices')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  /** True when the account owned the voice and it is now gone. */
  async deleteForAccount(accountId: string, id: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('cloned_voices')
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
