/** Answers of GET /v1/models, /v1/models/{id}, /v1/audio/voices and /v1/packs. */
import { Type, type Static } from '@sinclair/typebox';

export const OpenAiModel = Type.Object({
  id: Type.String(),
  object: Type.Literal('model'),
  created: Type.Integer({ description: 'Unix seconds: when the packs were loaded' }),
  owned_by: Type.String(),
  parley: Type.Object({
    kind: Type.String({ description: 'alias, generation, or the pack kind (tts-vits, asr-online-transducer...)' }),
    task: Type.String({ enum: ['speech', 'transcription', 'other'] }),
    alias_of: Type.Optional(Type.String()),
    languages: Type.Array(Type.String()),
  }),
});
export type OpenAiModelBody = Static<typeof OpenAiModel>;

export const OpenAiModelList = Type.Object({ object: Type.Literal('list'), data: Type.Array(OpenAiModel) });

export const ModelIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 256 }) });

export const VoicesQuery = Type.Object({
  model: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'Voices of this model (alias, generation or pack); default: tts-1' })),
});

/** `voices` of {id, name, …}: the shape chat UIs (Open WebUI) read from OpenAI-compatible servers. */
export const OpenAiVoiceList = Type.Object({
  model: Type.String(),
  voices: Type.Array(
    Type.Object({
      id: Type.String(),
      name: Type.String(),
      languages: Type.Array(Type.String()),
      gender: Type.String(),
      accent: Type.String(),
      engine: Type.String(),
      sample_rate: Type.Integer(),
      /** OpenAI voice names that speak with this voice for this model. */
      aliases: Type.Array(Type.String()),
    }),
  ),
});

/** GET /v1/audio/models, as Open WebUI reads it: the speech models' ids. */
export const SpeechModelList = Type.Object({ models: Type.Array(Type.Object({ id: Type.String() })) });

export const PackList = Type.Object({
  installed: Type.Array(Type.Object({ id: Type.String(), kind: Type.String(), state: Type.String({ enum: ['loaded', 'skipped'] }), languages: Type.Array(Type.String()), reason: Type.Optional(Type.String()) })),
  available: Type.Array(Type.Object({ id: Type.String(), kind: Type.String(), description: Type.String(), languages: Type.Array(Type.String()), size: Type.Union([Type.Integer(), Type.Null()]), licence: Type.String() })),
  transcription: Type.Object(
    {
      missing: Type.Array(
        Type.Object({ role: Type.String({ enum: ['vad', 'recognizer'] }), pack: Type.Union([Type.String(), Type.Null()], { description: 'the catalogue pack that provides it' }) }),
      ),
      message: Type.Optional(Type.String({ description: 'what a transcription request is answered while something is missing' })),
    },
    { description: 'What transcription lacks (in English, the default language) and the packs to install' },
  ),
});
