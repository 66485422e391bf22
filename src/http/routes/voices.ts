import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { ModelGeneration, Voice } from '../../engines/types.js';
import { NotFoundError } from '../../errors.js';
import type { ClonedVoiceRepository } from '../../store/cloned-voice-repository.js';
import type { VoiceRegistry } from '../../synthesis/voice-registry.js';
import { speechErrors, VoiceId } from '../schemas/common.js';

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

export function voiceRoutes(deps: { voices: VoiceRegistry; clonedVoices: ClonedVoiceRepository }) {
  return async function register(instance: FastifyInstance): Promise<void> {
    const app = instance.withTypeProvider<TypeBoxTypeProvider>();
    for (const model of ['tts-v2', 'tts-v3.1'] as ModelGeneration[]) {
      app.get(`/${model}/get_voices`, {
        schema: {
          tags: [model],
          summary: `List the voices of ${model}`,
          response: { 200: Type.Object({ voices: Type.Array(VoiceBody) }), ...speechErrors },
        },
        handler: async () => ({ voices: deps.voices.list(model).map(toWire) }),
      });
    }

    app.get('/tts-large/get_cloned_voices', {
      schema: {
        tags: ['tts-large'],
        summary: "List the caller's cloned voices",
        response: { 200: Type.Object({ voices: Type.Array(ClonedVoiceBody) }), ...speechErrors },
      },
      handler: async (request) => {
        const rows = await deps.clonedVoices.listForAccount(request.accountId);
        return {
          voices: rows.map((r) => ({
            displayName: r.display_name,
            voiceId: r.id,
            accent: r.accent,
            tags: JSON.parse(r.tags) as string[],
            model: r.model,
            status: r.status,
            createdAt: r.created_at,
            ...(r.description ? { description: r.description } : {}),
            ...(r.language ? { language: r.language } : {}),
            ...(r.engine ? { engine: r.engine } : {}),
            ...(r.status === 'failed' && r.error ? { error: r.error } : {}),
            ...(r.profile ? { profile: JSON.parse(r.profile) as object } : {}),
          })),
        };
      },
    });

    app.delete('/tts-large', {
      schema: {
        tags: ['tts-large'],
        summary: 'Delete a cloned voice',
        body: Type.Object({ voiceId: VoiceId }),
        response: { 200: Type.Object({ voiceId: Type.String(), success: Type.Boolean() }), ...speechErrors },
      },
      handler: async (request) => {
        const { voiceId } = request.body;
        const deleted = await deps.clonedVoices.deleteForAccount(request.accountId, voiceId);
        // A foreign id answers exactly like an unknown one, so ids of other accounts do not leak.
        if (!deleted) throw new NotFoundError(`No cloned voice ${voiceId}`);
        return { voiceId, success: true };
      },
    });
  };
}
