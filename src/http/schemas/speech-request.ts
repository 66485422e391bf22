/**
 * The speech request body per model (interface.md "Speech request").
 * Ranges and enums live here so a 400 names the field and the rule.
 */
import { Type, type Static } from '@sinclair/typebox';
import { outputFormats } from '../../audio/pcm.js';
import type { ModelGeneration } from '../../engines/types.js';
import { modelLanguages } from '../../synthesis/languages.js';
import { DictId, MAX_VOICE_ID_CHARS, StringEnum } from './common.js';

export function speechRequestSchema(model: ModelGeneration, maxTextChars: number) {
  const sampleRate =
    model === 'tts-v3.1'
      ? Type.Integer({ enum: [8000, 16000, 24000, 44100], default: 44100, description: 'Output rate in Hz' })
      : Type.Integer({ minimum: 8000, maximum: 24000, default: 24000, description: 'Output rate in Hz' });
  return Type.Object(
    {
      text: Type.String({
        minLength: 1,
        maxLength: maxTextChars,
        pattern: '\\S',
        description: 'must not be empty or only whitespace',
      }),
      voice_id: Type.String({ minLength: 1, maxLength: MAX_VOICE_ID_CHARS, description: 'Voice identifier (see get_voices)' }),
      sample_rate: sampleRate,
      speed: Type.Number({ minimum: 0.5, maximum: 2, default: 1 }),
      // tts-v3.1 accepts and ignores these: clients migrating from tts-v2 send them.
      consistency: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
      similarity: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
      enhancement: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
      language: Type.String({ enum: ['auto', ...modelLanguages[model]], default: 'auto' }),
      output_format: StringEnum(outputFormats, { default: 'pcm' }),
      pronunciation_dicts: Type.Optional(Type.Array(DictId, { maxItems: 100 })),
      add_wav_header: Type.Optional(Type.Boolean({ description: 'Legacy: false returns raw PCM from get_speech' })),
    },
    { required: ['text', 'voice_id'] },
  );
}

/** The body after validation: defaults filled in, so only the optional fields may be missing. */
export type SpeechBody = Static<ReturnType<typeof speechRequestSchema>>;
