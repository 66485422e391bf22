/**
 * The jobs table and its transitions, one method each (graphile-worker src/sql/*). Every change
 * made by a worker is guarded by `locked_by = <its lock>`: a process whose lock was taken over
 * (declared dead, stale) cannot overwrite the newer owner's work, and the method returns false.
 * Every time defaults to the database clock (db-clock.ts), so nodes agree on what is due and what
 * is stale; tests pass fixed ISO strings instead.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import { FINAL_STATES, JOB_STATES, type JobOutcome, type JobState } from './job-states.js';
import type { BackendProfile } from '../store/backend.js';
import { dbClock, type DbClock, type Instant } from '../store/db-clock.js';
import type { Database, JobAttemptTable, JobTable } from '../store/schema.js';

export type JobRow = JobTable;
export type JobAttemptRow = JobAttemptTable;

export interface NewJob {
  id: string;
  accountId: string;
  requestId: string;
  /** The uploaded audio, kept in job_audio until transcription ends. */
  audio: Uint8Array;
  contentType: string;
  options: string;
  webhookUrl: string;
  /** GET or POST (WEBHOOK_METHODS); POST when unset. */
  webhookMethod?: string;
  webhookExtra: string;
  now?: Instant;
}

/** What a finished delivery attempt writes to job_attempts. */
export interface AttemptRecord {
  attempt: number;
  attemptedAt: Instant;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

const WAITING: JobState[] = [JOB_STATES.queued, JOB_STATES.delivering];

/** Thrown by submit when the account already has a job with this request id. */
export class DuplicateJobError extends Error {}

/** Job audio is written and read in pieces of this size (bounded statements and results). */
export const JOB_AUDIO_CHUNK_BYTES = 1024 * 1024;

/** A unique-constraint violation: SQLite (better-sqlite3) or PostgreSQL (SQLSTATE 23505). */
function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}

export class JobRepository {
  readonly clock: DbClock;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly backend: BackendProfile,
  ) {
    this.clock = dbClock(backend);
  }

  /** submit: a new queued job with its audio, due at once; both are written or neither. */
  async submit(job: NewJob): Promise<void> {
    const exists = () =>
      this.db.selectFrom('jobs').select('id').where('account_id', '=', job.accountId).where('request_id', '=', job.requestId).executeTakeFirst();
    if (await exists()) throw new DuplicateJobError(`a job with request id ${job.requestId} exists`);
    try {
      await this.db.transaction().execute(async (trx) => {
        await this.insertJob(trx, job);
        await writeAudio(trx, job.id, job.audio);
      });
    } catch (err) {
      // Two submissions (on one node or two) took the same request id at once: the unique
      // constraint let one through.
      if (isUniqueViolation(err) || (await exists())) throw new DuplicateJobError(`a job with request id ${job.requestId} exists`);
      throw err;
    }
  }

  private async insertJob(trx: Transaction<Database>, job: NewJob): Promise<void> {
    const now = job.now ?? this.clock.now();
    await trx
      .insertInto('jobs')
      .values({
        id: job.id,
        account_id: job.accountId,
        request_id: job.requestId,
        state: JOB_STATES.queued,
        audio_path: null,
        content_type: job.contentType,
        options: job.options,
        webhook_url: job.webhookUrl,
        webhook_method: job.webhookMethod ?? 'POST',
        webhook_extra: job.webhookExtra,
        outcome: null,
        result: null,
        error: null,
        attempts: 0,
        runs: 0,
        last_error: null,
        run_at: now,
        locked_by: null,
        locked_at: null,
        created_at: now,
        updated_at: now,
        finished_at: null,
      })
      .execute();
  }

  /** The stored audio of a job, read one chunk per query; null when none is stored. */
  async readAudio(jobId: string): Promise<Uint8Array | null> {
    const chunks: Uint8Array[] = [];
    for (let seq = 0; ; seq++) {
      const row = await this.db.selectFrom('job_audio').select('bytes').where('job_id', '=', jobId).where('seq', '=', seq).executeTakeFirst();
      if (!row) break;
      chunks.push(row.bytes);
    }
    return chunks.length === 0 ? null : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  }

  /**
   * claim: lock up to `limit` due, unlocked jobs for `lockedBy`. A queued job becomes running; a
   * delivering job stays delivering (the lock marks the attempt in flight).
   * PostgreSQL: one `UPDATE … WHERE id IN (SELECT … FOR UPDATE SKIP LOCKED)`, so processes sharing
   * the database skip each other's rows instead of waiting. SQLite has no SKIP LOCKED and one
   * writer at a time: pick candidates, then take each with a conditional UPDATE that only succeeds
   * while the row is still unlocked.
   */
  async claim(options: { lockedBy: string; limit: number; now?: Instant }): Promise<JobRow[]> {
    const { lockedBy, limit, now = this.clock.now() } = options;
    if (limit <= 0) return [];
    const lockSet = {
      locked_by: lockedBy,
      locked_at: now,
      updated_at: now,
      state: sql<string>`case when state = ${JOB_STATES.queued} then ${JOB_STATES.running} else state end`,
      runs: sql<number>`case when state = ${JOB_STATES.queued} then runs + 1 else runs end`,
    };
    const due = (db: Kysely<Database>) =>
      db
        .selectFrom('jobs')
        .select('id')
        .where('state', 'in', WAITING)
        .where('run_at', '<=', now)
        .where('locked_by', 'is', null)
        // A job whose audio is still a pre-0005 file waits for the node holding the file to move it in.
        .where('audio_path', 'is', null)
        .orderBy('run_at')
        .limit(limit);

    if (this.backend.skipLocked) {
      return this.db
        .updateTable('jobs')
        .set(lockSet)
        .where('id', 'in', due(this.db).forUpdate().skipLocked())
        .returningAll()
        .execute();
    }

    const claimed: JobRow[] = [];
    for (const { id } of await due(this.db).execute()) {
      const row = await this.db
        .updateTable('jobs')
        .set(lockSet)
        .where('id', '=', id)
        .where('locked_by', 'is', null)
        .where('state', 'in', WAITING)
        .returningAll()
        .executeTakeFirst();
      if (row) claimed.push(row);
    }
    return claimed;
  }

  /** Refresh the locks this process holds, so a long transcription is not taken for abandoned. */
  async heartbeat(lockedBy: string, ids: string[], now: Instant = this.clock.now()): Promise<void> {
    if (ids.length === 0) return;
    await this.db.updateTable('jobs').set({ locked_at: now }).where('locked_by', '=', lockedBy).where('id', 'in', ids).execute();
  }

  /** complete-transcription: store the outcome, delete the audio, make delivery due now. */
  async completeTranscription(
    id: string,
    lockedBy: string,
    outcome: { outcome: JobOutcome; result: string | null; error: string | null },
    now: Instant = this.clock.now(),
  ): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const r = await trx
        .updateTable('jobs')
        .set({
          state: JOB_STATES.delivering,
          outcome: outcome.outcome,
          result: outcome.result,
          error: outcome.error,
          audio_path: null,
          run_at: now,
          locked_by: null,
          locked_at: null,
          updated_at: now,
        })
        .where('id', '=', id)
        .where('locked_by', '=', lockedBy)
        .where('state', '=', JOB_STATES.running)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) !== 1) return false;
      await trx.deleteFrom('job_audio').where('job_id', '=', id).execute();
      return true;
    });
  }

  /**
   * Give a claimed job back: a running job returns to queued, a delivering one keeps its attempt
   * count. A plain release (shutdown, busy workers) does not count the run; `crashed` (its
   * inference process died) does.
   */
  async release(
    id: string,
    lockedBy: string,
    runAt: Instant = this.clock.now(),
    now: Instant = this.clock.now(),
    options: { crashed?: boolean } = {},
  ): Promise<boolean> {
    const r = await this.db
      .updateTable('jobs')
      .set({ ...givenBack(now, options), run_at: runAt })
      .where('id', '=', id)
      .where('locked_by', '=', lockedBy)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /**
   * Let go of every job `lockedBy` still holds (a node shutting down after its grace period):
   * other nodes may take them at once instead of waiting for the locks to go stale.
   */
  async releaseAll(lockedBy: string, now: Instant = this.clock.now()): Promise<number> {
    const r = await this.db
      .updateTable('jobs')
      .set({ ...givenBack(now), run_at: now })
      .where('locked_by', '=', lockedBy)
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  }

  /** record-attempt + acknowledged: the receiver answered 2xx; the job ends in `finalState`. */
  async acknowledge(id: string, lockedBy: string, attempt: AttemptRecord, finalState: JobState, now: Instant = this.clock.now()): Promise<boolean> {
    return this.finishAttempt(id, lockedBy, attempt, { state: finalState, last_error: null, finished_at: now }, now);
  }

  /** record-attempt + reschedule: a retryable failure; the next attempt is due at `runAt`. */
  async reschedule(id: string, lockedBy: string, attempt: AttemptRecord, runAt: Instant): Promise<boolean> {
    return this.finishAttempt(id, lockedBy, attempt, { state: JOB_STATES.delivering, last_error: attempt.error, run_at: runAt });
  }

  /** record-attempt + give-up: a final answer or the last retry failed; the job ends failed. */
  async giveUp(id: string, lockedBy: string, attempt: AttemptRecord, reason: string, now: Instant = this.clock.now()): Promise<boolean> {
    return this.finishAttempt(id, lockedBy, attempt, { state: JOB_STATES.failed, last_error: reason, finished_at: now }, now);
  }

  /**
   * recover-stale: release jobs whose lock is older than `staleBefore` and not ours — their
   * process died (kill -9, power loss). Running jobs go back to queued (transcribed again); a
   * delivering job becomes due again with the same attempt count, so a delivery that was sent
   * but not recorded is repeated with the same X-Request-Id (delivery is at least once).
   */
  async recoverStale(options: { staleBefore: Instant; exceptLockedBy: string; now?: Instant }): Promise<number> {
    const r = await this.db
      .updateTable('jobs')
      .set(givenBack(options.now ?? this.clock.now()))
      .where('locked_by', 'is not', null)
      .where('locked_by', '!=', options.exceptLockedBy)
      .where('locked_at', '<', options.staleBefore)
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  }

  /** Milliseconds until the next waiting job is due by the database clock (null when none waits). */
  async msUntilNextRun(): Promise<number | null> {
    const row = await this.db
      .selectFrom('jobs')
      .select((eb) => [eb.fn.min('run_at').as('next'), this.clock.now().as('now')])
      .where('state', 'in', WAITING)
      .where('locked_by', 'is', null)
      .executeTakeFirst();
    const next = row?.next as string | null | undefined;
    return next ? Date.parse(next) - Date.parse(row!.now) : null;
  }

  /**
   * Retention: delete up to `limit` finished jobs (succeeded or failed) that finished before
   * `cutoff`, with their attempts and any audio; returns how many jobs went. Small batches keep
   * each transaction short next to the claims of other nodes.
   */
  async deleteFinishedBefore(cutoff: Instant, limit: number): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      const ids = (
        await trx
          .selectFrom('jobs')
          .select('id')
          .where('state', 'in', FINAL_STATES)
          .where('finished_at', '<', cutoff)
          .orderBy('finished_at')
          .limit(limit)
          .execute()
      ).map((r) => r.id);
      if (ids.length === 0) return 0;
      await trx.deleteFrom('job_attempts').where('job_id', 'in', ids).execute();
      await trx.deleteFrom('job_audio').where('job_id', 'in', ids).execute();
      const r = await trx.deleteFrom('jobs').where('id', 'in', ids).where('state', 'in', FINAL_STATES).executeTakeFirst();
      return Number(r.numDeletedRows);
    });
  }

  /** Jobs whose audio is still a file of a version before 0005 (moved into the database at start). */
  async withLegacyAudioFile(): Promise<Array<{ id: string; audio_path: string }>> {
    const rows = await this.db.selectFrom('jobs').select(['id', 'audio_path']).where('audio_path', 'is not', null).execute();
    return rows.map((r) => ({ id: r.id, audio_path: r.audio_path! }));
  }

  /** Store the bytes of a legacy audio file as the job's audio and forget the file name. */
  async adoptLegacyAudio(jobId: string, audio: Uint8Array | null): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('job_audio').where('job_id', '=', jobId).execute();
      if (audio) await writeAudio(trx, jobId, audio);
      await trx.updateTable('jobs').set({ audio_path: null }).where('id', '=', jobId).execute();
    });
  }

  async findForAccount(accountId: string, requestId: string): Promise<{ job: JobRow; attempts: JobAttemptRow[] } | undefined> {
    const job = await this.db
      .selectFrom('jobs')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('request_id', '=', requestId)
      .executeTakeFirst();
    if (!job) return undefined;
    const attempts = await this.db.selectFrom('job_attempts').selectAll().where('job_id', '=', job.id).orderBy('attempt').execute();
    return { job, attempts };
  }

  async countByState(): Promise<Record<string, number>> {
    const rows = await this.db
      .selectFrom('jobs')
      .select(['state', (eb) => eb.fn.countAll<string | number>().as('n')])
      .groupBy('state')
      .execute();
    return Object.fromEntries(rows.map((r) => [r.state, Number(r.n)]));
  }

  /** Insert the attempt row and move the job on, in one transaction, only while we hold the lock. */
  private async finishAttempt(
    id: string,
    lockedBy: string,
    attempt: AttemptRecord,
    change: { state: JobState; last_error: string | null; run_at?: Instant; finished_at?: Instant },
    now: Instant = this.clock.now(),
  ): Promise<boolean> {
    return this.db.transaction().execute(async (trx: Transaction<Database>) => {
      const r = await trx
        .updateTable('jobs')
        .set({
          ...change,
          attempts: attempt.attempt,
          locked_by: null,
          locked_at: null,
          updated_at: now,
        })
        .where('id', '=', id)
        .where('locked_by', '=', lockedBy)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) !== 1) return false;
      await trx
        .insertInto('job_attempts')
        .values({
          job_id: id,
          attempt: attempt.attempt,
          attempted_at: attempt.attemptedAt,
          status_code: attempt.statusCode,
          error: attempt.error,
          duration_ms: Math.round(attempt.durationMs),
        })
        .execute();
      return true;
    });
  }
}

/** Unlocked; a running job back to queued (transcribed again), a delivering one keeps its attempts. */
/** A claimed job returned unfinished; a plain release takes back the run its claim counted. */
function givenBack(now: Instant, options: { crashed?: boolean } = {}) {
  return {
    runs: options.crashed ? sql<number>`runs` : sql<number>`case when state = ${JOB_STATES.running} then runs - 1 else runs end`,
    state: sql<string>`case when state = ${JOB_STATES.running} then ${JOB_STATES.queued} else state end`,
    locked_by: null,
    locked_at: null,
    updated_at: now,
  };
}

async function writeAudio(trx: Transaction<Database>, jobId: string, audio: Uint8Array): Promise<void> {
  const bytes = Buffer.from(audio.buffer, audio.byteOffset, audio.byteLength);
  for (let seq = 0, at = 0; seq === 0 || at < bytes.byteLength; seq++, at += JOB_AUDIO_CHUNK_BYTES) {
    await trx.insertInto('job_audio').values({ job_id: jobId, seq, bytes: bytes.subarray(at, at + JOB_AUDIO_CHUNK_BYTES) }).execute();
  }
}
