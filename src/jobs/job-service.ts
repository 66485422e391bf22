/**
 * The job use case as the routes see it: submit a transcription for webhook delivery, and look a
 * job up for its owner (another account's request id is not found).
 */
import { ConflictError, InvalidRequestError } from '../errors.js';
import { findForbiddenAddress, REFUSED_ADDRESS_SENTENCE, type AddressPolicy } from '../net/address-policy.js';
import { newId } from '../store/ids.js';
import { DuplicateJobError, type JobRepository } from './job-repository.js';
import type { AudioInput, TranscriptionOptions } from '../transcription/types.js';
import type { JobEvents } from './job-events.js';
import type { JobRunner } from './job-runner.js';
import { JOB_STATES, type JobOutcome, type JobState } from './job-states.js';
import { PAYLOAD_FIELDS } from './webhook-extra.js';
import type { SuccessPayload } from './webhook-payload.js';
import { DEFAULT_WEBHOOK_METHOD, isWebhookMethod, type WebhookMethod } from './webhook-sender.js';

export interface SubmitJob {
  accountId: string;
  requestId: string;
  input: AudioInput;
  options: TranscriptionOptions;
  webhookUrl: string;
  /** The method of every delivery attempt; POST when unset. */
  webhookMethod?: WebhookMethod;
  /** Already parsed by parseWebhookExtra. */
  webhookExtra: Record<string, string>;
}

export interface JobAttemptView {
  attempt: number;
  at: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

export interface JobView {
  requestId: string;
  state: JobState;
  /** null until transcription has ended. */
  outcome: JobOutcome | null;
  /** The failure sentence when outcome is failed. */
  error: string | null;
  result: SuccessPayload | null;
  webhookUrl: string;
  webhookMethod: WebhookMethod;
  /** When the next delivery attempt is due (delivering only). */
  nextAttemptAt: string | null;
  /** Why the last attempt failed, or why delivery gave up. */
  lastError: string | null;
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
  attempts: JobAttemptView[];
}

const reserved = new Set<string>(PAYLOAD_FIELDS);

export class JobService {
  constructor(
    private readonly deps: {
      jobs: JobRepository;
      runner: JobRunner;
      events: JobEvents;
      policy: AddressPolicy;
    },
  ) {}

  get events(): JobEvents {
    return this.deps.events;
  }

  /** Validate, then write the queued job with its audio. Throws InvalidRequestError for a bad webhook URL or extra key. */
  async submit(job: SubmitJob): Promise<{ jobId: string; requestId: string }> {
    this.checkWebhookUrl(job.webhookUrl);
    for (const key of Object.keys(job.webhookExtra))
      if (reserved.has(key)) throw new InvalidRequestError(`webhook_extra key "${key}" collides with a result field`);

    const jobId = newId('job', 16);
    try {
      await this.deps.jobs.submit({
        id: jobId,
        accountId: job.accountId,
        requestId: job.requestId,
        audio: job.input.bytes,
        contentType: job.input.contentType,
        options: JSON.stringify(job.options),
        webhookUrl: job.webhookUrl,
        webhookMethod: job.webhookMethod ?? DEFAULT_WEBHOOK_METHOD,
        webhookExtra: JSON.stringify(job.webhookExtra),
      });
    } catch (err) {
      if (err instanceof DuplicateJobError) throw new ConflictError(`A job with request_id ${job.requestId} already exists`);
      throw err;
    }
    this.deps.events.emit('job:queued', { jobId, requestId: job.requestId, accountId: job.accountId });
    this.deps.runner.wake();
    return { jobId, requestId: job.requestId };
  }

  /** The job of `requestId` if `accountId` owns it; other accounts' jobs do not exist for them. */
  async get(accountId: string, requestId: string): Promise<JobView | undefined> {
    const found = await this.deps.jobs.findForAccount(accountId, requestId);
    if (!found) return undefined;
    const { job, attempts } = found;
    return {
      requestId: job.request_id,
      state: job.state as JobState,
      outcome: job.outcome as JobOutcome | null,
      error: job.error,
      result: job.result ? (JSON.parse(job.result) as SuccessPayload) : null,
      webhookUrl: job.webhook_url,
      webhookMethod: isWebhookMethod(job.webhook_method) ? job.webhook_method : DEFAULT_WEBHOOK_METHOD,
      nextAttemptAt: job.state === JOB_STATES.delivering ? job.run_at : null,
      lastError: job.last_error,
      createdAt: job.created_at,
      updatedAt: job.updated_at,
      finishedAt: job.finished_at,
      attempts: attempts.map((a) => ({
        attempt: a.attempt,
        at: a.attempted_at,
        statusCode: a.status_code,
        error: a.error,
        durationMs: a.duration_ms,
      })),
    };
  }

  async countByState(): Promise<Record<string, number>> {
    return this.deps.jobs.countByState();
  }

  /** Same rules as URL input; names are checked again at each delivery, after DNS. */
  checkWebhookUrl(raw: string): void {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new InvalidRequestError('webhook_url must be an absolute http or https URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidRequestError('webhook_url must use http or https');
    try {
      this.deps.policy.assertHostAllowed(url.hostname);
    } catch (err) {
      const refused = findForbiddenAddress(err);
      if (refused) throw new InvalidRequestError(`webhook_url is not allowed: ${REFUSED_ADDRESS_SENTENCE}`, { cause: refused });
      throw err;
    }
  }
}
