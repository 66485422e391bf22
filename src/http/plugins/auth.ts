import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiKeyService } from '../../accounts/api-keys.js';
import type { RateLimit } from '../../config.js';
import { RateLimitedError, UnauthorizedError } from '../../errors.js';
import type { RateLimitStore } from './rate-limit.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hook on every /api/v1 route. */
    accountId: string;
  }
}

/** The per-IP bucket that requests pay when they are not authenticated from the key cache. */
export interface UnauthenticatedLimit {
  store: RateLimitStore;
  limit: RateLimit;
  clock?: () => number;
}

function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match ? match[1]! : null;
}

/**
 * The account of the request's Bearer key, or null. A key remembered by the key cache costs
 * nothing; anything else (a lookup in the database, or a request that will be refused) first takes
 * a token from the client address's bucket, and throws RateLimitedError when there is none.
 */
export function bearerAccount(apiKeys: ApiKeyService, unauthenticated?: UnauthenticatedLimit) {
  return async function accountOf(request: FastifyRequest): Promise<string | null> {
    const key = bearerToken(request);
    const cached = key === null ? null : apiKeys.cachedAccount(key);
    if (cached) return cached;
    if (unauthenticated && unauthenticated.limit.perMinute > 0) {
      const wait = unauthenticated.store.take(`ip:${request.ip}`, unauthenticated.limit, (unauthenticated.clock ?? Date.now)());
      if (wait > 0) throw new RateLimitedError(wait);
    }
    return key !== null && cached === undefined ? apiKeys.authenticate(key) : null;
  };
}

/** onRequest hook: `Authorization: Bearer <key>` → request.accountId, else 401 (or 429 from the address's bucket). */
export function bearerAuth(accountOf: (request: FastifyRequest) => Promise<string | null>) {
  return async function authenticate(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const accountId = await accountOf(request);
    if (!accountId) throw new UnauthorizedError(bearerToken(request) ? 'Bearer token is invalid' : 'Bearer token is missing');
    request.accountId = accountId;
  };
}
