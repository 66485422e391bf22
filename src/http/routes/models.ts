/**
 * Model pack administration: what is loaded and what was skipped, and a reload that picks up
 * packs dropped into (or removed from) the models dir while the server runs; with a PackAdmin,
 * also install (progress as Server-Sent Events), verify and remove, each followed by a reload.
 */
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { ConflictError, InvalidRequestError, NotFoundError } from '../../errors.js';
import type { ModelsReport } from '../../models/installed-models.js';
import { PackRequestError, type PackAdmin } from '../../models/pack-admin.js';
import { PullError } from '../../models/pull.js';
import { pipeToSse, sseEvent, type SseEvent } from '../plugins/sse.js';
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
const PackParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9][A-Za-z0-9._+-]*$' }) });
const Check = Type.Object({ id: Type.String(), usable: Type.Boolean(), reason: Type.Optional(Type.String()) });

/** Progress events at most this often: a fast local download would otherwise send one per network read. */
const PROGRESS_EVERY_MS = 100;

export interface ModelAdminDeps {
  report(): ModelsReport;
  reload(): Promise<ModelsReport>;
  /** Install, verify and remove (absent: those routes are not offered). */
  packs?: PackAdmin;
  writeStallTimeoutMs?: number;
}

/** A pack request's refusal as the HTTP error it is. */
function httpError(err: unknown): unknown {
  if (err instanceof PackRequestError) {
    if (err.kind === 'not_found') return new NotFoundError(err.message);
    if (err.kind === 'conflict') return new ConflictError(err.message);
    return new InvalidRequestError(err.message);
  }
  if (err instanceof PullError) return new InvalidRequestError(err.message);
  return err;
}

export function modelRoutes(deps: ModelAdminDeps) {
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
    const { packs } = deps;
    if (!packs) return;

    app.post('/admin/models/:id/install', {
      config: { rateFamily: 'management' },
      schema: {
        tags: ['admin'],
        summary:
          'Download a catalogue pack, check it, unpack it, test-load it and reload: Server-Sent Events `progress` {received, total}, then `installed` {id, usable, reason, bytes, sha256, loaded} or `error` {message}',
        params: PackParams,
        produces: ['text/event-stream'],
        response: speechErrors,
      },
      handler: async (request, reply) => {
        const { id } = request.params;
        // Refusals (unknown, installed, another install running) are plain 4xx before the stream opens.
        try {
          packs.installable(id);
        } catch (err) {
          throw httpError(err);
        }
        const install = async function* (): AsyncGenerator<SseEvent> {
          const pending: SseEvent[] = [];
          let wake: (() => void) | undefined;
          let last = 0;
          const progress = (received: number, total: number | undefined) => {
            const now = Date.now();
            if (now - last < PROGRESS_EVERY_MS && received !== total) return;
            last = now;
            pending.push(sseEvent('progress', { received, total: total ?? null }));
            wake?.();
          };
          let outcome: { installed: SseEvent } | { failed: unknown } | undefined;
          packs
            .install(id, progress, request.clientGone)
            .then(async (installed) => {
              const report = await deps.reload();
              return sseEvent('installed', { ...installed, loaded: report.loaded.some((p) => p.id === id) });
            })
            .then(
              (installed) => (outcome = { installed }),
              (failed: unknown) => (outcome = { failed }),
            )
            .finally(() => wake?.());
          for (;;) {
            while (pending.length) yield pending.shift()!;
            if (outcome) break;
            await new Promise<void>((resolve) => (wake = resolve));
            wake = undefined;
          }
          if ('failed' in outcome) throw outcome.failed;
          yield outcome.installed;
        };
        await pipeToSse(request, reply, install(), {
          headersFirst: true,
          stallTimeoutMs: deps.writeStallTimeoutMs,
          what: `install of ${id}`,
          events: (e) => [e],
          end: () => [],
          error: (err) => {
            request.log.warn({ err, id }, 'pack install failed');
            return sseEvent('error', { message: err instanceof Error ? err.message : String(err) });
          },
        });
      },
    });
    app.post('/admin/models/:id/verify', {
      config: { rateFamily: 'management' },
      schema: { tags: ['admin'], summary: 'Test-load an installed pack now, in a child process', params: PackParams, response: { 200: Check, ...speechErrors } },
      handler: async (request) => packs.verify(request.params.id).catch((err) => Promise.reject(httpError(err))),
    });
    app.delete('/admin/models/:id', {
      config: { rateFamily: 'management' },
      schema: {
        tags: ['admin'],
        summary: 'Remove an installed pack (a symlinked pack: only the link), then reload',
        params: PackParams,
        response: { 200: Type.Object({ id: Type.String(), removed: Type.Boolean(), linkOnly: Type.Boolean(), report: Report }), ...speechErrors },
      },
      handler: async (request) => {
        const { id } = request.params;
        const { linkOnly } = await packs.remove(id).catch((err) => Promise.reject(httpError(err)));
        return { id, removed: true, linkOnly, report: await deps.reload() };
      },
    });
  };
}
