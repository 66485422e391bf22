import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { ModelGeneration, Voice } from '../../engines/types.js';
import { NotFoundError } from '../../errors.js';
import type { ClonedVoiceRepository, ClonedVoiceRow } from '../../store/cloned-voice-repository.js';
import type { VoiceRegistry } from '../../synthesis/voice-registry.js';
import { speechErrorsOf, VoiceId } from '../schemas/common.js';
import { markDeprecated, productNamesOf, speechRouteNamesFor, type RouteLayout } from './product-names.js';

const VoiceBody = Type.Object({
  voiceId: Type.String(),
  displayName: Type.String(),
  tags: Type.Object({ language: Type.Array(Type.String()), accent: Type.String(), gender: Type.String() }),
  sampleRate: Type.Optional(Type.Integer()),
  engine: Type.Optional(Type.String()),
  age: Type.Optional(Type.String()),
});

const ClonedVoiceBody = Type.Object({
  displayName: Type.String(),
  voiceId: Type.String(),
  accent: Type.String(),
  tags: Type.Array(Type.String()),
  model: Type.String(),
  status: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  description: Type.Optional(Type.String()),
  language: Type.Optional(Type.String()),
  /** Which engine speaks it: espeak-ng-matched (the built-in match) or a zero-shot pack's. */
  engine: Type.Optional(Type.String()),
  /** Why creation failed (status `failed`). */
  error: Type.Optional(Type.String()),
  /** The models (product names) the clone speaks on; empty while it is not usable. */
  modelIds: Type.Array(Type.String()),
  /** The sample's measured voice (src/synthesis/voice-profile.ts). */
  profile: Type.Optional(
    Type.Object({
      medianF0Hz: Type.Number(),
      pitchRangeSemitones: Type.Number(),
      speakingRate: Type.Number(),
      genderClass: Type.String(),
      speechSeconds: Type.Number(),
    }),
  ),
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

/** Clones speak on every generation (the built-in match and zero-shot packs alike). */
const CLONE_MODELS: ModelGeneration[] = ['tts-v3.1', 'tts-v2', 'tts-large'];
const CLONE_MODEL_IDS = CLONE_MODELS.flatMap(productNamesOf);

function cloneToWire(r: ClonedVoiceRow) {
  return {
    displayName: r.display_name,
    voiceId: r.id,
    accent: r.accent,
    tags: JSON.parse(r.tags) as string[],
    model: r.model,
    status: r.status,
    createdAt: r.created_at,
    modelIds: r.status === 'failed' ? [] : CLONE_MODEL_IDS,
    ...(r.description ? { description: r.description } : {}),
    ...(r.language ? { language: r.language } : {}),
    ...(r.engine ? { engine: r.engine } : {}),
    ...(r.status === 'failed' && r.error ? { error: r.error } : {}),
    ...(r.profile ? { profile: JSON.parse(r.profile) as object } : {}),
  };
}

export interface VoiceRouteOptions {
  voices: VoiceRegistry;
  clonedVoices: ClonedVoiceRepository;
  layout?: RouteLayout;
  /** Where a deprecated name's Deprecation Link header points. */
  successorDocsUrl?: string;
}

/**
 * Voices and clones under every name of the route table that serves them; on the current layout
 * also `GET /voice-cloning`, the clone list of the service's newer API (same listing, under `data`).
 */
/** The request that lists a model's voices (tts-large's catalogue voices are tts-v2's). */
export function voiceListRequest(model: string): string {
  return `GET /api/v1/${model === 'tts-large' ? 'tts-v2' : model}/get_voices`;
}

export function voiceRoutes(deps: VoiceRouteOptions) {
  const errors = speechErrorsOf(deps.layout);
  const deprecation = markDeprecated(deps.successorDocsUrl);
  const listClones = async (accountId: string) => (await deps.clonedVoices.listForAccount(accountId)).map(cloneToWire);
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
        handler: async (request) => ({ voices: await listClones(request.accountId) }),
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
        handler: async (request) => {
          const { voiceId } = request.body;
          const deleted = await deps.clonedVoices.deleteForAccount(request.accountId, voiceId);
          // A foreign id answers exactly like an unknown one, so ids of other accounts do not leak.
          if (!deleted) throw new NotFoundError(`No cloned voice ${voiceId}`);
          return { voiceId, success: true };
        },
      });
    }

    if (deps.layout !== 'current') return;
    app.get('/voice-cloning', {
      schema: {
        tags: ['voice-cloning'],
        summary: "List the caller's voice clones with the models each speaks on (modelIds)",
        response: { 200: Type.Object({ message: Type.String(), data: Type.Array(ClonedVoiceBody) }), ...errors },
      },
      handler: async (request) => ({ message: 'Voice clones retrieved successfully', data: await listClones(request.accountId) }),
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
