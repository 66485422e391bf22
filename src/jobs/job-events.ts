/**
 * Typed lifecycle events of the job runner (graphile-worker WorkerEventMap). They feed logs (see
 * logJobEvents) and tests; a listener that throws is logged and never breaks the runner.
 */
import type { JobOutcome, JobState } from './job-states.js';

interface JobRef {
  jobId: string;
  requestId: string;
}

export interface JobEventMap {
  /** A job was written to the database with its audio stored. */
  'job:queued': JobRef & { accountId: string };
  /** Transcription of a claimed job begins. */
  'job:start': JobRef;
  /** Transcription ended; the outcome is stored and delivery is due. */
  'job:transcribed': JobRef & { outcome: JobOutcome; error?: string };
  /** Transcription could not run now (workers saturated, shutdown); the job waits in the queue again. */
  'job:requeued': JobRef & { reason: string };
  /** One delivery attempt ended (any result); it is recorded. */
  'job:attempt': JobRef & { attempt: number; statusCode: number | null; error: string | null; detail?: string; durationMs: number };
  /** A change to the job (`what`) waits in memory for the database to answer again; the job stays locked by this node. */
  'job:held': JobRef & { what: string };
  /** The attempt failed in a retryable way; the next one is scheduled. */
  'job:retry': JobRef & { attempt: number; delayMs: number; error: string };
  /** The receiver acknowledged: the job ended in `state`. */
  'job:delivered': JobRef & { attempt: number; state: JobState };
  /** Delivery gave up for good (final status, retries used up, refused address). */
  'job:failed': JobRef & { attempts: number; reason: string };
  /** Locks left by dead processes were released; those jobs are taken up again. */
  'job:recovered': { count: number };
  /** Retention deleted finished jobs (with their results and attempts). */
  'jobs:deleted': { count: number; olderThanDays: number };
  /** An unexpected error inside the runner (database down...); the runner carries on. */
  'job:error': { jobId?: string; error: unknown };
}

export type JobEventName = keyof JobEventMap;
type Listener<K extends JobEventName> = (payload: JobEventMap[K]) => void;

export interface JobLogger {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export class JobEvents {
  private readonly listeners = new Map<JobEventName, Set<Listener<any>>>();

  constructor(private readonly log: JobLogger) {}

  on<K extends JobEventName>(name: K, listener: Listener<K>): () => void {
    let set = this.listeners.get(name);
    if (!set) this.listeners.set(name, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }

  emit<K extends JobEventName>(name: K, payload: JobEventMap[K]): void {
    for (const listener of this.listeners.get(name) ?? []) {
      try {
        listener(payload);
      } catch (err) {
        this.log.error({ err, event: name }, 'a job event listener threw');
      }
    }
  }
}

/** The runner's log lines: one per event, at a level that matches what happened. */
export function logJobEvents(events: JobEvents, log: JobLogger): void {
  events.on('job:queued', (e) => log.debug(e, 'job queued'));
  events.on('job:start', (e) => log.debug(e, 'job started'));
  events.on('job:transcribed', (e) => log.info(e, 'job transcribed'));
  events.on('job:requeued', (e) => log.info(e, 'job requeued'));
  // An attempt with operator detail (a refused address) is the only place that detail is kept.
  events.on('job:attempt', (e) => (e.detail ? log.warn(e, 'webhook attempt refused') : log.debug(e, 'webhook attempt')));
  events.on('job:held', (e) => log.warn(e, 'job change held until the database answers'));
  events.on('job:retry', (e) => log.warn(e, 'webhook attempt failed; retry scheduled'));
  events.on('job:delivered', (e) => log.info(e, 'webhook delivered'));
  events.on('job:failed', (e) => log.warn(e, 'webhook delivery gave up'));
  events.on('job:recovered', (e) => log.warn(e, 'jobs of a dead process taken up again'));
  events.on('jobs:deleted', (e) => log.info(e, 'finished jobs deleted (retention)'));
  events.on('job:error', ({ jobId, error }) => log.error({ jobId, err: error }, 'job runner error'));
}
