/**
 * Leases: a cluster-wide task (retention) runs on whichever node holds its lease. A lease is held
 * until `expires_at` by the database clock; the holder renews it, and when the holder dies it
 * lapses and another node takes it.
 */
import type { Kysely } from 'kysely';
import type { BackendProfile } from './backend.js';
import { dbClock, type DbClock } from './db-clock.js';
import type { Database } from './schema.js';

export class LeaseRepository {
  private readonly clock: DbClock;

  constructor(
    private readonly db: Kysely<Database>,
    backend: BackendProfile,
  ) {
    this.clock = dbClock(backend);
  }

  /** Take or renew lease `name` for `ttlMs`; true when `holder` holds it afterwards. One statement. */
  async acquire(name: string, holder: string, ttlMs: number): Promise<boolean> {
    const row = await this.db
      .insertInto('leases')
      .values({ name, holder, expires_at: this.clock.offset(ttlMs) })
      .onConflict((oc) =>
        oc
          .column('name')
          .doUpdateSet((eb) => ({ holder: eb.ref('excluded.holder'), expires_at: eb.ref('excluded.expires_at') }))
          .where((eb) => eb.or([eb('leases.holder', '=', holder), eb('leases.expires_at', '<', this.clock.now())])),
      )
      .returning('holder')
      .executeTakeFirst();
    return row?.holder === holder;
  }

  /** Give the lease up now (a node shutting down), if `holder` has it. */
  async release(name: string, holder: string): Promise<void> {
    await this.db.deleteFrom('leases').where('name', '=', name).where('holder', '=', holder).execute();
  }
}
