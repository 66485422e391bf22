/**
 * Model pack administration: what is loaded and what was skipped, and a reload that picks up
 * packs dropped into (or removed from) the models dir while the server runs.
 */
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { ModelsReport } from '../../models/installed-models.js';
import { speechErrors } from '../schemas/common.js';

const Report = Type.Object({
  loaded: Type.Array(Type.Object({ id: Type.String(), kind: Type.String(), languages: Type.Array(Type.String()) })),
  skipped: Type.Array(Type.Object({ id: Type.String(), reason: Type.String() })),
  problems: Type.Array(Type.Object({ id: Type.String(), reason: Type.String() })),
  voices: Type.Integer(),
  loadedAt: Type.String({ format: 'date-time' }),
  started: Type.Array(Type.String(), { description: 'Packs this load started (new or changed)' }),
  kept: Type.Array(Type.String(), { description: 'Packs kept running from the previous load, unchanged' }),
});

export function modelRoutes(deps: { report(): ModelsReport; reload(): Promise<ModelsReport> }) {
  return async function register(instance: FastifyInstance): Promise<void> {
    const app = instance.withTypeProvider<TypeBoxTypeProvider>();
    app.get('/admin/models', {
      config: { rateFamily: 'management' },
      schema: { tags: ['admin'], summary: 'Installed model packs: loaded, skipped and why', response: { 200: Report, ...speechErrors } },
      handler: async () => deps.report(),
    });
    app.post('/admin/models/reload', {
      config: { rateFamily: 'management' },
      schema: {
        tags: ['admin'],
        summary: 'Scan the models dir again, verify new or changed packs and swap the engines in',
        response: { 200: Report, ...speechErrors },
      },
      handler: async () => deps.reload(),
    });
  };
}
