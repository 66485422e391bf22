/**
 * Retention: finished jobs (succeeded or failed), their results and delivery attempts are deleted
 * `days` after they finished, in batches of `batchSize`, by whichever node holds the `retention`
 * lease. The same node drops rate-limit buckets nobody has used for a day (they are full by then).
 * Job audio is gone long before: it is deleted when transcription ends, and with its job in any case.
 */
import type { Config } from '../config.js';
import { DatabaseUnavailableError } from '../store/availability.js';
import type { JobRepository } from './job-repository.js';
import type { LeaseRepository } from '../store/lease-repository.js';
import type { RateLimitRepository } from '../store/rate-limit-repository.js';
import type { JobEvents } from './job-events.js';

export const RETENTION_LEASE = 'retention';
const DAY_MS = 86_400_000;

export interface RetentionDeps {
  jobs: JobRepository;
  leases: LeaseRepository;
  /** PostgreSQL only: the shared rate-limit buckets. */
  buckets?: RateLimitRepository;
  /** This node's id, the lease holder. */
  holder: string;
  settings: Config['retention'];
  events: JobEvents;
}

export class RetentionSweeper {
  private timer: NodeJS.Timeout | null = null;
  private sweeping: Promise<unknown> = Promise.resolve();
  private stopped = false;

  constructor(private readonly deps: RetentionDeps) {}

  private get enabled(): boolean {
    return this.deps.settings.days > 0 || this.deps.buckets !== undefined;
  }

  start(): void {
    if (!this.enabled) return;
    const tick = () => {
      this.sweeping = this.sweep()
        // An outage is logged once by the store; the next tick tries again.
        .catch((error) => error instanceof DatabaseUnavailableError || this.deps.events.emit('job:error', { error }))
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, this.deps.settings.intervalMs).unref();
        });
    };
    tick();
  }

  /** One pass, if this node holds (or can take) the lease; returns how many jobs were deleted. */
  async sweep(): Promise<number> {
    const { jobs, leases, buckets, holder, settings, events } = this.deps;
    const hold = () => leases.acquire(RETENTION_LEASE, holder, 3 * settings.intervalMs);
    if (!(await hold())) return 0;
    let deleted = 0;
    if (settings.days > 0) {
      const cutoff = jobs.clock.offset(-settings.days * DAY_MS);
      // Batch after batch while full ones come back, checking the lease is still ours before each.
      for (let n = settings.batchSize; n === settings.batchSize && !this.stopped; ) {
        n = await jobs.deleteFinishedBefore(cutoff, settings.batchSize);
        deleted += n;
        if (n === settings.batchSize && !(await hold())) break;
      }
      if (deleted > 0) events.emit('jobs:deleted', { count: deleted, olderThanDays: settings.days });
    }
    await buckets?.deleteIdle(DAY_MS);
    return deleted;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.sweeping;
    if (this.enabled) await this.deps.leases.release(RETENTION_LEASE, this.deps.holder).catch(() => undefined);
  }
}
