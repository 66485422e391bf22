import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ReadinessReport } from '../../lifecycle.js';

/**
 * /healthz: the process answers. /readyz: database usable and engines loaded (503 if not); the
 * detail (the database's fault, packs and their errors, job counts of every account) only for a
 * caller with an admin key, the bare status for anyone else (load balancers, probes, user keys),
 * with the checks' notes for everyone (first start offline: transcription waits for a pack).
 */
export function healthRoutes(readiness: () => Promise<ReadinessReport>, options: { isAdmin(request: FastifyRequest): Promise<boolean> }) {
  return async function register(app: FastifyInstance): Promise<void> {
    app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
    app.get('/readyz', { schema: { hide: true } }, async (request, reply) => {
      // Without a header there is nothing to look up: probes do not spend the address's auth budget.
      const detail = request.headers.authorization !== undefined && (await options.isAdmin(request));
      const report = await readiness();
      const status = report.ready ? 'ready' : 'not_ready';
      const notes = report.notes.length ? { notes: report.notes } : {};
      return reply.code(report.ready ? 200 : 503).send(detail ? { status, ...notes, ...report.checks } : { status, ...notes });
    });
  };
}
