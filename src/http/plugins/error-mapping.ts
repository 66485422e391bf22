/**
 * The one place where errors become wire bodies. Two route families answer differently:
 * - "speech" (synthesis, voices, dictionaries): `{error: <type>, message: <sentence>}`;
 * - "stt" (transcription and jobs): `{error: <sentence>, request_id}`.
 * Fastify's own errors (validation, bad JSON, body too large, unsupported media type) are first
 * turned into domain errors so both families see one vocabulary. No stack trace leaves here.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  InvalidRequestError,
  MethodNotAllowedError,
  NotFoundError,
  ParleyError,
  PayloadTooLargeError,
  UnsupportedAudioError,
} from '../../errors.js';
import { validationMessage } from './validation-messages.js';

export type RouteFamily = 'speech' | 'stt';

/** The `error` type of the speech family for each status (decisions.md point 4). */
const speechErrorTypes: Record<number, string> = {
  400: 'InvalidRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  408: 'RequestTimeout',
  409: 'Conflict',
  413: 'PayloadTooLarge',
  429: 'TooManyRequests',
  500: 'InternalServerError',
  503: 'ServiceUnavailable',
};

/** Fixed sentences of the stt family (decisions.md point 20); other statuses use the error's message. */
const sttSentences: Record<number, string> = {
  401: 'Unauthorized - Invalid API key',
  429: 'Rate limit exceeded. Please try again later.',
  500: 'Internal server error',
};

/**
 * Point 20's 413 sentence, with the limit in force: "25MB" at the default 25 MiB cap (the spec's
 * MB are binary, as the 25 * 1024 * 1024 default), the configured size when an operator changed it.
 */
export function sttTooLargeSentence(limitBytes: number): string {
  const mb = limitBytes > 0 ? Math.round((limitBytes / 2 ** 20) * 10) / 10 : 25;
  return `File size exceeds maximum limit of ${mb}MB`;
}

/** Turn anything thrown into a ParleyError, or null when it is an unexpected (500) error. */
export function toDomainError(err: unknown, family: RouteFamily): ParleyError | null {
  if (err instanceof ParleyError) return err;
  const fe = err as FastifyError & { validation?: unknown[]; validationContext?: string };
  if (fe && Array.isArray(fe.validation)) return new InvalidRequestError(validationMessage(fe));
  switch (fe?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new PayloadTooLargeError(0, 'Request body is larger than allowed');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return family === 'stt'
        ? new UnsupportedAudioError()
        : new InvalidRequestError('Content-Type must be application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new InvalidRequestError('Request body must be a JSON object');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new InvalidRequestError('Request body is not valid JSON');
  }
  if (fe instanceof SyntaxError || fe?.statusCode === 400) return new InvalidRequestError('Request body is not valid JSON');
  if (fe?.statusCode === 413) return new PayloadTooLargeError(0, 'Request body is larger than allowed');
  return null;
}

export function wireBody(err: ParleyError | null, family: RouteFamily, requestId: string): { status: number; body: object } {
  const status = err?.status ?? 500;
  if (family === 'stt') {
    const sentence =
      err instanceof PayloadTooLargeError ? sttTooLargeSentence(err.limitBytes) : (sttSentences[status] ?? err?.message ?? 'Internal server error');
    return { status, body: { error: sentence, request_id: requestId } };
  }
  const type = speechErrorTypes[status] ?? 'InternalServerError';
  const message = status === 500 ? 'An unexpected error occurred' : (err?.message ?? 'An unexpected error occurred');
  return { status, body: { error: type, message } };
}

export function sendError(request: FastifyRequest, reply: FastifyReply, err: unknown, family: RouteFamily): FastifyReply {
  let domain = toDomainError(err, family);
  // Fastify's own body-limit error does not say the limit; the route does.
  if (domain instanceof PayloadTooLargeError && domain.limitBytes === 0 && request.routeOptions?.bodyLimit) {
    domain = new PayloadTooLargeError(request.routeOptions.bodyLimit, domain.message);
  }
  if (!domain || domain.status >= 500) {
    request.log.error({ err }, 'request failed');
  }
  const { status, body } = wireBody(domain, family, request.id);
  if (domain?.retryAfterSeconds !== undefined) reply.header('Retry-After', String(Math.max(1, Math.ceil(domain.retryAfterSeconds))));
  return reply.code(status).type('application/json; charset=utf-8').send(body);
}

/**
 * Install the error and not-found handlers of a family on an encapsulated plugin.
 * `knownRoutes` lets the not-found handler answer 405 for a path that exists with another method.
 */
export function useErrorMapping(app: FastifyInstance, family: RouteFamily, knownRoutes: KnownRoutes): void {
  app.setErrorHandler((err, request, reply) => sendError(request, reply, err, family));
  app.setNotFoundHandler((request, reply) => {
    const url = request.url.split('?')[0]!;
    const allowed = knownRoutes.methodsFor(url);
    if (allowed.length > 0) {
      reply.header('Allow', allowed.join(', '));
      return sendError(request, reply, new MethodNotAllowedError(`Method ${request.method} is not allowed on ${url}; use ${allowed.join(', ')}`), family);
    }
    return sendError(request, reply, new NotFoundError(`No route ${request.method} ${url}`), family);
  });
}

/** Paths and methods of every registered route, filled by an onRoute hook. */
export class KnownRoutes {
  private readonly routes: { pattern: RegExp; method: string }[] = [];

  add(url: string, methods: string | string[]): void {
    const pattern = new RegExp(
      '^' + url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z_]+/g, '[^/]+') + '/?$',
    );
    for (const m of Array.isArray(methods) ? methods : [methods]) if (m !== 'HEAD') this.routes.push({ pattern, method: m });
  }

  methodsFor(url: string): string[] {
    return [...new Set(this.routes.filter((r) => r.pattern.test(url)).map((r) => r.method))];
  }
}
