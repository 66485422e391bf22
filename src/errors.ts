/**
 * The catalogue of domain errors. Code throws these by name; `src/http/plugins/error-mapping.ts`
 * is the only place that turns them into wire bodies (the two route families differ in shape).
 * `code` is the error type the synthesis family puts in its `error` field, one of the API's
 * fixed set (InvalidRequest, Unauthorized, …); `status` is the HTTP status it maps to.
 */
export abstract class ParleyError extends Error {
  abstract readonly code: SpeechErrorType;
  abstract readonly status: number;
  /** Seconds a client should wait before retrying (429, 503). */
  retryAfterSeconds?: number;
}

/** The error types the synthesis family's bodies use, by HTTP status. */
export const SPEECH_ERROR_TYPES = {
  400: 'InvalidRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  408: 'RequestTimeout',
  409: 'Conflict',
  413: 'PayloadTooLarge',
  429: 'TooManyRequests',
  499: 'ClientClosedRequest',
  500: 'InternalServerError',
  501: 'NotImplemented',
  503: 'ServiceUnavailable',
} as const;
export type SpeechErrorType = (typeof SPEECH_ERROR_TYPES)[keyof typeof SPEECH_ERROR_TYPES];

/** A request the client can fix: bad field, bad enum, unknown dictionary id, unsupported language... */
export class InvalidRequestError extends ParleyError {
  readonly code = 'InvalidRequest';
  readonly status = 400;
}

/**
/**
 * A request that needs a model pack this server does not have (no VAD, no recogniser): only an
 * install fixes it, so it is answered at once and never queued. A 400, not a 503: the clients of
 * every family retry a 5xx (the openai SDKs and the service's Python SDK retry 408, 409, 429 and
 * every 5xx, sleeping through Retry-After), which only delays the answer.
 * `missing` names what is absent and the catalogue pack to install; the message says the command
 * and the admin route that install it.
 */
export class PackNotInstalledError extends InvalidRequestError {
  readonly errorCode = 'PACK_NOT_INSTALLED';
  constructor(
    message: string,
    /** What is missing (the voice activity detector, a speech recogniser) and the catalogue pack that provides it. */
    readonly missing: ReadonlyArray<{ role: 'vad' | 'recognizer'; pack: string | undefined }>,
  ) {
    super(message);
  }
}

/**
 * A language the API takes but no installed recogniser serves, while others are installed: like
 * PackNotInstalledError, answered at once. `pack` is the catalogue pack that serves it, when one
 * does; the current layout's body carries both with error_code LANGUAGE_NOT_INSTALLED.
 */
export class LanguageNotInstalledError extends InvalidRequestError {
  readonly errorCode = 'LANGUAGE_NOT_INSTALLED';
  constructor(
    message: string,
    readonly language?: string,
    readonly pack?: string,
  ) {
    super(message);
  }
}

/** An operation of the service's other products (chat completions, analytics, …) this server does not offer. */
export class NotOfferedError extends ParleyError {
  readonly code = 'NotImplemented';
  readonly status = 501;
}

/** Transcription input that is not decodable audio, or a Content-Type that is not audio/*. */
export class UnsupportedAudioError extends ParleyError {
  readonly code = 'InvalidRequest';
  readonly status = 400;
  constructor(message = 'Invalid file format. Supported formats: audio/*') {
    super(message);
  }
}

/** Transcription input that decodes to more audio than the per-request cap (limits.maxAudioSeconds). */
export class AudioTooLongError extends ParleyError {
  readonly code = 'InvalidRequest';
  readonly status = 400;
  constructor(readonly limitSeconds: number) {
    super(`Audio duration exceeds maximum limit of ${describeSeconds(limitSeconds)}`);
  }
}

/** "2 hours", "90 minutes", "45 seconds": the largest unit that states the limit exactly. */
function describeSeconds(seconds: number): string {
  const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;
  if (seconds >= 3600 && seconds % 3600 === 0) return plural(seconds / 3600, 'hour');
  if (seconds >= 60 && seconds % 60 === 0) return plural(seconds / 60, 'minute');
  return plural(seconds, 'second');
}

/** A URL given as transcription input could not be fetched or is not allowed. */
export class AudioUrlError extends ParleyError {
  readonly code = 'InvalidRequest';
  readonly status = 400;
}

export class UnauthorizedError extends ParleyError {
  readonly code = 'Unauthorized';
  readonly status = 401;
  constructor(message = 'Bearer token is missing or invalid') {
    super(message);
  }
}

/** A valid key that may not do this (a user key on an admin route). */
export class ForbiddenError extends ParleyError {
  readonly code = 'Forbidden';
  readonly status = 403;
}

export class NotFoundError extends ParleyError {
  readonly code = 'NotFound';
  readonly status = 404;
}

export class MethodNotAllowedError extends ParleyError {
  readonly code = 'MethodNotAllowed';
  readonly status = 405;
}

/** The request (its body) did not arrive within the time allowed. */
export class RequestTimeoutError extends ParleyError {
  readonly code = 'RequestTimeout';
  readonly status = 408;
}

/** The request clashes with what exists, e.g. a second job with the same request id. */
export class ConflictError extends ParleyError {
  readonly code = 'Conflict';
  readonly status = 409;
}

export class PayloadTooLargeError extends ParleyError {
  readonly code = 'PayloadTooLarge';
  readonly status = 413;
  constructor(readonly limitBytes: number, message?: string) {
    super(message ?? `Body exceeds the limit of ${limitBytes} bytes`);
  }
}

export class RateLimitedError extends ParleyError {
  readonly code = 'TooManyRequests';
  readonly status = 429;
  constructor(retryAfterSeconds: number) {
    super('Rate limit exceeded. Please try again later.');
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** Every worker is busy and the queue in front of them is full. */
export class OverloadedError extends ParleyError {
  readonly code = 'ServiceUnavailable';
  readonly status = 503;
  constructor(retryAfterSeconds = 1, message = 'Server is busy. Please try again later.') {
    super(message);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/**
 * The inference process serving the request died (a native crash, a kill, a task that overran its
 * deadline and had to be stopped) or is being restarted. Only the tasks on that process get it;
 * retrying shortly is expected to work, except for an input that kills every process it reaches.
 */
export class InferenceUnavailableError extends ParleyError {
  readonly code = 'ServiceUnavailable';
  readonly status = 503;
  constructor(message: string, retryAfterSeconds: number) {
    super(message);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** An engine failed while working on a valid request (model crashed, produced nothing...). */
export class EngineError extends ParleyError {
  readonly code = 'InternalServerError';
  readonly status = 500;
}

/**
 * A voice clone that could not be made (voice_clone_error) or was not ready in time
 * (voice_clone_timeout): a 500 whose message and `error_code` the client sees.
 */
export class VoiceCloneError extends ParleyError {
  readonly code = 'InternalServerError';
  readonly status = 500;
  constructor(readonly errorCode: 'voice_clone_error' | 'voice_clone_timeout', message: string) {
    super(message);
  }
}

/** The work was cancelled because the client went away (never sent to a client). */
export class AbortedError extends ParleyError {
  readonly code = 'ClientClosedRequest';
  readonly status = 499;
  constructor(message = 'Request aborted by the client') {
    super(message);
  }
}

/** A model pack is missing files, has a wrong checksum, or crashed its test load. */
export class ModelPackError extends ParleyError {
  readonly code = 'InternalServerError';
  readonly status = 500;
}
