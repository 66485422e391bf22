/**
 * Token buckets in PostgreSQL, shared by every node: a bucket holds `burst` tokens and
 * refills at `perMinute`/60 per second, by the database clock. Taking a token is one statement, so
 * one round trip per request; concurrent requests of one account queue on the bucket's row lock.
 */
import { sql, type Kysely } from 'kysely';
import { dbClock } from './db-clock.js';
import { backendProfiles } from './backend.js';
import type { Database } from './schema.js';

const clock = dbClock(backendProfiles.postgres);

export class RateLimitRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Take one token from bucket `key`: 0 when taken, else the seconds until one is available. */
  async take(key: string, burst: number, perMinute: number): Promise<number> {
    const cap = sql`${burst}::double precision`;
    const perMs = sql`${perMinute / 60_000}::double precision`;
    // The upsert takes the token only where the refilled bucket holds one; when it returns no row
    // the second branch reads the bucket (as of the statement's snapshot) to say how long to wait.
    // The row lock taken by the upsert orders concurrent requests of one account.
    const refilled = (tokens: string, since: string) =>
      sql`least(${cap}, ${sql.ref(tokens)} + greatest(0, ${clock.epochMs()} - ${sql.ref(since)}) * ${perMs})`;
    const { rows } = await sql<{ wait: number }>`
      with taken as (
        insert into rate_limit_buckets as b (key, tokens, updated_ms)
        values (${key}, ${cap} - 1, ${clock.epochMs()})
        on conflict (key) do update
          set tokens = ${refilled('b.tokens', 'b.updated_ms')} - 1, updated_ms = excluded.updated_ms
          where ${refilled('b.tokens', 'b.updated_ms')} >= 1
        returning 0::double precision as wait
      )
      select wait from taken
      union all
      select greatest(0.001, (1 - ${refilled('tokens', 'updated_ms')}) / ${perMs} / 1000) as wait
      from rate_limit_buckets where key = ${key} and not exists (select 1 from taken)`.execute(this.db);
    // No row at all: refused, by a bucket created after this statement's snapshot was taken (a
    // concurrent first request); a whole token's time is the longest the wait can be.
    return rows[0]?.wait ?? 60 / perMinute;
  }

  /** Drop buckets untouched for `idleMs` (by then they have refilled; a missing bucket is a full one). */
  async deleteIdle(idleMs: number): Promise<number> {
    const r = await this.db.deleteFrom('rate_limit_buckets').where('updated_ms', '<', sql<number>`${clock.epochMs()} - ${idleMs}`).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
