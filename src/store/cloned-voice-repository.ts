import { PostgresAdapter, type Insertable, type Kysely, type Selectable, type Updateable } from 'kysely';
import type { ClonedVoiceTable, Database } from './schema.js';

export type ClonedVoiceRow = Selectable<ClonedVoiceTable>;
export type NewClonedVoice = Insertable<ClonedVoiceTable>;
/** What finishing a creation may write (status, engine, profile...). */
export type ClonedVoiceOutcome = Pick<Updateable<ClonedVoiceTable>, 'status' | 'engine' | 'engine_settings' | 'profile' | 'transcript' | 'error'>;

/** A clone's sample: mono 16-bit little-endian PCM. */
export interface StoredSample {
  sampleRate: number;
  pcm: Uint8Array;
}

/** Cloned voices are private to their account: every query a client can reach is scoped by account id. */
export class ClonedVoiceRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: NewClonedVoice, sample?: StoredSample): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('cloned_voices').values(row).execute();
      if (sample) await trx.insertInto('cloned_voice_samples').values({ voice_id: row.id, sample_rate: sample.sampleRate, pcm: sample.pcm }).execute();
    });
  }

  /**
   * Inserts the clone and its sample unless the account already has `limit` clones; false when it
   * has. The count and the insert are one step for concurrent requests: on PostgreSQL the
   * account's row is locked (FOR UPDATE) for the transaction, so a second creation for the same
   * account waits and then counts the first; SQLite runs one write transaction at a time.
   */
  async insertWithinLimit(row: NewClonedVoice, sample: StoredSample, limit: number): Promise<boolean> {
    const postgres = this.db.getExecutor().adapter instanceof PostgresAdapter;
    return this.db.transaction().execute(async (trx) => {
      if (postgres) await trx.selectFrom('accounts').select('id').where('id', '=', row.account_id).forUpdate().execute();
      const r = await trx
        .selectFrom('cloned_voices')
        .select((eb) => eb.fn.countAll<string | number>().as('n'))
        .where('account_id', '=', row.account_id)
        .executeTakeFirstOrThrow();
      if (Number(r.n) >= limit) return false;
      await trx.insertInto('cloned_voices').values(row).execute();
      await trx.insertInto('cloned_voice_samples').values({ voice_id: row.id, sample_rate: sample.sampleRate, pcm: sample.pcm }).execute();
      return true;
    });
  }

  /**
   * Marks creations still `processing` that began before `before` (ISO time) as failed: the node
   * that ran them stopped before it recorded an outcome. Returns how many.
   */
  async failInterrupted(before: string, error: string): Promise<number> {
    const r = await this.db.updateTable('cloned_voices').set({ status: 'failed', error }).where('status', '=', 'processing').where('created_at', '<', before).executeTakeFirst();
    return Number(r.numUpdatedRows);
  }

  /** Records the outcome of creation (status, engine, profile...). */
  async update(id: string, fields: ClonedVoiceOutcome): Promise<void> {
    await this.db.updateTable('cloned_voices').set(fields).where('id', '=', id).execute();
  }

  async countForAccount(accountId: string): Promise<number> {
    const r = await this.db
      .selectFrom('cloned_voices')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow();
    return Number(r.n);
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

  /** The sample of a clone of `accountId`; undefined for another account's clone. */
  async findSample(accountId: string, id: string): Promise<StoredSample | undefined> {
    const row = await this.db
      .selectFrom('cloned_voice_samples')
      .innerJoin('cloned_voices', 'cloned_voices.id', 'cloned_voice_samples.voice_id')
      .select(['cloned_voice_samples.sample_rate', 'cloned_voice_samples.pcm'])
      .where('cloned_voices.account_id', '=', accountId)
      .where('cloned_voices.id', '=', id)
      .executeTakeFirst();
    return row && { sampleRate: row.sample_rate, pcm: row.pcm };
  }

  /** True when the account owned the voice and it and its sample are now gone. */
  async deleteForAccount(accountId: string, id: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const r = await trx.deleteFrom('cloned_voices').where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
      if (Number(r.numDeletedRows) === 0) return false;
      // The foreign key cascades too; deleting here does not rely on SQLite's foreign_keys pragma.
      await trx.deleteFrom('cloned_voice_samples').where('voice_id', '=', id).execute();
      return true;
    });
  }
}
