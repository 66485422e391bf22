import { Type, type Static } from '@sinclair/typebox';
import { modelLanguages } from '../../synthesis/languages.js';

/** The text fields of POST /{tts-large|tts-v3.1}/add_voice (multipart); `file` is the sample. */
export const AddVoiceFields = Type.Object(
  {
    displayName: Type.String({ minLength: 1, maxLength: 500 }),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    accent: Type.Optional(Type.String({ maxLength: 100 })),
    /** Comma-separated. */
    tags: Type.Optional(Type.String({ maxLength: 1000 })),
    /** What the clone speaks; the built-in match needs an eSpeak language, i.e. one of tts-v2's. */
    language: Type.Optional(Type.Union(modelLanguages['tts-v2'].map((l) => Type.Literal(l)))),
    /** What the sample says (a zero-shot pack conditions on it); else Parley transcribes the sample. */
    transcript: Type.Optional(Type.String({ maxLength: 5000 })),
  },
  { additionalProperties: false },
);
export type AddVoiceFieldValues = Static<typeof AddVoiceFields>;

export const AddVoiceResponse = Type.Object({
  message: Type.String(),
  data: Type.Object({
    voiceId: Type.String(),
    displayName: Type.String(),
    model: Type.String(),
    /** processing | completed | failed */
    status: Type.String(),
    language: Type.String(),
    createdAt: Type.String({ format: 'date-time' }),
  }),
});
