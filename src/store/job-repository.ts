/**
 * The jobs table and its transitions, one method each (graphile-worker src/sql/*). Every change
 * made by a worker is guarded by `locked_by = <its lock>`: a process whose lock was taken over
 * (declared dead, stale) cannot overwrite the newer owner's work, and the method returns false.
 * Times are passed in (ISO strings) so the caller's clock decides.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import { JOB_STATES, type JobOutcome, type JobState } from '../jobs/job-states.js';
import type { BackendProfile } from './backend.js';
import type { Database, JobAttemptTable, JobTable } from './schema.js';

export type JobRow = JobTable;
export type JobAttemptRow = JobAttemptTable;

export interface NewJob {
  id: string;
  accountId: string;
  requestId: string;
  audioPath: string;
  contentType: string;
  options: string;
  webhookUrl: string;
  webhookExtra: string;
  now: string;
}

/** What a finished delivery attempt writes to job_attempts. */
export interface AttemptRecord {
  attempt: number;
  attemptedAt: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

const WAITING: JobState[] = [JOB_STATES.queued, JOB_STATES.delivering];

/** Thrown by submit when the account already has a job with this request id. */
export class DuplicateJobError extends Error {}

/** A unique-constraint violation: SQLite (better-sqlite3) or PostgreSQL (SQLSTATE 23505). */
function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}

export class JobRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly backend: BackendProfile,
  ) {}

  /** submit: a new queued job, due at once. */
  async submit(job: NewJob): Promise<void> {
    const exists = await this.db
      .selectFrom('jobs')
      .select('id')
      .where('account_id', '=', job.accountId)
      .where('request_id', '=', job.requestId)
      .executeTakeFirst();
    if (exists) throw new DuplicateJobError(`a job with request id ${job.requestId} exists`);
    // Two submissions may both pass the check above; the unique (account_id, request_id) decides.
    await this.db
      .insertInto('jobs')
      .values({
        id: job.id,
        account_id: job.accountId,
        request_id: job.requestId,
        state: JOB_STATES.queued,
        audio_path: job.audioPath,
        content_type: job.contentType,
        options: job.options,
        webhook_url: job.webhookUrl,
        webhook_extra: job.webhookExtra,
        outcome: null,
        result: null,
        error: null,
        attempts: 0,
        last_error: null,
        run_at: job.now,
        locked_by: null,
        locked_at: null,
        created_at: job.now,
        updated_at: job.now,
        finished_at: null,
      })
      .execute()
      .catch((err: unknown) => {
        throw isUniqueViolation(err) ? new DuplicateJobError(`a job with request id ${job.requestId} exists`) : err;
      });
  }

  /**
   * claim: lock up to `limit` due, unlocked jobs for `lockedBy`. A queued job becomes running; a
   * delivering job stays delivering (the lock marks the attempt in flight).
   * PostgreSQL: one `UPDATE … WHERE id IN (SELECT … FOR UPDATE SKIP LOCKED)`, so processes sharing
   * the database skip each other's rows instead of waiting. SQLite has no SKIP LOCKED and one
   * writer at a time: pick candidates, then take each with a conditional UPDATE that only succeeds
   * while the row is still unlocked.
   */
  async claim(options: { lockedBy: string; limit: number; now: string }): Promise<JobRow[]> {
    const { lockedBy, limit, now } = options;
    if (limit <= 0) return [];
    const lockSet = {
      locked_by: lockedBy,
      locked_at: now,
      updated_at: now,
      state: sql<string>`case when state = ${JOB_STATES.queued} then ${JOB_STATES.running} else state end`,
    };
    const due = (db: Kysely<Database>) =>
      db
        .selectFrom('jobs')
        .select('id')
        .where('state', 'in', WAITING)
        .where('run_at', '<=', now)
        .where('locked_by', 'is', null)
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
  async heartbeat(lockedBy: string, ids: string[], now: string): Promise<void> {
    if (ids.length === 0) return;
    await this.db.updateTable('jobs').set({ locked_at: now }).where('locked_by', '=', lockedBy).where('id', 'in', ids).execute();
  }

  /** complete-transcription: store the outcome, drop the audio reference, make delivery due now. */
  async completeTranscription(
    id: string,
    lockedBy: string,
    outcome: { outcome: JobOutcome; result: string | null; error: string | null },
    now: string,
  ): Promise<boolean> {
    const r = await this.db
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
    return Number(r.numUpdatedRows) === 1;
  }

  /**
   * Give a claimed job back without recording anything: a running job returns to queued, a
   * delivering one keeps its attempt count. Used at shutdown and when transcription is busy.
   */
  async release(id: string, lockedBy: string, runAt: string, now: string): Promise<boolean> {
    const r = await this.db
      .updateTable('jobs')
      .set({
        state: sql<string>`case when state = ${JOB_STATES.running} then ${JOB_STATES.queued} else state end`,
        run_at: runAt,
        locked_by: null,
        locked_at: null,
        updated_at: now,
      })
      .where('id', '=', id)
      .where('locked_by', '=', lockedBy)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** record-attempt + acknowledged: the receiver answered 2xx; the job ends in `finalState`. */
  async acknowledge(id: string, lockedBy: string, attempt: AttemptRecord, finalState: JobState): Promise<boolean> {
    return this.finishAttempt(id, lockedBy, attempt, {
      state: finalState,
      last_error: null,
      finished_at: attempt.attemptedAt,
    });
  }

  /** record-attempt + reschedule: a retryable failure; the next attempt is due at `runAt`. */
  async reschedule(id: string, lockedBy: string, attempt: AttemptRecord, runAt: string): Promise<boolean> {
    return this.finishAttempt(id, lockedBy, attempt, { state: JOB_STATES.delivering, last_error: attempt.error, run_at: runAt });
  }

  /** record-attempt + give-up: a final answer or the last retry failed; the job ends failed. */
  async giveUp(id: string, lockedBy: string, attempt: AttemptRecord, reason: string): Promise<boolean> {
    return this.finishAttempt(id, lockedBy, attempt, { state: JOB_STATES.failed, last_error: reason, finished_at: attempt.attemptedAt });
  }

  /**
   * recover-stale: release jobs whose lock is older than `staleBefore` and not ours — their
   * process died (kill -9, power loss). Running jobs go back to queued (transcribed again); a
   * delivering job becomes due again with the same attempt count, so a delivery that was sent
   * but not recorded is repeated with the same X-Request-Id (at least once, decisions.md point 27).
   */
  async recoverStale(options: { staleBefore: string; exceptLockedBy: string; now: string }): Promise<number> {
    const r = await this.db
      .updateTable('jobs')
      .set({
        state: sql<string>`case when state = ${JOB_STATES.running} then ${JOB_STATES.queued} else state end`,
        locked_by: null,
        locked_at: null,
        updated_at: options.now,
      })
      .where('locked_by', 'is not', null)
      .where('locked_by', '!=', options.exceptLockedBy)
      .where('locked_at', '<', options.staleBefore)
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  }

  /** When the next waiting job becomes due (null when none waits). */
  async nextRunAt(): Promise<string | null> {
    const row = await this.db
      .selectFrom('jobs')
      .select((eb) => eb.fn.min('run_at').as('next'))
      .where('state', 'in', WAITING)
      .where('locked_by', 'is', null)
      .executeTakeFirst();
    return (row?.next as string | null | undefined) ?? null;
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

  /** Audio file names still referenced by a job (the rest of the folder is leftovers of a crash). */
  async referencedAudio(): Promise<Set<string>> {
    const rows = await this.db.selectFrom('jobs').select('audio_path').where('audio_path', 'is not', null).execute();
    return new Set(rows.map((r) => r.audio_path!));
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
    change: { state: JobState; last_error: string | null; run_at?: string; finished_at?: string },
  ): Promise<boolean> {
    return this.db.transaction().execute(async (trx: Transaction<Database>) => {
      const r = await trx
        .updateTable('jobs')
        .set({
          ...change,
          attempts: attempt.attempt,
          locked_by: null,
          locked_at: null,
          updated_at: attempt.attemptedAt,
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
