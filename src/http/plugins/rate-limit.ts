/** The rate-limit hook of a route family: one token per request from the account's bucket. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RateLimit } from '../../config.js';
import { RateLimitedError } from '../../errors.js';
import type { RateLimitStore } from '../../store/rate-limits.js';

/**
 * onRequest hook (after auth): one token per request from the account's bucket of `family`.
 * `charge` takes one the same way for work that is not a request of its own (a WebSocket message).
 */
export function rateLimit(store: RateLimitStore, family: string, limit: RateLimit, clock: () => number = Date.now) {
  async function charge(accountId: string): Promise<void> {
    if (limit.perMinute <= 0) return;
    const wait = await store.take(`${family}:${accountId}`, limit, clock());
    if (wait > 0) throw new RateLimitedError(wait);
  }
  return Object.assign(async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => charge(request.accountId), { charge });
}
