/** Query parameters of POST /api/v1/stt/get_text (interface.md). */
import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from './common.js';

export const sttLanguages = [
  'it', 'es', 'en', 'pt', 'hi', 'de', 'fr', 'uk', 'ru', 'kn', 'ml', 'pl', 'mr', 'gu', 'cs', 'sk', 'te', 'or',
  'nl', 'bn', 'lv', 'et', 'ro', 'pa', 'fi', 'sv', 'bg', 'ta', 'hu', 'da', 'lt', 'mt', 'multi',
] as const;

// Booleans are the strings true/false only (nothing is coerced: "1" or "yes" is a 400).
const flag = (description: string) => Type.Optional(StringEnum(['true', 'false'], { description }));

export const TranscriptionQuery = Type.Object({
  model: Type.Optional(Type.String({ enum: ['stt'], description: 'Always stt' })),
  language: Type.Optional(Type.String({ enum: [...sttLanguages], description: 'Spoken language; multi detects it' })),
  webhook_url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'Deliver the result here instead' })),
  webhook_extra: Type.Optional(Type.String({ maxLength: 4096, description: 'key:value pairs, comma-separated, echoed in the webhook payload' })),
  word_timestamps: flag('Include word and utterance timestamps'),
  diarize: flag('Label speakers'),
  age_detection: flag('Predict the age group'),
  gender_detection: flag('Predict the gender'),
  emotion_detection: flag('Predict emotion scores'),
  filename: Type.Optional(Type.String({ maxLength: 255, description: 'metadata.filename for raw uploads (or X-Filename header)' })),
});

export type TranscriptionQueryValues = Static<typeof TranscriptionQuery>;
