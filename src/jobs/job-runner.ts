/**
 * The runner: claims due jobs up to the concurrency limit and moves each one step on —
 * transcribe a running job, or make one delivery attempt for a delivering job. All state lives in
 * the database, the job audio included, so a process killed at any point loses nothing: its locks
 * are released at the next start (SQLite: at once, one process per file) or when they go stale
 * (PostgreSQL, shared by several nodes), and the work is done again, by any node. Deliveries are
 * therefore at least once. Times that nodes compare come from the database clock (db-clock.ts).
 *
 * The database may go away for a while (a restart, a failover, a full disk). Work in progress goes
 * on; a change it cannot record is held in memory (a finished transcription's result within
 * maxHeldResultBytes, an attempt's outcome, or a plain "give it back") and written when the
 * database answers again, while this node keeps the job's lock. An acknowledged delivery is thus
 * recorded as such, not sent again. Claiming waits for the database instead of polling a dead one,
 * and after an outage the locks of other nodes are taken over only once they have had time to
 * renew theirs.
 */
import type { Config } from '../config.js';
import { InferenceUnavailableError, OverloadedError, ParleyError } from '../errors.js';
import type { AccountRepository } from '../store/account-repository.js';
import type { BackendProfile } from '../store/backend.js';
import { newNodeId } from '../store/ids.js';
import { DatabaseUnavailableError, type StoreHealth } from '../store/availability.js';
import type { AttemptRecord, JobRepository, JobRow } from './job-repository.js';
import type { Transcribe, TranscriptionOptions } from '../transcription/types.js';
import { calculateDelay } from './backoff.js';
import type { JobEvents } from './job-events.js';
import { JOB_OUTCOMES, JOB_STATES, type JobOutcome } from './job-states.js';
import { adoptLegacyJobAudio } from './legacy-job-audio.js';
import { buildWebhookPayload, successPayload, type SuccessPayload } from './webhook-payload.js';
import { DEFAULT_WEBHOOK_METHOD, isWebhookMethod, type WebhookSender } from './webhook-sender.js';
import { signingSecrets, signWebhook } from './webhook-signature.js';

export interface JobRunnerDeps {
  jobs: JobRepository;
  accounts: AccountRepository;
  sender: WebhookSender;
  transcribe: Transcribe;
  events: JobEvents;
  backend: BackendProfile;
  /** Whether the database is usable; the runner waits on it during an outage. */
  health: StoreHealth;
  settings: Config['webhooks'];
  /** The longest a node takes to notice the database is back (its probe interval), ms. */
  probeMaxIntervalMs: number;
  userAgent: string;
  /** This node's id, written as `locked_by` on the jobs it holds. */
  nodeId?: string;
  /** Where versions before 0005 kept job audio files; moved into the database at start. */
  legacyAudioDir?: string;
  /** Milliseconds since the epoch, for signature timestamps and durations (never compared across nodes). */
  clock?: () => number;
  /** [0, 1): the jitter source of the backoff. */
  random?: () => number;
}

/** Far enough in the future that every lock is older: "every lock not ours is stale". */
const END_OF_TIME = '9999-12-31T23:59:59.999Z';

/** How long stop() lets deliveries in flight finish before it aborts them and lets go of their jobs. */
const STOP_GRACE_MS = 5_000;
/** How long stop() then waits for the aborted deliveries to settle. */
const ABORTED_SETTLE_MS = 1_000;
/** The longest stop() waits for work in flight (its database writes aside). */
export const LONGEST_STOP_MS = STOP_GRACE_MS + ABORTED_SETTLE_MS;

/** A change to a job that the database could not take yet; written when it answers again. */
interface HeldWrite {
  /** What it is, for the log. */
  what: string;
  /** Bytes of result it keeps in memory. */
  bytes: number;
  write(): Promise<unknown>;
}

export class JobRunner {
  readonly lockedBy: string;
  private readonly active = new Map<string, Promise<void>>();
  /** Aborted when stop() begins: a transcription may take minutes, so it is given back at once. */
  private readonly transcriptionAbort = new AbortController();
  /** Aborted when the grace period of stop() ends: a delivery is short, so it may finish first. */
  private readonly deliveryAbort = new AbortController();
  private loopDone: Promise<void> = Promise.resolve();
  private wakeUp: (() => void) | null = null;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private lastRecovery = 0;
  /** Changes waiting for the database, by job id; their jobs stay locked by this node. */
  private readonly held = new Map<string, HeldWrite>();
  private heldBytes = 0;
  private flushing: Promise<void> | null = null;
  /** No takeover of other nodes' locks before this (this node's clock): they renew theirs first after an outage. */
  private takeoverAfter = 0;
  private running = false;
  private readonly clock: () => number;
  private readonly random: () => number;

  constructor(private readonly deps: JobRunnerDeps) {
    this.lockedBy = deps.nodeId ?? newNodeId();
    this.clock = deps.clock ?? Date.now;
    this.random = deps.random ?? Math.random;
  }

  get isRunning(): boolean {
    return this.running;
  }

  get activeCount(): number {
    return this.active.size;
  }

  /** Jobs whose next change waits for the database. */
  get heldCount(): number {
    return this.held.size;
  }

  async start(): Promise<void> {
    // SQLite allows one process per file, so every lock found at start belongs to a dead process.
    await this.recoverStale(this.deps.backend.singleProcess ? END_OF_TIME : undefined);
    if (this.deps.legacyAudioDir) await adoptLegacyJobAudio(this.deps.jobs, this.deps.legacyAudioDir);
    this.running = true;
    const beat = Math.max(50, Math.floor(this.deps.settings.staleLockMs / 3));
    this.heartbeatTimer = setInterval(() => void this.heartbeat(), beat);
    this.heartbeatTimer.unref();
    this.loopDone = this.loop();
  }

  /**
   * Graceful stop: claim nothing more; give running transcriptions back to the queue at once; let
   * deliveries in flight finish and be recorded for up to STOP_GRACE_MS, then abort them (given
   * back too); finally release any lock still held, so other nodes take those jobs now rather
   * than when the lock goes stale.
   */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.transcriptionAbort.abort();
    this.wake();
    await settleWithin([this.loopDone, ...this.active.values()], STOP_GRACE_MS);
    this.deliveryAbort.abort();
    await settleWithin([...this.active.values()], ABORTED_SETTLE_MS);
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    if (this.deps.health.available) await this.flushHeld();
    // Whatever is still held is lost with this process: its jobs are done again (at least once).
    if (this.held.size > 0) this.deps.events.emit('job:error', { error: new Error(`${this.held.size} job changes could not be recorded before shutdown; those jobs run again`) });
    try {
      await this.deps.jobs.releaseAll(this.lockedBy);
    } catch (error) {
      this.deps.events.emit('job:error', { error });
    }
  }

  /** Look for work now (a job was submitted or a slot freed up). */
  wake(): void {
    this.wakeUp?.();
  }

  private async loop(): Promise<void> {
    const { settings, jobs } = this.deps;
    while (this.running) {
      try {
        if (this.held.size > 0) await this.flushHeld();
        if (this.clock() - this.lastRecovery >= settings.staleLockMs / 2 && this.clock() >= this.takeoverAfter) await this.recoverStale();
        const free = settings.concurrency - this.active.size;
        const claimed = free > 0 ? await jobs.claim({ lockedBy: this.lockedBy, limit: free }) : [];
        for (const job of claimed) this.track(job);
        if (claimed.length > 0 && claimed.length === free) continue;
        // Sleep until the next retry is due, a poll interval passes, or someone wakes us.
        const untilNext = (free > claimed.length ? await jobs.msUntilNextRun() : null) ?? Infinity;
        await this.sleep(Math.max(5, Math.min(settings.pollMs, untilNext)));
      } catch (error) {
        if (!this.running) break;
        if (error instanceof DatabaseUnavailableError) {
          // The store logs the outage once; wait for it to end rather than poll a dead database.
          await this.untilAvailable();
          continue;
        }
        this.deps.events.emit('job:error', { error });
        await this.sleep(settings.pollMs);
      }
    }
  }

  /** Sleep until the database is usable again (or stop() or a wake-up), then hold off takeovers. */
  private async untilAvailable(): Promise<void> {
    const { health, settings } = this.deps;
    if (!health.available) {
      await Promise.race([health.whenAvailable(), this.sleep(settings.staleLockMs)]);
      this.wake(); // ends the sleep when the database came first: its timer must not outlive the wait
    }
    if (!health.available) return;
    // Other nodes notice the database is back up to a probe interval apart; each renews its locks
    // within a third of staleLockMs of noticing. Until then a lock that looks stale is not.
    this.takeoverAfter = this.clock() + this.deps.settings.staleLockMs + this.deps.probeMaxIntervalMs;
    void this.heartbeat();
  }

  /**
   * Run `write` (a change to `job` in the database); when the database is unavailable, keep it
   * for later instead and resolve with undefined. `bytes` is what it keeps in memory: over
   * maxHeldResultBytes the change is replaced by giving the job back (its work is done again).
   */
  private async record<T>(job: JobRow, what: string, write: () => Promise<T>, bytes = 0): Promise<T | undefined> {
    try {
      return await write();
    } catch (err) {
      if (!(err instanceof DatabaseUnavailableError)) throw err;
      this.hold(job, what, write, bytes);
      return undefined;
    }
  }

  private hold(job: JobRow, what: string, write: () => Promise<unknown>, bytes: number): void {
    const previous = this.held.get(job.id);
    if (previous) this.heldBytes -= previous.bytes;
    if (this.heldBytes + bytes > this.deps.settings.maxHeldResultBytes) {
      this.deps.events.emit('job:error', { jobId: job.id, error: new Error(`${what} dropped: ${this.heldBytes} bytes of results already wait for the database; the job runs again`) });
      what = 'give back';
      bytes = 0;
      write = () => this.deps.jobs.release(job.id, this.lockedBy);
    }
    this.held.set(job.id, { what, bytes, write });
    this.heldBytes += bytes;
    this.deps.events.emit('job:held', { jobId: job.id, requestId: job.request_id, what });
  }

  /** Write every held change the database takes now; one that meets the outage again stays. */
  private flushHeld(): Promise<void> {
    this.flushing ??= (async () => {
      for (const [jobId, entry] of [...this.held]) {
        try {
          await entry.write();
        } catch (error) {
          if (error instanceof DatabaseUnavailableError) return;
          this.deps.events.emit('job:error', { jobId, error });
        }
        if (this.held.get(jobId) === entry) {
          this.held.delete(jobId);
          this.heldBytes -= entry.bytes;
        }
      }
    })().finally(() => (this.flushing = null));
    return this.flushing;
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
      .catch((error) => {
        // A read it needed failed (the audio, the account): the job is given back when the database answers.
        if (error instanceof DatabaseUnavailableError && !this.held.has(job.id)) this.hold(job, 'give back', () => this.deps.jobs.release(job.id, this.lockedBy), 0);
        else this.deps.events.emit('job:error', { jobId: job.id, error });
      })
      .finally(() => {
        this.active.delete(job.id);
        this.wake();
      });
    this.active.set(job.id, work);
  }

  private async recoverStale(staleBefore?: string): Promise<void> {
    const { jobs, settings } = this.deps;
    this.lastRecovery = this.clock();
    const count = await jobs.recoverStale({ staleBefore: staleBefore ?? jobs.clock.offset(-settings.staleLockMs), exceptLockedBy: this.lockedBy });
    if (count > 0) this.deps.events.emit('job:recovered', { count });
  }

  private async heartbeat(): Promise<void> {
    if (!this.deps.health.available) return;
    try {
      await this.deps.jobs.heartbeat(this.lockedBy, [...new Set([...this.active.keys(), ...this.held.keys()])]);
    } catch (error) {
      if (!(error instanceof DatabaseUnavailableError)) this.deps.events.emit('job:error', { error });
    }
  }

  private async runTranscription(job: JobRow): Promise<void> {
    const { jobs, events } = this.deps;
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
      const bytes = await jobs.readAudio(job.id);
      if (!bytes) throw new Error('the job has no stored audio');
      const options = JSON.parse(job.options) as TranscriptionOptions;
      const result = await this.deps.transcribe({ bytes, contentType: job.content_type }, options, {
        requestId: job.request_id,
        signal: this.transcriptionAbort.signal,
      });
      outcome = { outcome: JOB_OUTCOMES.success, result: JSON.stringify(successPayload(result)), error: null };
    } catch (err) {
      if (err instanceof DatabaseUnavailableError) throw err;
      if (this.transcriptionAbort.signal.aborted) {
        await this.record(job, 'give back', () => jobs.release(job.id, this.lockedBy));
        events.emit('job:requeued', { ...ref, reason: 'shutting down' });
        return;
      }
      if (err instanceof InferenceUnavailableError) {
        // The process working on it died or had to be killed: maybe this input's fault, maybe a
        // neighbour's. Taken up again, up to the limit; a poison input then fails for good.
        if (job.runs < maxCrashes) {
          const retryAt = jobs.clock.offset(1000 * (err.retryAfterSeconds ?? 1));
          await this.record(job, 'give back', () => jobs.release(job.id, this.lockedBy, retryAt, undefined, { crashed: true }));
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
        const retryAt = jobs.clock.offset(1000 * (err.retryAfterSeconds ?? 1));
        await this.record(job, 'give back', () => jobs.release(job.id, this.lockedBy, retryAt));
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
    const complete = async () => {
      if (!(await this.deps.jobs.completeTranscription(job.id, this.lockedBy, outcome))) return;
      this.deps.events.emit('job:transcribed', { jobId: job.id, requestId: job.request_id, outcome: outcome.outcome, ...(outcome.error ? { error: outcome.error } : {}) });
    };
    await this.record(job, 'transcription result', complete, Buffer.byteLength(outcome.result ?? '') + Buffer.byteLength(outcome.error ?? ''));
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
        result: job.result ? (JSON.parse(job.result) as SuccessPayload) : null,
        error: job.error,
        extra: JSON.parse(job.webhook_extra) as Record<string, string>,
      }),
    );
    // The claim stamped locked_at with the database clock just before this attempt.
    const attemptedAt = job.locked_at ?? jobs.clock.now();
    const headers = {
      'content-type': 'application/json',
      'user-agent': this.deps.userAgent,
      'x-request-id': job.request_id,
      'x-webhook-attempt': String(attempt),
      'x-webhook-signature': signWebhook(signingSecrets(account, this.clock()), body, this.clock() / 1000),
    };
    const method = isWebhookMethod(job.webhook_method) ? job.webhook_method : DEFAULT_WEBHOOK_METHOD;
    const sent = await this.deps.sender.send(job.webhook_url, body, headers, this.deliveryAbort.signal, method);
    if (sent.verdict === 'aborted') {
      // Possibly received, not recorded: it is sent again, by this node or another (at least once).
      await this.record(job, 'give back', () => jobs.release(job.id, this.lockedBy));
      return;
    }
    const record: AttemptRecord = { attempt, attemptedAt, statusCode: sent.statusCode, error: sent.error, durationMs: sent.durationMs };
    events.emit('job:attempt', { ...ref, attempt, statusCode: sent.statusCode, error: sent.error, ...(sent.detail && { detail: sent.detail }), durationMs: sent.durationMs });

    // Each outcome is recorded under this node's lock; if the database cannot take it now, it is
    // held, the lock kept, and written later: an acknowledged delivery is never sent again for an outage.
    if (sent.verdict === 'acknowledged') {
      const state = job.outcome === JOB_OUTCOMES.success ? JOB_STATES.succeeded : JOB_STATES.failed;
      await this.record(job, 'acknowledged delivery', async () => {
        if (await jobs.acknowledge(job.id, this.lockedBy, record, state)) events.emit('job:delivered', { ...ref, attempt, state });
      });
      return;
    }
    // "10 retries after the first attempt": attempt numbers 1..retries+1.
    if (sent.verdict === 'retry' && attempt <= settings.retries) {
      const delayMs = calculateDelay(attempt, settings.backoffBaseMs, settings.backoffCapMs, this.random);
      await this.record(job, 'failed delivery attempt', async () => {
        if (await jobs.reschedule(job.id, this.lockedBy, record, jobs.clock.offset(delayMs))) events.emit('job:retry', { ...ref, attempt, delayMs, error: sent.error ?? '' });
      });
      return;
    }
    const reason = sent.verdict === 'retry' ? `gave up after ${attempt} attempts: ${sent.error}` : (sent.error ?? 'delivery refused');
    await this.record(job, 'final delivery attempt', async () => {
      if (await jobs.giveUp(job.id, this.lockedBy, record, reason)) events.emit('job:failed', { ...ref, attempts: attempt, reason });
    });
  }
}

/** Wait until every promise has settled or `ms` have passed, whichever comes first. */
async function settleWithin(work: Promise<unknown>[], ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const grace = new Promise<void>((r) => (timer = setTimeout(r, ms)));
  await Promise.race([Promise.allSettled(work), grace]);
  clearTimeout(timer);
}
