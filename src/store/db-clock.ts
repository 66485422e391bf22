/**
 * The database's clock, as SQL. Every "now" that nodes compare with each other (when a job is due,
 * how old a lock is, who holds a lease, how full a rate-limit bucket is, what retention deletes)
 * is read inside the statement that uses it, so nodes whose own clocks disagree still agree.
 * Values are ISO-8601 UTC strings with milliseconds, the format of every time column
 * (schema.ts), so they compare as text with the times stored there.
 */
import { sql, type RawBuilder } from 'kysely';
import type { BackendProfile } from './backend.js';

/** A time a repository method writes or compares: a fixed ISO string (tests) or the database clock. */
export type Instant = string | RawBuilder<string>;

export interface DbClock {
  /** Now, by the database clock. */
  now(): RawBuilder<string>;
  /** Now plus `ms` milliseconds (negative: in the past). */
  offset(ms: number): RawBuilder<string>;
  /** Milliseconds since the epoch, as a number (rate-limit refills). */
  epochMs(): RawBuilder<number>;
}

// statement_timestamp(): one value per statement (now() would be the transaction's start).
const pgIso = (t: RawBuilder<unknown>) => sql<string>`to_char(${t} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const postgresClock: DbClock = {
  now: () => pgIso(sql`statement_timestamp()`),
  offset: (ms) => pgIso(sql`(statement_timestamp() + ${ms}::double precision * interval '1 millisecond')`),
  epochMs: () => sql<number>`(extract(epoch from statement_timestamp()) * 1000)::double precision`,
};

// SQLite means one node, so its clock is that node's; 'now' is fixed within one statement.
const sqliteFormat = '%Y-%m-%dT%H:%M:%fZ';
const sqliteClock: DbClock = {
  now: () => sql<string>`strftime(${sqliteFormat}, 'now')`,
  offset: (ms) => sql<string>`strftime(${sqliteFormat}, 'now', ${`${ms / 1000} seconds`})`,
  epochMs: () => sql<number>`((julianday('now') - 2440587.5) * 86400000.0)`,
};

export function dbClock(backend: BackendProfile): DbClock {
  return backend.name === 'postgres' ? postgresClock : sqliteClock;
}
