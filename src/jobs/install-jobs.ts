/**
 * Wire the job queue into a server: repository, webhook sender, runner and retention; register the
 * runner and the sweeper as background work (started only by a serving node, never by a CLI
 * command), a readiness check and the jobs route. Called like a CapabilityInstaller; returns the
 * service so the transcription route can submit jobs.
 */
import path from 'node:path';
import pino from 'pino';
import { jobRoutes } from '../http/routes/jobs.js';
import { createAddressPolicy } from '../net/address-policy.js';
import type { Services } from '../server.js';
import { JobRepository } from '../store/job-repository.js';
import { LeaseRepository } from '../store/lease-repository.js';
import { RateLimitRepository } from '../store/rate-limit-repository.js';
import type { Transcribe } from '../transcription/types.js';
import { version } from '../version.js';
import { JobEvents, logJobEvents, type JobLogger } from './job-events.js';
import { JobRunner } from './job-runner.js';
import { JobService } from './job-service.js';
import { RetentionSweeper } from './retention.js';
import { WebhookSender } from './webhook-sender.js';

export interface InstallJobsDeps {
  transcribe: Transcribe;
  /** Defaults to a pino logger at config.logLevel. */
  log?: JobLogger;
  clock?: () => number;
  random?: () => number;
}

export async function installJobs(services: Services, deps: InstallJobsDeps): Promise<JobService> {
  const { config, store } = services;
  const log = deps.log ?? pino({ name: 'jobs', level: config.logLevel });
  const clock = deps.clock ?? Date.now;
  const policy = createAddressPolicy(config.allowedPrivateHosts);
  const jobs = new JobRepository(store.db, store.backend);
  const events = new JobEvents(log);
  logJobEvents(events, log);

  const sender = new WebhookSender(policy, config.webhooks.timeoutMs, clock);
  services.releasers.add('webhook sender', () => sender.close());
  const runner = new JobRunner({
    jobs,
    accounts: services.accounts,
    sender,
    transcribe: deps.transcribe,
    events,
    backend: store.backend,
    settings: config.webhooks,
    userAgent: `Parley-Webhooks/${version}`,
    nodeId: services.nodeId,
    legacyAudioDir: path.join(config.dataDir, 'jobs'),
    clock,
    ...(deps.random ? { random: deps.random } : {}),
  });
  const retention = new RetentionSweeper({
    jobs,
    leases: new LeaseRepository(store.db, store.backend),
    ...(store.backend.singleProcess ? {} : { buckets: new RateLimitRepository(store.db) }),
    holder: services.nodeId,
    settings: config.retention,
    events,
  });
  const service = new JobService({ jobs, runner, events, policy });

  services.background.push(
    { name: 'job runner', start: () => runner.start(), stop: () => runner.stop() },
    { name: 'retention', start: async () => retention.start(), stop: () => retention.stop() },
  );
  services.readinessChecks.set('jobs', async () => ({
    ok: runner.isRunning,
    detail: { active: runner.activeCount, byState: await jobs.countByState() },
  }));
  services.sttRoutes.push(jobRoutes({ jobs: service }));
  return service;
}
