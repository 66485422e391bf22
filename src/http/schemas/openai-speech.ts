/** Body of POST /v1/audio/speech (OpenAI's speech API); ranges and enums here so a 400 names the field. */
import { Type, type Static } from '@sinclair/typebox';
import { streamFormats, type StreamFormat } from '../../audio/stream-encode.js';
import { MAX_VOICE_ID_CHARS } from './common.js';

/** OpenAI's bounds on speed; Parley's voices speak 0.5-2 themselves, and the rest is time-stretched. */
export const OPENAI_MIN_SPEED = 0.25;
export const OPENAI_MAX_SPEED = 4;
const MAX_MODEL_ID_CHARS = 256;
const MAX_INSTRUCTIONS_CHARS = 4096;

const VoiceName = Type.String({ minLength: 1, maxLength: MAX_VOICE_ID_CHARS });

export function openAiSpeechSchema(maxTextChars: number) {
  return Type.Object(
    {
      model: Type.String({ minLength: 1, maxLength: MAX_MODEL_ID_CHARS, description: 'tts-1, tts-1-hd, gpt-4o-mini-tts, a generation (tts-v2...) or a pack id' }),
      input: Type.String({ minLength: 1, maxLength: maxTextChars, pattern: '\\S', description: 'must not be empty or only whitespace' }),
      voice: Type.Union([VoiceName, Type.Object({ id: VoiceName })], { description: "An OpenAI voice name (alloy, nova...) or a Parley voice id" }),
      // Enums as strings (not unions of literals) so that a 400 lists the allowed values.
      response_format: Type.Unsafe<StreamFormat>(Type.String({ enum: [...streamFormats], default: 'mp3' })),
      speed: Type.Number({ minimum: OPENAI_MIN_SPEED, maximum: OPENAI_MAX_SPEED, default: 1 }),
      instructions: Type.Optional(Type.String({ maxLength: MAX_INSTRUCTIONS_CHARS, description: 'Accepted and ignored' })),
      stream_format: Type.Unsafe<'audio' | 'sse'>(Type.String({ enum: ['audio', 'sse'], default: 'audio' })),
    },
    { required: ['model', 'input', 'voice'] },
  );
}

export type OpenAiSpeechBody = Static<ReturnType<typeof openAiSpeechSchema>>;
