/**
 * The one place where errors become wire bodies. Two route families answer differently:
 * - "speech" (synthesis, voices, dictionaries): `{error: <type>, message: <sentence>}`;
 * - "stt" (transcription and jobs): `{error: <sentence>, request_id}`;
 * - "waves" (every route under /waves/v1, the service's current layout): `{status: "error", error:
 *   <type>, message: <sentence>, request_id}`, the error message of the service's WebSocket, which its
 *   clients also read from REST answers (`message`; the older SDK reads `error` and `message` too).
 * Fastify's own errors (validation, bad JSON, body too large, unsupported media type) are first
 * turned into domain errors so both families see one vocabulary. No stack trace leaves here.
 * Every channel goes through toWireError: a REST reply (sendError), an SSE error event and a
 * WebSocket error message (streamErrorMessage, the same object framed by each).
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  EngineError,
  InvalidRequestError,
  LanguageNotInstalledError,
  MethodNotAllowedError,
  NotFoundError,
  NotOfferedError,
  OverloadedError,
  PackNotInstalledError,
  ParleyError,
  PayloadTooLargeError,
  UnsupportedAudioError,
  VoiceCloneError,
} from '../../errors.js';
import { validationMessage } from './validation-messages.js';

export type RouteFamily = 'speech' | 'stt' | 'waves';

/**
 * The stt family answers these statuses with a fixed sentence whatever the cause (clients match
 * on them); other statuses carry the error's own message.
 */
const sttSentences: Record<number, string> = {
  401: 'Unauthorized - Invalid API key',
  429: 'Rate limit exceeded. Please try again later.',
  500: 'Internal server error',
};

/**
 * The stt family's 413 sentence, with the limit in force: "25MB" at the default 25 MiB cap (the
 * API's MB are binary, as the 25 * 1024 * 1024 default), the configured size when an operator changed it.
 */
export function sttTooLargeSentence(limitBytes: number): string {
  const mb = limitBytes > 0 ? Math.round((limitBytes / 2 ** 20) * 10) / 10 : 25;
  return `File size exceeds maximum limit of ${mb}MB`;
}

const WAVES_UNSUPPORTED_AUDIO =
  'The audio could not be read: send an audio file (WAV, MP3, FLAC, Ogg, WebM, MP4, …) or headerless audio with encoding and sample_rate';

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

export interface WireError {
  status: number;
  body: { status?: 'error'; error: string; message?: string; request_id?: string; error_code?: string; language?: string; pack?: string };
  /** Whole seconds (at least 1) a client should wait before retrying, when the error says so. */
  retryAfter?: number;
  /** The domain error, or null when the cause was unexpected (its detail stays in the log). */
  domain: ParleyError | null;
}

/** What a family answers for `err`: status, body and Retry-After. */
export function toWireError(err: unknown, family: RouteFamily, requestId: string, options: { bodyLimit?: number } = {}): WireError {
  let domain = toDomainError(err, family);
  // Fastify's own body-limit error does not say the limit; the route does.
  if (domain instanceof PayloadTooLargeError && domain.limitBytes === 0 && options.bodyLimit) {
    domain = new PayloadTooLargeError(options.bodyLimit, domain.message);
  }
  const retryAfter = domain?.retryAfterSeconds === undefined ? undefined : Math.max(1, Math.ceil(domain.retryAfterSeconds));
  return { status: domain?.status ?? 500, body: wireBody(domain, family, requestId), ...(retryAfter === undefined ? {} : { retryAfter }), domain };
}

function wireBody(err: ParleyError | null, family: RouteFamily, requestId: string): WireError['body'] {
  const known = err ?? new EngineError('unexpected');
  if (family === 'stt') {
    const sentence =
      known instanceof PayloadTooLargeError ? sttTooLargeSentence(known.limitBytes) : (sttSentences[known.status] ?? known.message);
    return { error: sentence, request_id: requestId };
  }
  if (family === 'waves') {
    // A failed voice clone's 500 says why, with the service's error_code for it; a missing pack says which (PACK_NOT_INSTALLED).
    if (known instanceof VoiceCloneError) return { status: 'error', error: known.code, message: known.message, request_id: requestId, error_code: known.errorCode };
    if (known instanceof PackNotInstalledError) {
      const packs = known.missing.flatMap((m) => (m.pack ? [m.pack] : []));
      return { status: 'error', error: known.code, message: known.message, request_id: requestId, error_code: known.errorCode, ...(packs.length > 0 && { pack: packs.join(' ') }) };
    }
    // Like the service's LANGUAGE_NOT_ENABLED_IN_REGION: the code and the language, so a client can tell it from a bad value; here also the pack that serves it.
    if (known instanceof LanguageNotInstalledError) {
      return {
        status: 'error',
        error: known.code,
        message: known.message,
        request_id: requestId,
        error_code: known.errorCode,
        ...(known.language !== undefined && { language: known.language }),
        ...(known.pack !== undefined && { pack: known.pack }),
      };
    }
    // On this layout audio of any Content-Type is read, so the legacy "audio/*" sentence would mislead.
    const message =
      known.status === 500
        ? 'An unexpected error occurred'
        : known instanceof UnsupportedAudioError && known.message === new UnsupportedAudioError().message
          ? WAVES_UNSUPPORTED_AUDIO
          : known.message;
    return { status: 'error', error: known.code, message, request_id: requestId };
  }
  const message = known.status === 500 && !(known instanceof VoiceCloneError) ? 'An unexpected error occurred' : known.message;
  return { error: known.code, message };
}

/**
 * The error message of a stream whose status line is already sent (an SSE `error` event's data,
 * a WebSocket error message): the REST body plus the status and request id it would have carried.
 */
export function streamErrorMessage(wire: WireError, requestId: string): Record<string, unknown> {
  return { ...wire.body, status: String(wire.status), request_id: requestId, ...(wire.retryAfter === undefined ? {} : { retry_after: wire.retryAfter }) };
}

/** Log an error the way every channel does: 5xx and unexpected ones as errors, the rest as info. */
export function logWireError(log: FastifyRequest['log'], wire: WireError, err: unknown, msg: string): void {
  if (wire.status >= 500) logFailure(log, err, wire.domain, msg);
  else log.info({ reason: wire.domain?.message, ...refusalDetail(wire.domain) }, msg);
}

/**
 * A 5xx: an error with its stack, except a refusal for load (those come fastest exactly when the
 * server is busiest, so they are counted by metrics and admission's summary) and a route this
 * server does not offer (the client's doing, not a failure): both only debug-logged here.
 */
export function logFailure(log: FastifyRequest['log'], err: unknown, domain: ParleyError | null, msg: string): void {
  if (domain instanceof OverloadedError) log.debug({ reason: domain.message }, 'refused for load');
  else if (domain instanceof NotOfferedError) log.debug({ reason: domain.message }, 'not offered');
  else log.error({ err }, msg);
}

/**
 * What the operator's log adds to a refusal the client reads in general terms (an address refused
 * for a URL: what its name resolved to): the message of the error's cause.
 */
export function refusalDetail(domain: ParleyError | null): { detail?: string } {
  const cause = domain?.cause;
  return cause instanceof Error ? { detail: cause.message } : {};
}

export function sendError(request: FastifyRequest, reply: FastifyReply, err: unknown, family: RouteFamily): FastifyReply {
  const wire = toWireError(err, family, request.id, { bodyLimit: request.routeOptions?.bodyLimit });
  if (wire.status >= 500) logFailure(request.log, err, wire.domain, 'request failed');
  else if (wire.domain?.cause instanceof Error) request.log.info({ reason: wire.domain.message, ...refusalDetail(wire.domain) }, 'request refused');
  if (wire.retryAfter !== undefined) reply.header('Retry-After', String(wire.retryAfter));
  return reply.code(wire.status).type('application/json; charset=utf-8').send(wire.body);
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
    // `:name` is one path segment, a trailing `*` (a wildcard route) any rest.
    const pattern = new RegExp(
      '^' + url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z_]+/g, '[^/]+').replace(/\\\*$/, '.*') + '/?$',
    );
    for (const m of Array.isArray(methods) ? methods : [methods]) if (m !== 'HEAD') this.routes.push({ pattern, method: m });
  }

  methodsFor(url: string): string[] {
    return [...new Set(this.routes.filter((r) => r.pattern.test(url)).map((r) => r.method))];
  }
}
