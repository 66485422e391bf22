import type { FastifyReply, FastifyRequest } from 'fastify';
import { KEY_ROLES, type ApiKeyService, type KeyRole } from '../../accounts/api-keys.js';
import { ForbiddenError, UnauthorizedError } from '../../errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hook on every /api/v1 route. */
    accountId: string;
    /** The role of the key the request came with. */
    keyRole: KeyRole;
  }
}

/** Routes only admin keys may call (model reloads and the like). */
const ADMIN_PREFIX = '/api/v1/admin/';

/**
 * onRequest hook: `Authorization: Bearer <key>` → request.accountId, else 401; a user key on an
 * admin route → 403. Decided here by path, so an admin route added later is covered too.
 */
export function bearerAuth(apiKeys: ApiKeyService) {
  return async function authenticate(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    const key = match ? await apiKeys.authenticate(match[1]!) : null;
    if (!key) throw new UnauthorizedError(match ? 'Bearer token is invalid' : 'Bearer token is missing');
    request.accountId = key.accountId;
    request.keyRole = key.role;
    const route = request.routeOptions.url ?? request.url;
    if (route.startsWith(ADMIN_PREFIX) && key.role !== KEY_ROLES.admin) throw new ForbiddenError('This route needs an admin key');
  };
}
