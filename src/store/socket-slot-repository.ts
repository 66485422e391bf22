/**
 * The slots of an account's open WebSockets, shared by every node on one database: a row per open
 * socket, renewed by the node serving it. Taking a slot counts and inserts under a lock on the
 * account, so concurrent opens on several nodes never pass the limit together.
 */
import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { BackendProfile } from './backend.js';
import { dbClock, type DbClock } from './db-clock.js';
import type { Database } from './schema.js';

/** The first key of PostgreSQL's two-key advisory locks, so these locks meet no other lock of the database. */
const SOCKET_SLOT_LOCK_CLASS = 0x50534c54; // "PSLT"

export interface SocketSlot {
  /** Unique per socket. */
  id: string;
  accountId: string;
  kind: string;
}

/** An account id as the second key of an advisory lock (32 bits: two accounts may share a lock, and then wait for each other a moment). */
function accountLockKey(accountId: string): number {
  return createHash('sha256').update(accountId).digest().readInt32BE(0);
}

export class SocketSlotRepository {
  private readonly clock: DbClock;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly backend: BackendProfile,
  ) {
    this.clock = dbClock(backend);
  }

  /**
   * Take one of the account's `max` slots for `slot`, held by `node` for `ttlMs` unless renewed.
   * True when taken. Expired slots of the account (their node stopped renewing them) are freed first.
   */
  async take(slot: SocketSlot, node: string, max: number, ttlMs: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      // SQLite has one writer at a time, so its transactions never interleave; PostgreSQL's do, and
      // the count below is only true while no other transaction inserts for this account.
      if (this.backend.advisoryLocks) {
        await sql`select pg_advisory_xact_lock(${SOCKET_SLOT_LOCK_CLASS}::integer, ${accountLockKey(slot.accountId)}::integer)`.execute(trx);
      }
      await trx.deleteFrom('socket_slots').where('account_id', '=', slot.accountId).where('expires_at', '<', this.clock.now()).execute();
      const row = await trx
        .selectFrom('socket_slots')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('account_id', '=', slot.accountId)
        .executeTakeFirstOrThrow();
      if (Number(row.n) >= max) return false;
      await trx
        .insertInto('socket_slots')
        .values({ id: slot.id, account_id: slot.accountId, node, kind: slot.kind, opened_at: this.clock.now(), expires_at: this.clock.offset(ttlMs) })
        .execute();
      return true;
    });
  }

  async release(id: string): Promise<void> {
    await this.db.deleteFrom('socket_slots').where('id', '=', id).execute();
  }

  /** Every slot of `node` is held `ttlMs` longer; expired slots of any node are dropped. Returns the slots renewed. */
  async renew(node: string, ttlMs: number): Promise<number> {
    const renewed = await this.db.updateTable('socket_slots').set({ expires_at: this.clock.offset(ttlMs) }).where('node', '=', node).executeTakeFirst();
    await this.db.deleteFrom('socket_slots').where('expires_at', '<', this.clock.now()).execute();
    return Number(renewed.numUpdatedRows);
  }

  /** Free every slot of `node` (it is shutting down). */
  async releaseNode(node: string): Promise<void> {
    await this.db.deleteFrom('socket_slots').where('node', '=', node).execute();
  }
}
