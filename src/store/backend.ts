/**
 * What each database backend can and cannot do, in one place (pg-boss BACKEND_PROFILES style),
 * so no code scatters `if (dialect === ...)` checks.
 */
export type BackendName = 'sqlite' | 'postgres';

export interface BackendProfile {
  name: BackendName;
  /** `SELECT … FOR UPDATE SKIP LOCKED`: several processes claim jobs without blocking each other. */
  skipLocked: boolean;
  /** Only one process may use the database (a file with one writer). */
  singleProcess: boolean;
  /** `pg_advisory_xact_lock`: a transaction may lock a key of its choosing (not a row) until it ends. */
  advisoryLocks: boolean;
}

export const backendProfiles: Record<BackendName, BackendProfile> = Object.freeze({
  sqlite: { name: 'sqlite', skipLocked: false, singleProcess: true, advisoryLocks: false },
  postgres: { name: 'postgres', skipLocked: true, singleProcess: false, advisoryLocks: true },
});
