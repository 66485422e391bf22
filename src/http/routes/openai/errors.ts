/**
 * Errors of the /v1 family in OpenAI's shape, `{"error": {"message", "type", "param", "code"}}`,
 * with the statuses OpenAI's SDKs turn into their error classes (400 BadRequestError, 401
 * AuthenticationError, 404 NotFoundError, 429 RateLimitError...). Domain errors are the same
 * as everywhere else (toDomainError); only the body differs.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { InvalidRequestError, MethodNotAllowedError, NotFoundError, PackNotInstalledError, PayloadTooLargeError, type ParleyError } from '../../../errors.js';
import { logFailure, toDomainError, type KnownRoutes } from '../../plugins/error-mapping.js';
import { validationField } from '../../plugins/validation-messages.js';

/** A 400 about one request field: OpenAI's `param` names it. */
export class ParamError extends InvalidRequestError {
  constructor(
    message: string,
    readonly param: string,
    readonly errorCode: string | null = null,
  ) {
    super(message);
  }
}

const types: Record<number, { type: string; code: string | null }> = {
  400: { type: 'invalid_request_error', code: null },
  401: { type: 'invalid_request_error', code: 'invalid_api_key' },
  403: { type: 'invalid_request_error', code: 'insufficient_permissions' },
  404: { type: 'invalid_request_error', code: 'not_found' },
  405: { type: 'invalid_request_error', code: 'method_not_allowed' },
  408: { type: 'invalid_request_error', code: 'timeout' },
  409: { type: 'invalid_request_error', code: 'conflict' },
  413: { type: 'invalid_request_error', code: 'payload_too_large' },
  429: { type: 'requests', code: 'rate_limit_exceeded' },
  500: { type: 'server_error', code: null },
  503: { type: 'server_error', code: 'service_unavailable' },
};

export interface OpenAiErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export function openAiErrorBody(err: ParleyError | null, param: string | null = null): { status: number; body: OpenAiErrorBody } {
  const status = err?.status ?? 500;
  const kind = types[status] ?? types[500]!;
  const message = status >= 500 && !err?.retryAfterSeconds ? 'The server had an error while processing your request.' : (err?.message ?? 'The server had an error while processing your request.');
  const code = err instanceof ParamError && err.errorCode ? err.errorCode : err instanceof PackNotInstalledError ? 'pack_not_installed' : kind.code;
  return { status, body: { error: { message, type: kind.type, param: err instanceof ParamError ? err.param : param, code } } };
}

/** The body each /v1 POST route takes, for the 400 of a Content-Type it does not. */
function expectedBody(url: string): string {
  return url.startsWith('/v1/audio/transcriptions') || url.startsWith('/v1/audio/translations') ? 'multipart/form-data' : 'application/json';
}

export function sendOpenAiError(request: FastifyRequest, reply: FastifyReply, err: unknown): FastifyReply {
  let domain = toDomainError(err, 'speech');
  if ((err as FastifyError)?.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    domain = new InvalidRequestError(`Content-Type ${request.headers['content-type'] ?? '(none)'} is not accepted here: send ${expectedBody(request.url)}`);
  }
  if (domain instanceof PayloadTooLargeError && domain.limitBytes === 0 && request.routeOptions?.bodyLimit) {
    domain = new PayloadTooLargeError(request.routeOptions.bodyLimit, `Request body is larger than the limit of ${request.routeOptions.bodyLimit} bytes`);
  }
  if (!domain || domain.status >= 500) logFailure(request.log, err, domain, 'request failed');
  const fe = err as FastifyError & { validation?: unknown[]; validationContext?: string };
  const param = Array.isArray(fe?.validation) ? validationField(fe) : null;
  const { status, body } = openAiErrorBody(domain, param);
  if (domain?.retryAfterSeconds !== undefined) reply.header('Retry-After', String(Math.max(1, Math.ceil(domain.retryAfterSeconds))));
  return reply.code(status).type('application/json; charset=utf-8').send(body);
}

/** The /v1 family's error and not-found handlers (405 with Allow for a known path and another method). */
export function useOpenAiErrors(app: FastifyInstance, knownRoutes: KnownRoutes): void {
  app.setErrorHandler((err, request, reply) => sendOpenAiError(request, reply, err));
  app.setNotFoundHandler((request, reply) => {
    const url = request.url.split('?')[0]!;
    const allowed = knownRoutes.methodsFor(url);
    if (allowed.length > 0) {
      reply.header('Allow', allowed.join(', '));
      return sendOpenAiError(request, reply, new MethodNotAllowedError(`Method ${request.method} is not allowed on ${url}; use ${allowed.join(', ')}`));
    }
    return sendOpenAiError(request, reply, new NotFoundError(`No route ${request.method} ${url}`));
  });
}
