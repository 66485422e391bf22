import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { NotFoundError } from '../../errors.js';
import type { JobService } from '../../jobs/job-service.js';
import { WEBHOOK_METHODS } from '../../jobs/webhook-sender.js';
import { MAX_REQUEST_ID_CHARS, wavesErrors } from '../schemas/common.js';
import type { RouteLayout } from './product-names.js';

const Attempt = Type.Object({
  attempt: Type.Integer(),
  at: Type.String({ format: 'date-time' }),
  status_code: Type.Union([Type.Integer(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  duration_ms: Type.Integer(),
});

const Job = Type.Object({
  request_id: Type.String(),
  state: Type.String({ description: 'queued | running | delivering | succeeded | failed' }),
  outcome: Type.Union([Type.Literal('success'), Type.Literal('failed'), Type.Null()], { description: 'transcription outcome, once known' }),
  error: Type.Union([Type.String(), Type.Null()], { description: 'why transcription failed' }),
  result: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], { description: 'the transcription result on success' }),
  webhook_url: Type.String(),
  webhook_method: Type.String({ enum: [...WEBHOOK_METHODS], description: 'The method every delivery attempt uses' }),
  next_attempt_at: Type.Union([Type.String(), Type.Null()]),
  last_error: Type.Union([Type.String(), Type.Null()], { description: 'why the last attempt failed or why delivery gave up' }),
  created_at: Type.String(),
  updated_at: Type.String(),
  finished_at: Type.Union([Type.String(), Type.Null()]),
  attempts: Type.Array(Attempt),
});

const sttErrors = { 401: Type.Ref('SttError'), 404: Type.Ref('SttError'), 429: Type.Ref('SttError'), 500: Type.Ref('SttError') };

/** A job's state and delivery attempts, for its owner only (another account's id answers 404). */
export function jobRoutes(deps: { jobs: JobService; layout?: RouteLayout }) {
  const errors = deps.layout === 'current' ? wavesErrors : sttErrors;
  return async function register(instance: FastifyInstance): Promise<void> {
    const app = instance.withTypeProvider<TypeBoxTypeProvider>();
    app.get('/jobs/:request_id', {
      schema: {
        tags: ['stt'],
        summary: 'State and webhook delivery attempts of an asynchronous transcription',
        params: Type.Object({ request_id: Type.String({ minLength: 1, maxLength: MAX_REQUEST_ID_CHARS }) }),
        response: { 200: Job, ...errors },
      },
      handler: async (request) => {
        const { request_id: requestId } = request.params;
        const job = await deps.jobs.get(request.accountId, requestId);
        if (!job) throw new NotFoundError(`No job with request_id ${requestId}`);
        return {
          request_id: job.requestId,
          state: job.state,
          outcome: job.outcome,
          error: job.error,
          result: job.result,
          webhook_url: job.webhookUrl,
          webhook_method: job.webhookMethod,
          next_attempt_at: job.nextAttemptAt,
          last_error: job.lastError,
          created_at: job.createdAt,
          updated_at: job.updatedAt,
          finished_at: job.finishedAt,
          attempts: job.attempts.map((a) => ({
            attempt: a.attempt,
            at: a.at,
            status_code: a.statusCode,
            error: a.error,
            duration_ms: a.durationMs,
          })),
        };
      },
    });
  };
}
