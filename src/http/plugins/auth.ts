import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiKeyService } from '../../accounts/api-keys.js';
import { UnauthorizedError } from '../../errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hook on every /api/v1 route. */
    accountId: string;
  }
}

/** onRequest hook: `Authorization: Bearer <key>` → request.accountId, else 401. */
export function bearerAuth(apiKeys: ApiKeyService) {
  return async function authenticate(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    const accountId = match ? await apiKeys.authenticate(match[1]!) : null;
    if (!accountId) throw new UnauthorizedError(match ? 'Bearer token is invalid' : 'Bearer token is missing');
    request.accountId = accountId;
  };
}
