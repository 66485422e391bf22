/**
 * The states of a transcription job, named once (pg-boss JOB_STATES). The transcription outcome
 * (success with a result, or failed with an error sentence) is stored apart from these; the state
 * says how far the job has got, the outcome says what will be (or was) delivered.
 *
 *   queued ──claim──▶ running ──complete-transcription──▶ delivering ──2xx──▶ succeeded | failed
 *     ▲                  │                                   │  ▲
 *     └─recover-stale────┘                 retryable failure └──┘ reschedule (backoff)
 *                                          final 4xx / retries used up ──give-up──▶ failed
 */
export const JOB_STATES = Object.freeze({
  /** Audio stored, waiting for a worker slot. */
  queued: 'queued',
  /** A process holds the lock and is transcribing. */
  running: 'running',
  /** The outcome is stored; the webhook is being sent or waits for its next attempt (run_at). */
  delivering: 'delivering',
  /** The receiver acknowledged (2xx) the success payload. */
  succeeded: 'succeeded',
  /** The receiver acknowledged the failure payload, or delivery gave up (final 4xx, retries used up, address refused). */
  failed: 'failed',
} as const);

export type JobState = (typeof JOB_STATES)[keyof typeof JOB_STATES];

/** States a job never leaves. */
export const FINAL_STATES: readonly JobState[] = Object.freeze([JOB_STATES.succeeded, JOB_STATES.failed]);

/** What transcription produced, once it has ended. */
export const JOB_OUTCOMES = Object.freeze({ success: 'success', failed: 'failed' } as const);

export type JobOutcome = (typeof JOB_OUTCOMES)[keyof typeof JOB_OUTCOMES];
