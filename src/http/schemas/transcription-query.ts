/** Query parameters of POST /api/v1/stt/get_text, and of the current layout's POST /waves/v1/stt. */
import { Type, type Static } from '@sinclair/typebox';
import { TRANSCRIPTION_MODEL_SPELLINGS } from '../routes/product-names.js';
import { MAX_KEYWORDS, MAX_KEYWORDS_CHARACTERS, parseKeywords } from '../../transcription/options/keywords.js';
import { redactionRequested } from '../../transcription/options/redaction-request.js';
import type { TranscriptionOptions } from '../../transcription/types.js';
import { StringEnum } from './common.js';
import { PRODUCT_TRANSCRIPTION_LANGUAGES, SEED_TRANSCRIPTION_LANGUAGES } from '../../transcription/languages.js';
import { WEBHOOK_METHODS } from '../../jobs/webhook-sender.js';

/** The seed's language codes: the neutral routes (`/api/v1/stt/...`) take these. */
export const sttLanguages = SEED_TRANSCRIPTION_LANGUAGES;

/** `language` on the product names (`pulse`) and the current layout: every documented code, the aggregators and `multi`. */
export const productLanguageQuery = Type.Optional(
  Type.String({ enum: [...PRODUCT_TRANSCRIPTION_LANGUAGES], description: 'Spoken language; multi detects it, an aggregator (multi-eu, multi-asian, multi-indic, …) detects it among its languages' }),
);

// Booleans are the strings true/false only (nothing is coerced: "1" or "yes" is a 400).
const flag = (description: string) => Type.Optional(StringEnum(['true', 'false'], { description }));
// true/false, or the kinds to redact comma-separated (checked by redactionRequested).
const redaction = (description: string) =>
  Type.Optional(
    Type.Union([StringEnum(['true', 'false']), Type.String({ minLength: 1, maxLength: 1000 })], {
      description: `${description}: true, false, or the kinds to redact comma-separated (ssn,email), which turns on every kind of the family`,
    }),
  );

/**
 * The transcription options both layouts and the live socket take: keyword boosting, digits,
 * formatting, redaction. `keywords` may come once (comma-separated) or repeated.
 */
export const transcriptionOptionsQuery = {
  keywords: Type.Optional(
    Type.Union([Type.String({ maxLength: MAX_KEYWORDS_CHARACTERS }), Type.Array(Type.String({ maxLength: MAX_KEYWORDS_CHARACTERS }), { maxItems: MAX_KEYWORDS })], {
      description: 'word:intensifier entries, comma-separated (at most 10,000, 100 characters each; intensifier 0 to 100, default 1, working range 1 to 3)',
    }),
  ),
  numerals: Type.Optional(
    StringEnum(['true', 'false', 'auto'], {
      description:
        'Spoken numbers as digits; auto: digits in languages with number rules (English), words elsewhere. Unset: auto, except on the pulse and /waves/v1 batch routes, where the words stay as spoken unless itn_normalize=true',
    }),
  ),
  format: flag('Sentence case and end punctuation'),
  redact_pci: redaction('Replace card numbers, CVV, expiry, bank account and routing numbers with placeholders'),
  redact_pii: redaction('Replace emails, phone numbers, national ids, dates of birth and addresses with placeholders'),
};

type TranscriptionOptionsQueryValues = Partial<Record<'numerals' | 'format' | 'redact_pci' | 'redact_pii' | 'itn_normalize', string>> & { keywords?: string | string[] };

/**
 * The options of transcriptionOptionsQuery as the use case takes them; a bad `keywords` or
 * redaction list throws InvalidRequestError naming the rule. `numerals` unset takes
 * `numeralsByDefault`, unless `itn_normalize=true` asks for written forms.
 */
export function transcriptionOptionsFromQuery(
  q: TranscriptionOptionsQueryValues,
  numeralsByDefault: boolean | 'auto' = 'auto',
): Pick<TranscriptionOptions, 'keywords' | 'numerals' | 'format' | 'redactPci' | 'redactPii'> {
  const keywords = q.keywords === undefined ? undefined : parseKeywords(Array.isArray(q.keywords) ? q.keywords.join(',') : q.keywords);
  const numerals = q.numerals === 'true' ? true : q.numerals === 'false' ? false : q.numerals === 'auto' ? 'auto' : q.itn_normalize === 'true' ? true : numeralsByDefault;
  return {
    ...(keywords ? { keywords } : {}),
    numerals,
    format: q.format === 'true',
    redactPci: redactionRequested('redact_pci', q.redact_pci),
    redactPii: redactionRequested('redact_pii', q.redact_pii),
  };
}

export const TranscriptionQuery = Type.Object({
  model: Type.Optional(Type.String({ enum: [...TRANSCRIPTION_MODEL_SPELLINGS], description: 'The one recogniser pipeline, under any of its names' })),
  language: Type.Optional(Type.String({ enum: [...sttLanguages], description: 'Spoken language; multi detects it' })),
  webhook_url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'Deliver the result here instead' })),
  webhook_extra: Type.Optional(Type.String({ maxLength: 4096, description: 'key:value pairs, comma-separated, echoed in the webhook payload' })),
  word_timestamps: flag('Include word and utterance timestamps'),
  diarize: flag('Label speakers'),
  age_detection: flag('Predict the age group'),
  gender_detection: flag('Predict the gender'),
  emotion_detection: flag('Predict emotion scores'),
  filename: Type.Optional(Type.String({ maxLength: 255, description: 'metadata.filename for raw uploads (or X-Filename header)' })),
  ...transcriptionOptionsQuery,
});

export type TranscriptionQueryValues = Static<typeof TranscriptionQuery>;

/**
 * What the product names (`/api/v1/pulse/get_text`) and every /waves/v1 route take beyond the
 * seed's query: the product's languages, `itn_normalize` and `webhook_method`; with them `numerals`
 * defaults to false, the words as spoken, as the service does.
 */
export const productTranscriptionQuery = {
  language: productLanguageQuery,
  itn_normalize: flag('Written forms of spoken numbers (digits, amounts, ordinals, years); off by default, as numerals'),
  webhook_method: Type.Optional(StringEnum(WEBHOOK_METHODS, { description: 'The HTTP method of the webhook delivery (default POST); a GET carries the same JSON body' })),
};

export const ProductTranscriptionQuery = Type.Object({ ...TranscriptionQuery.properties, ...productTranscriptionQuery });
export type ProductTranscriptionQueryValues = Static<typeof ProductTranscriptionQuery>;

/** Encodings of headerless audio on the current layout (a file's own header wins over them). */
export const rawEncodings = ['linear16', 'linear32', 'alaw', 'mulaw', 'opus', 'ogg_opus'] as const;

/** The current layout's query: the legacy options, the format of headerless bytes, and sentence times. */
export const CurrentTranscriptionQuery = Type.Object({
  ...ProductTranscriptionQuery.properties,
  encoding: Type.Optional(StringEnum(rawEncodings, { description: 'Encoding of headerless audio (a file header, when present, says the format)' })),
  sample_rate: Type.Optional(Type.String({ pattern: '^[0-9]{4,6}$', description: 'Sample rate in Hz of headerless audio' })),
  sentence_timestamps: flag('Include utterances (sentence-level times)'),
});

export type CurrentTranscriptionQueryValues = Static<typeof CurrentTranscriptionQuery>;
