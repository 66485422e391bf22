/**
 * Wire the job queue into a server: repository, audio store, webhook sender and runner; start the
 * runner; register its release, a readiness check and the jobs route. Called like a
 * CapabilityInstaller; returns the service so the transcription route can submit jobs.
 */
import path from 'node:path';
import pino from 'pino';
import { jobRoutes } from '../http/routes/jobs.js';
import { createAddressPolicy } from '../net/address-policy.js';
import type { Services } from '../server.js';
import { JobRepository } from '../store/job-repository.js';
import type { Transcribe } from '../transcription/types.js';
import { version } from '../version.js';
import { JobAudioStore } from './job-audio-store.js';
import { JobEvents, logJobEvents, type JobLogger } from './job-events.js';
import { JobRunner } from './job-runner.js';
import { JobService } from './job-service.js';
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
  const audio = new JobAudioStore(path.join(config.dataDir, 'jobs'));
  await audio.open();
  const events = new JobEvents(log);
  logJobEvents(events, log);

  const sender = new WebhookSender(policy, config.webhooks.timeoutMs, clock);
  services.releasers.add('webhook sender', () => sender.close());
  const runner = new JobRunner({
    jobs,
    audio,
    accounts: services.accounts,
    sender,
    transcribe: deps.transcribe,
    events,
    backend: store.backend,
    settings: config.webhooks,
    userAgent: `Parley-Webhooks/${version}`,
    clock,
    ...(deps.random ? { random: deps.random } : {}),
  });
  const service = new JobService({ jobs, audio, runner, events, policy, clock });

  await runner.start();
  // Released before the sender and the database (releasers run in reverse order).
  services.releasers.add('job runner', () => runner.stop());
  services.readinessChecks.set('jobs', async () => ({
    ok: runner.isRunning,
    detail: { active: runner.activeCount, byState: await jobs.countByState() },
  }));
  services.sttRoutes.push(jobRoutes({ jobs: service }));
  return service;
}
