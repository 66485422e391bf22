/**
 * The speech request body per model: the fields each speech model accepts, with their bounds.
 * Ranges and enums live here so a 400 names the field and the rule.
 */
import { Type, type Static } from '@sinclair/typebox';
import { outputFormats } from '../../audio/pcm.js';
import type { ModelGeneration } from '../../engines/types.js';
import { modelLanguages, productModelLanguages, type ProductSpeechModel } from '../../synthesis/languages.js';
import { DictId, MAX_VOICE_ID_CHARS, StringEnum } from './common.js';

/**
 * `product`: the service's product model the route or body names (lightning_v3.1, …), whose
 * languages these are; its `language` has no default, as an omitted one means something of its own.
 */
export function speechRequestSchema(model: ModelGeneration, maxTextChars: number, product?: ProductSpeechModel) {
  const languages = ['auto', ...(product ? productModelLanguages[product] : modelLanguages[model])];
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
      language: Type.Optional(Type.String(product ? { enum: languages } : { enum: languages, default: 'auto' })),
      output_format: StringEnum(outputFormats, { default: 'pcm' }),
      pronunciation_dicts: Type.Optional(Type.Array(DictId, { maxItems: 100 })),
      add_wav_header: Type.Optional(Type.Boolean({ description: 'Legacy: false returns raw PCM from get_speech' })),
    },
    { required: ['text', 'voice_id'] },
  );
}

/** The body after validation: defaults filled in, so only the optional fields may be missing. */
export type SpeechBody = Static<ReturnType<typeof speechRequestSchema>>;

/** `output_format` values of the current layout: Parley's formats, and `ulaw` as the service spells mu-law. */
export const currentOutputFormats = [...outputFormats, 'ulaw'] as const;

/**
 * The body of `POST /waves/v1/tts` and `/waves/v1/tts/live`: the model is a body field (any spelling
 * clients send), so the ranges here are those of every model together; the chosen model's own rules
 * (speechRequestSchema) are checked once it is known.
 */
export function currentSpeechRequestSchema(maxTextChars: number, modelValues: readonly string[], defaultModel: string) {
  const languages = [...new Set([...Object.values(modelLanguages), ...Object.values(productModelLanguages)].flat())];
  return Type.Object(
    {
      text: Type.String({ minLength: 1, maxLength: maxTextChars, pattern: '\\S', description: 'must not be empty or only whitespace' }),
      voice_id: Type.String({ minLength: 1, maxLength: MAX_VOICE_ID_CHARS, description: 'Voice identifier (see get_voices)' }),
      model: Type.String({ enum: [...modelValues], default: defaultModel, description: 'Synthesis model, as the service spells it' }),
      sample_rate: Type.Optional(Type.Integer({ minimum: 8000, maximum: 44100, description: "Output rate in Hz (default: the model's)" })),
      speed: Type.Number({ minimum: 0.5, maximum: 2, default: 1 }),
      consistency: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
      similarity: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
      enhancement: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
      language: Type.Optional(Type.String({ enum: ['auto', ...languages], description: "Default: the model's (en + hi on lightning_v3.1_pro)" })),
      output_format: Type.Optional(StringEnum(currentOutputFormats, { description: 'Default pcm, or wav when Accept asks for audio/wav' })),
      pronunciation_dicts: Type.Optional(Type.Array(DictId, { maxItems: 100 })),
      word_timestamps: Type.Optional(Type.Boolean({ description: 'Accepted; word times are sent on the WebSocket only' })),
      request_id: Type.Optional(Type.String({ maxLength: 128, pattern: '^[a-zA-Z0-9_.-]+$' })),
      session_id: Type.Optional(Type.String({ maxLength: 128, pattern: '^[a-zA-Z0-9_.-]+$' })),
    },
    { required: ['text', 'voice_id'] },
  );
}

export type CurrentSpeechBody = Static<ReturnType<typeof currentSpeechRequestSchema>>;
