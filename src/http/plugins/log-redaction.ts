/**
 * Secrets never reach a log line. Three layers, because a secret can arrive three ways:
 * - the request line: values of credential-like query parameters (`?token=` on a WebSocket
 *   upgrade, a client that put its key in the URL of a REST call) are replaced in the logged URL;
 * - structured fields: pino's redaction removes Authorization and cookie headers and the
 *   credential fields of bodies (a webhook secret, a key) wherever a log call passes them;
 * - anything else: every string of a log call (message, fields, error messages) is scrubbed of
 *   text shaped like a Parley key or a webhook secret, so a key echoed in an error still goes.
 */
import type { FastifyServerOptions } from 'fastify';
import type { IncomingMessage } from 'node:http';
import type { LoggerOptions } from 'pino';

export const REDACTED = '[REDACTED]';

/** Query parameters whose value is a credential, lower-cased. */
const SECRET_PARAMS = new Set(['token', 'key', 'api_key', 'apikey', 'api-key', 'access_token', 'auth', 'authorization', 'secret', 'password', 'signature', 'sig']);

/** A Parley API key (sk_…) or webhook secret (whsec_…) anywhere in a string. */
const SECRET_TEXT = /\b(sk|whsec)_[A-Za-z0-9_\-+/=]{16,}/g;

/** Structured fields removed from every log line (pino paths; `*` is one level). */
const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["sec-websocket-protocol"]',
  'headers.authorization',
  'headers.cookie',
  'body.secret',
  'body.key',
  'body.token',
  'body.password',
  '*.secret',
  '*.apiKey',
  '*.api_key',
  '*.token',
  '*.password',
];

/** `url` with the values of credential-like query parameters replaced. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return scrubText(url);
  const pairs = url.slice(q + 1).split('&').map((pair) => {
    const eq = pair.indexOf('=');
    const name = eq < 0 ? pair : pair.slice(0, eq);
    let decoded = name;
    try {
      decoded = decodeURIComponent(name);
    } catch {
      // A malformed name is logged as sent (its value still goes through scrubText).
    }
    return eq >= 0 && SECRET_PARAMS.has(decoded.toLowerCase()) ? `${name}=${REDACTED}` : pair;
  });
  return scrubText(`${url.slice(0, q)}?${pairs.join('&')}`);
}

export function scrubText(text: string): string {
  return text.includes('_') ? text.replace(SECRET_TEXT, (_m, kind: string) => `${kind}_${REDACTED}`) : text;
}

/** A copy of a log call's argument with secret-shaped text scrubbed (depth-bounded: log fields are shallow). */
function scrub(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return scrubText(value);
  if (value === null || typeof value !== 'object' || depth > 4) return value;
  if (Array.isArray(value)) return value.map((v) => scrub(v, depth + 1));
  if (value instanceof Error) {
    const copy = Object.create(Object.getPrototypeOf(value)) as Error;
    for (const k of Object.getOwnPropertyNames(value)) (copy as any)[k] = scrub((value as any)[k], depth + 1);
    return copy;
  }
  if (Buffer.isBuffer(value) || ArrayBuffer.isView(value)) return value;
  const proto = Object.getPrototypeOf(value);
  // Request/response objects and the like go to their serializers untouched.
  if (proto !== Object.prototype && proto !== null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = scrub(v, depth + 1);
  return out;
}

/** Fastify's request serializer, with the URL's credentials removed. */
function serializeRequest(req: IncomingMessage & { method?: string; url?: string; hostname?: string; ip?: string; socket?: any }) {
  return {
    method: req.method,
    url: redactUrl(req.url ?? ''),
    host: req.hostname,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  };
}

/** The redaction every logger of the server uses (the HTTP logger, the job and cloning loggers). */
export const redactingLoggerOptions: Pick<LoggerOptions, 'redact' | 'hooks'> = {
  redact: { paths: REDACT_PATHS, censor: REDACTED },
  hooks: {
    logMethod(args, method) {
      return method.apply(this, args.map((a) => scrub(a)) as Parameters<typeof method>);
    },
  },
};

/**
 * The server's logger option with redaction added: `true` and option objects get it; `false`
 * stays off. A ready-made logger instance cannot be changed and is refused.
 */
export function redactingLogger(logger: FastifyServerOptions['logger']): FastifyServerOptions['logger'] {
  if (logger === false || logger === undefined) return false;
  const base = logger === true ? {} : (logger as LoggerOptions & { serializers?: Record<string, unknown> });
  return {
    ...base,
    ...redactingLoggerOptions,
    serializers: { ...base.serializers, req: serializeRequest },
  } as unknown as FastifyServerOptions['logger'];
}
