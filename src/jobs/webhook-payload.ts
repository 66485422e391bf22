/**
 * The JSON body of a delivery: success = the whole transcription result,
 * failure = `{status: "failed", error, request_id}`; either way the webhook_extra pairs follow as
 * top-level string fields (their keys were checked against the payload fields at submit time).
 */
import type { TranscriptionResult } from '../transcription/types.js';
import { JOB_OUTCOMES, type JobOutcome } from './job-states.js';

/** A finished transcription as clients get it: the result behind `status: "success"`. */
export type SuccessPayload = { status: 'success' } & TranscriptionResult;

export function successPayload(result: TranscriptionResult): SuccessPayload {
  return { status: 'success', ...result };
}

export interface FailurePayload {
  status: 'failed';
  error: string;
  request_id: string;
}

export function buildWebhookPayload(job: {
  requestId: string;
  outcome: JobOutcome;
  result: SuccessPayload | null;
  error: string | null;
  extra: Record<string, string>;
}): Record<string, unknown> {
  const base: SuccessPayload | FailurePayload =
    job.outcome === JOB_OUTCOMES.success && job.result
      ? job.result
      : { status: 'failed', error: job.error ?? 'Internal server error', request_id: job.requestId };
  return { ...base, ...job.extra };
}
