import type { FastifyInstance } from 'fastify';

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, unknown>;
}
export type ReadinessCheck = () => Promise<ReadinessReport>;

/** /healthz: the process answers. /readyz: database reachable and engines loaded (503 if not). */
export function healthRoutes(readiness: ReadinessCheck) {
  return async function register(app: FastifyInstance): Promise<void> {
    app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
    app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
      const report = await readiness();
      return reply.code(report.ready ? 200 : 503).send({ status: report.ready ? 'ready' : 'not_ready', ...report.checks });
    });
  };
}
