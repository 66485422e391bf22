import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { ModelGeneration, Voice } from '../../engines/types.js';
import { NotFoundError } from '../../errors.js';
import type { ClonedVoiceRepository } from '../../store/cloned-voice-repository.js';
import type { VoiceRegistry } from '../../synthesis/voice-registry.js';
import { speechErrorsOf, VoiceId } from '../schemas/common.js';
import { ClonedVoiceBody, cloneNamingOf, cloneToWire, type CloneNaming } from './cloned-voice-wire.js';
import { markDeprecated, speechRouteNamesFor, type RouteLayout } from './product-names.js';

const VoiceBody = Type.Object({
  voiceId: Type.String(),
  displayName: Type.String(),
  tags: Type.Object({ language: Type.Array(Type.String()), accent: Type.String(), gender: Type.String() }),
  sampleRate: Type.Optional(Type.Integer()),
  engine: Type.Optional(Type.String()),
  age: Type.Optional(Type.String()),
});

/** A voice of the service's browse catalogue (`GET /waves/v1/voice/get-all-models`); Parley has no preview clips. */
const CatalogVoiceBody = Type.Object({
  _id: Type.String(),
  voiceId: Type.String(),
  displayName: Type.String(),
  description: Type.String(),
  tags: Type.Object({ age: Type.String(), emotions: Type.Array(Type.String()), language: Type.Array(Type.String()) }),
});

/** Every generation whose voices the catalogue lists, the newest first. */
const CATALOGUE_MODELS: ModelGeneration[] = ['tts-v3.1', 'tts-v2', 'tts-large'];

function toCatalogWire(v: Voice) {
  return {
    _id: v.id,
    voiceId: v.id,
    displayName: v.displayName,
    description: `${v.displayName}: ${v.accent} ${v.gender} voice (${v.engine})`,
    tags: { age: v.age ?? '', emotions: [], language: v.languages },
  };
}

function toWire(v: Voice) {
  return {
    voiceId: v.id,
    displayName: v.displayName,
    tags: { language: v.languages, accent: v.accent, gender: v.gender },
    sampleRate: v.sampleRate,
    engine: v.engine,
    ...(v.age ? { age: v.age } : {}),
  };
}

export interface VoiceRouteOptions {
  voices: VoiceRegistry;
  clonedVoices: ClonedVoiceRepository;
  layout?: RouteLayout;
  /** Where a deprecated name's Deprecation Link header points. */
  successorDocsUrl?: string;
}

/** The request that lists a model's voices (tts-large's catalogue voices are tts-v2's). */
export function voiceListRequest(model: string): string {
  return `GET /api/v1/${model === 'tts-large' ? 'tts-v2' : model}/get_voices`;
}

/**
 * Voices and clones under every name of the route table that serves them; on the current layout
 * also the clone routes of the service's newer API: `GET /voice-cloning` (the same listing, under
 * `data`), `GET /voice-cloning/{id}` and `POST /voice-cloning/delete`.
 */
export function voiceRoutes(deps: VoiceRouteOptions) {
  const errors = speechErrorsOf(deps.layout);
  const deprecation = markDeprecated(deps.successorDocsUrl);
  const listClones = async (accountId: string, naming: CloneNaming) => (await deps.clonedVoices.listForAccount(accountId)).map((row) => cloneToWire(row, naming));
  // A foreign id answers exactly like an unknown one, so ids of other accounts do not leak.
  const noSuchClone = (voiceId: string) => new NotFoundError(`No cloned voice ${voiceId}`);
  const deleteClone = async (accountId: string, voiceId: string) => {
    if (!(await deps.clonedVoices.deleteForAccount(accountId, voiceId))) throw noSuchClone(voiceId);
    return { voiceId, success: true };
  };
  return async function register(instance: FastifyInstance): Promise<void> {
    const app = instance.withTypeProvider<TypeBoxTypeProvider>();
    for (const { path, model, deprecated } of speechRouteNamesFor('get_voices')) {
      app.get(`/${path}/get_voices`, {
        ...(deprecated ? { onRequest: deprecation } : {}),
        schema: {
          tags: [path],
          summary: `List the voices of ${model}`,
          deprecated,
          response: { 200: Type.Object({ voices: Type.Array(VoiceBody) }), ...errors },
        },
        handler: async () => ({ voices: deps.voices.list(model).map(toWire) }),
      });
    }

    for (const { path, deprecated } of speechRouteNamesFor('clones')) {
      app.get(`/${path}/get_cloned_voices`, {
        ...(deprecated ? { onRequest: deprecation } : {}),
        schema: {
          tags: [path],
          summary: "List the caller's cloned voices",
          deprecated,
          response: { 200: Type.Object({ voices: Type.Array(ClonedVoiceBody) }), ...errors },
        },
        handler: async (request) => ({ voices: await listClones(request.accountId, cloneNamingOf(deps.layout, path)) }),
      });

      // Deletes any of the caller's clones, whatever model it was made for (the service does the same).
      app.delete(`/${path}`, {
        ...(deprecated ? { onRequest: deprecation } : {}),
        schema: {
          tags: [path],
          summary: 'Delete a cloned voice',
          body: Type.Object({ voiceId: VoiceId }),
          response: { 200: Type.Object({ voiceId: Type.String(), success: Type.Boolean() }), ...errors },
        },
        handler: (request) => deleteClone(request.accountId, request.body.voiceId),
      });
    }

    if (deps.layout !== 'current') return;
    // The service's clients call these with and without the trailing slash.
    for (const path of ['/voice-cloning', '/voice-cloning/']) {
      app.get(path, {
        schema: {
          tags: ['voice-cloning'],
          summary: "List the caller's voice clones with the models each speaks on (modelIds)",
          response: { 200: Type.Object({ message: Type.String(), data: Type.Array(ClonedVoiceBody) }), ...errors },
        },
        handler: async (request) => ({ message: 'Voice clones retrieved successfully', data: await listClones(request.accountId, 'product') }),
      });
    }
    app.get('/voice-cloning/:id', {
      schema: {
        tags: ['voice-cloning'],
        summary: "One of the caller's voice clones, by its voiceId (or _id, the same)",
        params: Type.Object({ id: VoiceId }),
        response: { 200: Type.Object({ success: Type.Boolean(), data: ClonedVoiceBody }), ...errors },
      },
      handler: async (request) => {
        const row = await deps.clonedVoices.findForAccount(request.accountId, request.params.id);
        if (!row) throw noSuchClone(request.params.id);
        return { success: true, data: cloneToWire(row, 'product') };
      },
    });
    app.post('/voice-cloning/delete', {
      schema: {
        tags: ['voice-cloning'],
        summary: "Delete one of the caller's voice clones (body: voiceId)",
        body: Type.Object({ voiceId: VoiceId }),
        response: { 200: Type.Object({ voiceId: Type.String(), success: Type.Boolean() }), ...errors },
      },
      handler: (request) => deleteClone(request.accountId, request.body.voiceId),
    });

    app.get('/voice/get-all-models', {
      schema: {
        tags: ['voices'],
        summary: 'Browse every voice of every model (use its voiceId with POST /tts)',
        response: { 200: Type.Object({ voices: Type.Array(CatalogVoiceBody) }), ...errors },
      },
      handler: async () => {
        const voices = new Map(CATALOGUE_MODELS.flatMap((model) => deps.voices.list(model)).map((v) => [v.id, v]));
        return { voices: [...voices.values()].map(toCatalogWire) };
      },
    });
  };
}
