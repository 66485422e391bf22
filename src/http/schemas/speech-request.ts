/**
 * The speech request body per model: the fields each speech model accepts, with their bounds.
 * Ranges and enums live here so a 400 names the field and the rule.
 */
import { Type, type Static } from '@sinclair/typebox';
import { outputFormats, type OutputFormat } from '../../audio/pcm.js';
import type { ModelGeneration } from '../../engines/types.js';
import { modelLanguages, productModelLanguages, type ProductSpeechModel } from '../../synthesis/languages.js';
import { DictId, MAX_VOICE_ID_CHARS, StringEnum } from './common.js';

/** `output_format` values on the wire: Parley's formats, and `ulaw` as the service spells mu-law. */
export const wireOutputFormats = [...outputFormats, 'ulaw'] as const;
export type WireOutputFormat = (typeof wireOutputFormats)[number];

/** The encoder's format of a wire `output_format`. */
export function outputFormatOf(wire: WireOutputFormat): OutputFormat {
  return wire === 'ulaw' ? 'mulaw' : wire;
}

/** The language codes the service's synthesis requests list (both Lightning v3.1 pools). */
export const SERVICE_LANGUAGE_CODES = [
  'auto', 'en', 'hi', 'mr', 'kn', 'ta', 'bn', 'gu', 'te', 'ml', 'pa', 'or', 'es', 'de', 'fr', 'it',
  'nl', 'sv', 'pt', 'ru', 'el', 'fi', 'no', 'pl', 'ar', 'zh', 'id', 'ja', 'ko', 'ms', 'tr', 'vi',
] as const;

/** The service's text-normalisation fields, the same on every route that takes a speech request. */
const NormalizationFields = {
  number_pronunciation_language: Type.Optional(
    StringEnum(SERVICE_LANGUAGE_CODES, { description: "Language numbers, amounts, times and dates are read in (default: the synthesis language's)" }),
  ),
  math_notation: Type.Boolean({ default: false, description: 'Read digit-flanked operators (5 x 3, 2 ^ 10, 6 ÷ 2, spaced 5 - 3) as words' }),
};

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
      output_format: StringEnum(wireOutputFormats, { default: 'pcm' }),
      pronunciation_dicts: Type.Optional(Type.Array(DictId, { maxItems: 100 })),
      ...NormalizationFields,
      add_wav_header: Type.Optional(Type.Boolean({ description: 'Legacy: false returns raw PCM from get_speech' })),
    },
    { required: ['text', 'voice_id'] },
  );
}

/** The body after validation: defaults filled in, so only the optional fields may be missing. */
export type SpeechBody = Static<ReturnType<typeof speechRequestSchema>>;

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
      output_format: Type.Optional(StringEnum(wireOutputFormats, { description: 'Default pcm, or wav when Accept asks for audio/wav' })),
      pronunciation_dicts: Type.Optional(Type.Array(DictId, { maxItems: 100 })),
      ...NormalizationFields,
      word_timestamps: Type.Boolean({ default: false, description: 'Accepted; word times are sent on the WebSocket only' }),
      request_id: Type.Optional(Type.String({ maxLength: 128, pattern: '^[a-zA-Z0-9_.-]+$' })),
      session_id: Type.Optional(Type.String({ maxLength: 128, pattern: '^[a-zA-Z0-9_.-]+$' })),
    },
    { required: ['text', 'voice_id'] },
  );
}

export type CurrentSpeechBody = Static<ReturnType<typeof currentSpeechRequestSchema>>;
