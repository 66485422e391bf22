import type { FastifyReply, FastifyRequest } from 'fastify';
import { KEY_ROLES, type ApiKeyService, type AuthenticatedKey, type KeyRole } from '../../accounts/api-keys.js';
import type { RateLimit } from '../../config.js';
import { ForbiddenError, RateLimitedError, UnauthorizedError } from '../../errors.js';
import type { RateLimitStore } from '../../store/rate-limits.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hook on every /api/v1 route. */
    accountId: string;
    /** The role of the key the request came with. */
    keyRole: KeyRole;
    /** The id of that key (open sockets are closed when it is revoked). */
    keyId: string;
  }
}

/** A WebSocket subprotocol carrying the API key, as OpenAI's browser clients send it. */
export const KEY_SUBPROTOCOL_PREFIX = 'openai-insecure-api-key.';

/** Routes only admin keys may call (model reloads and the like). */
const ADMIN_PREFIX = '/api/v1/admin/';

/** The per-IP bucket that requests pay when they are not authenticated from the key cache. */
export interface UnauthenticatedLimit {
  store: RateLimitStore;
  limit: RateLimit;
  clock?: () => number;
}

/**
 * The key of `Authorization: Bearer` (or `Token`), or for a WebSocket upgrade without that header
 * `?token=`: browsers cannot set headers on a WebSocket. Less safe (URLs end up in logs and
 * histories), so only upgrades accept it.
 */
function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  const token = keyOfAuthorization(header);
  if (token !== null) return token;
  if (header === undefined && String(request.headers.upgrade).toLowerCase() === 'websocket') {
    const token = (request.query as Record<string, unknown> | undefined)?.token;
    if (typeof token === 'string' && token) return token;
    // OpenAI's browser form: the key as a subprotocol (never chosen as the socket's protocol).
    for (const protocol of String(request.headers['sec-websocket-protocol'] ?? '').split(',')) {
      const name = protocol.trim();
      if (name.startsWith(KEY_SUBPROTOCOL_PREFIX) && name.length > KEY_SUBPROTOCOL_PREFIX.length) return name.slice(KEY_SUBPROTOCOL_PREFIX.length);
    }
  }
  return null;
}

/**
 * The key of an `Authorization: Bearer <key>` header, or of `Authorization: Token <key>` (the
 * scheme some clients of the hosted service send, Bolna's TTS socket among them), or null.
 */
export function keyOfAuthorization(header: string | undefined): string | null {
  const match = typeof header === 'string' ? KEY_SCHEMES.exec(header) : null;
  return match ? match[1]! : null;
}

const KEY_SCHEMES = /^(?:Bearer|Token)\s+(\S+)\s*$/i;

/**
 * The request's Bearer key (its id, account and role), or null. A key remembered by the key cache
 * costs nothing; anything else (a lookup in the database, or a request that will be refused) first
 * takes a token from the client address's bucket, and throws RateLimitedError when there is none.
 */
export function bearerKey(apiKeys: ApiKeyService, unauthenticated?: UnauthenticatedLimit) {
  return async function keyOf(request: FastifyRequest): Promise<AuthenticatedKey | null> {
    const token = bearerToken(request);
    const cached = token === null ? null : apiKeys.cachedKey(token);
    if (cached) return cached;
    if (unauthenticated && unauthenticated.limit.perMinute > 0) {
      const wait = await unauthenticated.store.take(`ip:${request.ip}`, unauthenticated.limit, (unauthenticated.clock ?? Date.now)());
      if (wait > 0) throw new RateLimitedError(wait);
    }
    return token !== null && cached === undefined ? apiKeys.authenticate(token) : null;
  };
}

/**
 * onRequest hook: `Authorization: Bearer <key>` (or `Token <key>`) → request.accountId, else 401 (or 429 from the
 * address's bucket); a user key on an admin route → 403. Decided here by path, so an admin route
 * added later is covered too.
 */
export function bearerAuth(keyOf: (request: FastifyRequest) => Promise<AuthenticatedKey | null>) {
  return async function authenticate(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const key = await keyOf(request);
    if (!key) throw new UnauthorizedError(bearerToken(request) ? 'Bearer token is invalid' : 'Bearer token is missing');
    request.accountId = key.accountId;
    request.keyRole = key.role;
    request.keyId = key.keyId;
    const route = request.routeOptions.url ?? request.url;
    if (route.startsWith(ADMIN_PREFIX) && key.role !== KEY_ROLES.admin) throw new ForbiddenError('This route needs an admin key');
  };
}
