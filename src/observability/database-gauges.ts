/**
 * The scrape's database reads: whether the database answers (every node says so for itself), and
 * the jobs by state, which only the node holding the metrics lease reports, so that a sum over
 * the nodes of a cluster counts every job once. The holder renews the lease at each scrape; when
 * it stops being scraped (or dies) the lease lapses and the next node scraped takes it.
 */
import type { Kysely } from 'kysely';
import type { BackendProfile } from '../store/backend.js';
import { JobRepository } from '../jobs/job-repository.js';
import { JOB_STATES } from '../jobs/job-states.js';
import { LeaseRepository } from '../store/lease-repository.js';
import type { Database } from '../store/schema.js';
import type { DatabaseGauges } from './metrics.js';

const LEASE = 'metrics';
/** Longer than any sane scrape interval, so the holder keeps it between scrapes. */
const LEASE_TTL_MS = 120_000;
/** A scrape does not wait longer than this for the database; past it the database counts as down. */
const READ_TIMEOUT_MS = 2_000;

export function databaseGauges(store: { db: Kysely<Database>; backend: BackendProfile }, nodeId: string): DatabaseGauges {
  const leases = new LeaseRepository(store.db, store.backend);
  const jobs = new JobRepository(store.db, store.backend);
  return {
    async read() {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('database read timed out')), READ_TIMEOUT_MS);
      });
      try {
        const holder = await Promise.race([leases.acquire(LEASE, nodeId, LEASE_TTL_MS), timeout]);
        if (!holder) return { up: true };
        // Every state, zeros included: a state with no jobs reads 0 on the holder, and nothing elsewhere.
        const counts = await Promise.race([jobs.countByState(), timeout]);
        return { up: true, jobs: Object.fromEntries(Object.values(JOB_STATES).map((state) => [state, counts[state] ?? 0])) };
      } catch {
        return { up: false };
      } finally {
        clearTimeout(timer);
      }
    },
    release: () => leases.release(LEASE, nodeId),
  };
}
