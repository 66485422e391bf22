/**
 * The runner: claims due jobs up to the concurrency limit and moves each one step on —
 * transcribe a running job, or make one delivery attempt for a delivering job. All state lives in
 * the database, so a process killed at any point loses nothing: its locks are released at the next
 * start (SQLite: at once, one process per file) or when they go stale (PostgreSQL, shared by
 * several processes), and the work is done again. Deliveries are therefore at least once.
 */
import { randomBytes } from 'node:crypto';
import type { Config } from '../config.js';
import { InferenceUnavailableError, OverloadedError, ParleyError } from '../errors.js';
import type { AccountRepository } from '../store/account-repository.js';
import type { BackendProfile } from '../store/backend.js';
import type { AttemptRecord, JobRepository, JobRow } from '../store/job-repository.js';
import type { Transcribe, TranscriptionOptions, TranscriptionResult } from '../transcription/types.js';
import { calculateDelay } from './backoff.js';
import type { JobAudioStore } from './job-audio-store.js';
import type { JobEvents } from './job-events.js';
import { JOB_OUTCOMES, JOB_STATES, type JobOutcome } from './job-states.js';
import { buildWebhookPayload } from './webhook-payload.js';
import type { WebhookSender } from './webhook-sender.js';
import { signWebhook } from './webhook-signature.js';

export interface JobRunnerDeps {
  jobs: JobRepository;
  audio: JobAudioStore;
  accounts: AccountRepository;
  sender: WebhookSender;
  transcribe: Transcribe;
  events: JobEvents;
  backend: BackendProfile;
  settings: Config['webhooks'];
  userAgent: string;
  /** Milliseconds since the epoch; injected so tests can move time. */
  clock?: () => number;
  /** [0, 1): the jitter source of the backoff. */
  random?: () => number;
}

/** Far enough in the future that every lock is older: "every lock not ours is stale". */
const END_OF_TIME = '9999-12-31T23:59:59.999Z';

/** How long stop() waits for work in flight before it lets go (locks are recovered at next start). */
const STOP_GRACE_MS = 5_000;

export class JobRunner {
  /** `<pid>-<random>`: unique per process start, readable in the table when debugging. */
  readonly lockedBy = `${process.pid}-${randomBytes(4).toString('hex')}`;
  private readonly active = new Map<string, Promise<void>>();
  private readonly stopController = new AbortController();
  private loopDone: Promise<void> = Promise.resolve();
  private wakeUp: (() => void) | null = null;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private lastRecovery = 0;
  private running = false;
  private readonly clock: () => number;
  private readonly random: () => number;

  constructor(private readonly deps: JobRunnerDeps) {
    this.clock = deps.clock ?? Date.now;
    this.random = deps.random ?? Math.random;
  }

  get isRunning(): boolean {
    return this.running;
  }

  get activeCount(): number {
    return this.active.size;
  }

  async start(): Promise<void> {
    // SQLite allows one process per file, so every lock found at start belongs to a dead process.
    await this.recoverStale(this.deps.backend.singleProcess ? END_OF_TIME : undefined);
    await this.sweepAudio();
    this.running = true;
    const beat = Math.max(50, Math.floor(this.deps.settings.staleLockMs / 3));
    this.heartbeatTimer = setInterval(() => void this.heartbeat(), beat);
    this.heartbeatTimer.unref();
    this.loopDone = this.loop();
  }

  /** Stop claiming, abort work in flight (it is released, not failed) and wait for it briefly. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.stopController.abort();
    this.wake();
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((r) => (timer = setTimeout(r, STOP_GRACE_MS)));
    await Promise.race([Promise.allSettled([this.loopDone, ...this.active.values()]), grace]);
    clearTimeout(timer);
  }

  /** Look for work now (a job was submitted or a slot freed up). */
  wake(): void {
    this.wakeUp?.();
  }

  private now(): string {
    return new Date(this.clock()).toISOString();
  }

  private async loop(): Promise<void> {
    const { settings, jobs } = this.deps;
    while (this.running) {
      try {
        if (this.clock() - this.lastRecovery >= settings.staleLockMs / 2) await this.recoverStale();
        const free = settings.concurrency - this.active.size;
        const claimed = free > 0 ? await jobs.claim({ lockedBy: this.lockedBy, limit: free, now: this.now() }) : [];
        for (const job of claimed) this.track(job);
        if (claimed.length > 0 && claimed.length === free) continue;
        // Sleep until the next retry is due, a poll interval passes, or someone wakes us.
        const next = free > claimed.length ? await jobs.nextRunAt() : null;
        const untilNext = next ? Date.parse(next) - this.clock() : Infinity;
        await this.sleep(Math.max(5, Math.min(settings.pollMs, untilNext)));
      } catch (error) {
        if (!this.running) break;
        this.deps.events.emit('job:error', { error });
        await this.sleep(settings.pollMs);
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = () => {
        this.wakeUp = null;
        done();
      };
    });
  }

  private track(job: JobRow): void {
    const work = (job.state === JOB_STATES.running ? this.runTranscription(job) : this.runDelivery(job))
      .catch((error) => this.deps.events.emit('job:error', { jobId: job.id, error }))
      .finally(() => {
        this.active.delete(job.id);
        this.wake();
      });
    this.active.set(job.id, work);
  }

  private async recoverStale(staleBefore?: string): Promise<void> {
    this.lastRecovery = this.clock();
    const count = await this.deps.jobs.recoverStale({
      staleBefore: staleBefore ?? new Date(this.clock() - this.deps.settings.staleLockMs).toISOString(),
      exceptLockedBy: this.lockedBy,
      now: this.now(),
    });
    if (count > 0) this.deps.events.emit('job:recovered', { count });
  }

  private async heartbeat(): Promise<void> {
    try {
      await this.deps.jobs.heartbeat(this.lockedBy, [...this.active.keys()], this.now());
    } catch (error) {
      this.deps.events.emit('job:error', { error });
    }
  }

  /** Remove audio files no job points to: left by a crash between storing an outcome and deleting. */
  private async sweepAudio(): Promise<void> {
    const referenced = await this.deps.jobs.referencedAudio();
    const files = await this.deps.audio.list();
    // With one process per database nothing else can be submitting now; with several sharing it,
    // a file younger than a minute may be a submit in progress whose row is not written yet.
    const minAgeMs = this.deps.backend.singleProcess ? 0 : 60_000;
    for (const f of files) if (!referenced.has(f)) await this.deps.audio.removeIfOlderThan(f, minAgeMs, this.clock());
  }

  private async runTranscription(job: JobRow): Promise<void> {
    const { jobs, audio, events } = this.deps;
    const ref = { jobId: job.id, requestId: job.request_id };
    events.emit('job:start', ref);
    let outcome: { outcome: JobOutcome; result: string | null; error: string | null };
    const maxCrashes = this.deps.settings.maxInferenceCrashes;
    // runs counts this one: more than the limit means the earlier ones all died (this node or another).
    if (job.runs > maxCrashes) {
      const reason = `Transcription failed: ${job.runs - 1} runs of this job ended with the server or its inference process dying`;
      await this.finishTranscription(job, { outcome: JOB_OUTCOMES.failed, result: null, error: reason });
      return;
    }
    try {
      if (!job.audio_path) throw new Error('the job has no stored audio');
      const bytes = await audio.read(job.audio_path);
      const options = JSON.parse(job.options) as TranscriptionOptions;
      const result = await this.deps.transcribe({ bytes, contentType: job.content_type }, options, {
        requestId: job.request_id,
        signal: this.stopController.signal,
      });
      outcome = { outcome: JOB_OUTCOMES.success, result: JSON.stringify(result), error: null };
    } catch (err) {
      if (this.stopController.signal.aborted) {
        await jobs.release(job.id, this.lockedBy, this.now(), this.now());
        events.emit('job:requeued', { ...ref, reason: 'shutting down' });
        return;
      }
      if (err instanceof InferenceUnavailableError) {
        // The process working on it died or had to be killed: maybe this input's fault, maybe a
        // neighbour's. Taken up again, up to the limit; a poison input then fails for good.
        if (job.runs < maxCrashes) {
          const runAt = new Date(this.clock() + 1000 * (err.retryAfterSeconds ?? 1)).toISOString();
          await jobs.release(job.id, this.lockedBy, runAt, this.now(), { crashed: true });
          events.emit('job:requeued', { ...ref, reason: `inference process died (run ${job.runs} of ${maxCrashes})` });
          return;
        }
        outcome = {
          outcome: JOB_OUTCOMES.failed,
          result: null,
          error: `Transcription failed: its inference process died in ${job.runs} runs of this job (last: ${err.message})`,
        };
        await this.finishTranscription(job, outcome);
        return;
      }
      if (err instanceof OverloadedError) {
        const runAt = new Date(this.clock() + 1000 * (err.retryAfterSeconds ?? 1)).toISOString();
        await jobs.release(job.id, this.lockedBy, runAt, this.now());
        events.emit('job:requeued', { ...ref, reason: 'transcription workers busy' });
        return;
      }
      // Client-fixable errors (undecodable audio, unsupported language) are told as they are;
      // anything else is our fault and stays in the logs, not in the payload.
      const clientError = err instanceof ParleyError && err.status < 500;
      if (!clientError) events.emit('job:error', { jobId: job.id, error: err });
      outcome = { outcome: JOB_OUTCOMES.failed, result: null, error: clientError ? err.message : 'Internal server error' };
    }
    await this.finishTranscription(job, outcome);
  }

  private async finishTranscription(job: JobRow, outcome: { outcome: JobOutcome; result: string | null; error: string | null }): Promise<void> {
    const { jobs, audio, events } = this.deps;
    if (!(await jobs.completeTranscription(job.id, this.lockedBy, outcome, this.now()))) return;
    if (job.audio_path) await audio.remove(job.audio_path);
    events.emit('job:transcribed', { jobId: job.id, requestId: job.request_id, outcome: outcome.outcome, ...(outcome.error ? { error: outcome.error } : {}) });
  }

  private async runDelivery(job: JobRow): Promise<void> {
    const { jobs, events, settings } = this.deps;
    const ref = { jobId: job.id, requestId: job.request_id };
    const attempt = job.attempts + 1;
    const account = await this.deps.accounts.find(job.account_id);
    const body = JSON.stringify(
      buildWebhookPayload({
        requestId: job.request_id,
        outcome: job.outcome as JobOutcome,
        result: job.result ? (JSON.parse(job.result) as TranscriptionResult) : null,
        error: job.error,
        extra: JSON.parse(job.webhook_extra) as Record<string, string>,
      }),
    );
    const attemptedAt = this.now();
    const headers = {
      'content-type': 'application/json',
      'user-agent': this.deps.userAgent,
      'x-request-id': job.request_id,
      'x-webhook-attempt': String(attempt),
      'x-webhook-signature': signWebhook(account?.webhook_secret ?? '', body, this.clock() / 1000),
    };
    const sent = await this.deps.sender.send(job.webhook_url, body, headers, this.stopController.signal);
    if (sent.verdict === 'aborted') {
      // Possibly received, not recorded: the next start sends it again (at least once).
      await jobs.release(job.id, this.lockedBy, this.now(), this.now());
      return;
    }
    const record: AttemptRecord = { attempt, attemptedAt, statusCode: sent.statusCode, error: sent.error, durationMs: sent.durationMs };
    events.emit('job:attempt', { ...ref, attempt, statusCode: sent.statusCode, error: sent.error, durationMs: sent.durationMs });

    if (sent.verdict === 'acknowledged') {
      const state = job.outcome === JOB_OUTCOMES.success ? JOB_STATES.succeeded : JOB_STATES.failed;
      if (await jobs.acknowledge(job.id, this.lockedBy, record, state)) events.emit('job:delivered', { ...ref, attempt, state });
      return;
    }
    // "10 retries after the first attempt": attempt numbers 1..retries+1.
    if (sent.verdict === 'retry' && attempt <= settings.retries) {
      const delayMs = calculateDelay(attempt, settings.backoffBaseMs, settings.backoffCapMs, this.random);
      const runAt = new Date(this.clock() + delayMs).toISOString();
      if (await jobs.reschedule(job.id, this.lockedBy, record, runAt)) events.emit('job:retry', { ...ref, attempt, delayMs, error: sent.error ?? '' });
      return;
    }
    const reason = sent.verdict === 'retry' ? `gave up after ${attempt} attempts: ${sent.error}` : (sent.error ?? 'delivery refused');
    if (await jobs.giveUp(job.id, this.lockedBy, record, reason)) events.emit('job:failed', { ...ref, attempts: attempt, reason });
  }
}
