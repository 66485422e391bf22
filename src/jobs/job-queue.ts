/**
 * The job queue: repository, webhook sender, runner and retention sweeper, and the service the
 * transcription route submits to. The runner and the sweeper are background work, started only
 * by a serving node, never by a CLI command.
 */
import path from 'node:path';
import pino from 'pino';
import type { Config } from '../config.js';
import { Releasers, type BackgroundTask, type ReadinessResult } from '../lifecycle.js';
import { createAddressPolicy } from '../net/address-policy.js';
import type { AccountRepository } from '../store/account-repository.js';
import type { Store } from '../store/database.js';
import { JobRepository } from './job-repository.js';
import { LeaseRepository } from '../store/lease-repository.js';
import { RateLimitRepository } from '../store/rate-limit-repository.js';
import type { Transcribe } from '../transcription/types.js';
import { version } from '../version.js';
import { JobEvents, logJobEvents, type JobLogger } from './job-events.js';
import { JobRunner } from './job-runner.js';
import { JobService } from './job-service.js';
import { RetentionSweeper } from './retention.js';
import { WebhookSender } from './webhook-sender.js';

export interface JobQueueDeps {
  store: Store;
  accounts: AccountRepository;
  /** This node's id among those sharing the database. */
  nodeId: string;
  transcribe: Transcribe;
  /** Defaults to a pino logger at config.logLevel. */
  log?: JobLogger;
  clock?: () => number;
  random?: () => number;
}

export interface JobQueue {
  service: JobService;
  background: BackgroundTask[];
  readiness(): Promise<ReadinessResult>;
  close(): Promise<void>;
  /** The runner's lifecycle events (metrics count webhook attempts from them). */
  events: JobEvents;
}

export function buildJobQueue(config: Config, deps: JobQueueDeps): JobQueue {
  const { store } = deps;
  const log = deps.log ?? pino({ name: 'jobs', level: config.logLevel });
  const clock = deps.clock ?? Date.now;
  const policy = createAddressPolicy(config.allowedPrivateHosts);
  const jobs = new JobRepository(store.db, store.backend);
  const events = new JobEvents(log);
  logJobEvents(events, log);
  const releasers = new Releasers();

  const sender = new WebhookSender(policy, config.webhooks.timeoutMs, clock);
  releasers.add('webhook sender', () => sender.close());
  const runner = new JobRunner({
    jobs,
    accounts: deps.accounts,
    sender,
    transcribe: deps.transcribe,
    events,
    backend: store.backend,
    health: store.health,
    settings: config.webhooks,
    probeMaxIntervalMs: config.database.probeMaxIntervalMs,
    userAgent: `Parley-Webhooks/${version}`,
    nodeId: deps.nodeId,
    legacyAudioDir: path.join(config.dataDir, 'jobs'),
    clock,
    ...(deps.random ? { random: deps.random } : {}),
  });
  const retention = new RetentionSweeper({
    jobs,
    leases: new LeaseRepository(store.db, store.backend),
    ...(store.backend.singleProcess ? {} : { buckets: new RateLimitRepository(store.db) }),
    holder: deps.nodeId,
    settings: config.retention,
    events,
  });
  return {
    service: new JobService({ jobs, runner, events, policy }),
    background: [
      { name: 'job runner', start: () => runner.start(), stop: () => runner.stop() },
      { name: 'retention', start: async () => retention.start(), stop: () => retention.stop() },
    ],
    // Job counts need the database; while it is away the database check says why, and this one what is held.
    readiness: async () => ({
      ok: runner.isRunning,
      detail: {
        active: runner.activeCount,
        held: runner.heldCount,
        ...(store.health.available ? { byState: await jobs.countByState().catch(() => undefined) } : {}),
      },
    }),
    close: () => releasers.releaseAll(),
    events,
  };
}
