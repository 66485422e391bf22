/**
 * Query strings of the WebSocket routes, and the synthesis socket's message: the speech request
 * body of the REST routes (the same rules and sentences) plus the fields of a socket.
 */
import { Type, type Static, type TObject } from '@sinclair/typebox';
import type { ModelGeneration } from '../../engines/types.js';
import { SPEECH_MODEL_SPELLINGS, TRANSCRIPTION_MODEL_SPELLINGS } from '../routes/product-names.js';
import { InvalidRequestError } from '../../errors.js';
import { MAX_REQUEST_ID_CHARS } from './common.js';
import { speechRequestSchema, type SpeechBody } from './speech-request.js';
import { TranscriptionQuery } from './transcription-query.js';

const token = Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'API key, for browsers that cannot send Authorization (less safe: URLs get logged)' }));
const timeout = Type.Optional(Type.String({ pattern: '^[0-9]{1,6}$', description: 'must be a whole number of seconds' }));

export const SynthesisSocketQuery = Type.Object({ token, timeout });
export type SynthesisSocketQueryValues = Static<typeof SynthesisSocketQuery>;

/** Longest `max_buffer_flush_ms` a client may ask for: beyond it text would wait longer than any client waits. */
export const MAX_BUFFER_FLUSH_MS = 60_000;

const SocketFields = Type.Object({
  continue: Type.Optional(Type.Boolean({ description: 'More text follows: it is buffered and spoken sentence by sentence' })),
  flush: Type.Optional(Type.Boolean({ description: 'Speak what is buffered and finish the request (text may be empty)' })),
  request_id: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_REQUEST_ID_CHARS })),
  model: Type.Optional(Type.String({ enum: [...SPEECH_MODEL_SPELLINGS], description: 'The model (on /waves/v1/tts/live it chooses it; default lightning_v3.1)' })),
  max_buffer_flush_ms: Type.Optional(
    Type.Integer({ minimum: 0, maximum: MAX_BUFFER_FLUSH_MS, description: 'Speak buffered continue text after it waited this long without a sentence end (0: off)' }),
  ),
  word_timestamps: Type.Optional(Type.Boolean({ description: 'Send word_timestamp messages: each word and its seconds in the request audio' })),
});

/**
 * One client message. `text` may be empty or only whitespace: such a message flushes (with
 * `flush`), continues a buffered request, or is a keep-alive; the socket tells them apart.
 */
export function synthesisMessageSchema(model: ModelGeneration, maxTextChars: number): TObject {
  const body = speechRequestSchema(model, maxTextChars) as TObject;
  return Type.Object({
    ...body.properties,
    text: Type.Optional(Type.String({ maxLength: maxTextChars, description: 'Text to speak; may be empty in a flush or a keep-alive' })),
    ...SocketFields.properties,
  });
}

export type SynthesisMessage = Omit<SpeechBody, 'text'> & { text?: string } & Static<typeof SocketFields>;

const flag = (description: string) => Type.Optional(Type.String({ enum: ['true', 'false'], description }));

export const sttEncodings = ['linear16', 'linear32', 'mulaw', 'alaw', 'opus', 'ogg_opus'] as const;

/**
 * Transcript options (keyword boosting, numerals, formatting, redaction): parsed and checked in
 * one place, so a bad value is a 400 naming the rule and whatever applies them has one input.
 */
export const TranscriptTextQuery = Type.Object({
  keywords: Type.Optional(
    Type.String({ minLength: 1, maxLength: 2048, description: 'Words to boost: word:weight pairs, comma-separated (weight > 0)' }),
  ),
  numerals: Type.Optional(Type.String({ enum: ['true', 'false', 'auto'], description: 'Spoken numbers as digits' })),
  format: flag('Sentence case and end punctuation'),
  redact_pii: flag('Replace personal information with placeholders'),
  redact_pci: flag('Replace payment card information with placeholders'),
});
export type TranscriptTextQueryValues = Static<typeof TranscriptTextQuery>;

/** Most keywords one request may boost. */
export const MAX_KEYWORDS = 100;
const MAX_KEYWORD_CHARS = 100;

export interface TranscriptTextOptions {
  keywords: { word: string; weight: number }[];
  numerals: boolean | 'auto';
  format: boolean;
  redactPii: boolean;
  redactPci: boolean;
}

/** The transcript options of a query; throws the 400's sentence for a keyword list that breaks a rule. */
export function transcriptTextOptions(q: TranscriptTextQueryValues): TranscriptTextOptions {
  const keywords = (q.keywords ?? '')
    .split(',')
    .filter((item) => item.trim() !== '')
    .map((item) => {
      const at = item.lastIndexOf(':');
      const word = (at < 0 ? item : item.slice(0, at)).trim();
      const weight = at < 0 ? NaN : Number(item.slice(at + 1));
      if (!word || word.length > MAX_KEYWORD_CHARS) throw new InvalidRequestError(`keywords must be word:weight pairs with words of 1 to ${MAX_KEYWORD_CHARS} characters`);
      if (!Number.isFinite(weight) || weight <= 0) throw new InvalidRequestError(`keywords must be word:weight pairs with a weight greater than 0 ("${item.trim()}")`);
      return { word, weight };
    });
  if (keywords.length > MAX_KEYWORDS) throw new InvalidRequestError(`keywords must hold at most ${MAX_KEYWORDS} words`);
  return {
    keywords,
    numerals: q.numerals === 'auto' ? 'auto' : q.numerals === 'true',
    format: q.format === 'true',
    redactPii: q.redact_pii === 'true',
    redactPci: q.redact_pci === 'true',
  };
}

/**
 * The `<option>_applied: false` fields for each transcript option asked for: this server accepts
 * them but does not yet change the transcript for them, and says so on every transcript.
 */
export function transcriptOptionsNotApplied(o: TranscriptTextOptions): Record<string, false> {
  const asked: [string, boolean][] = [
    ['keywords_applied', o.keywords.length > 0],
    ['numerals_applied', o.numerals !== false],
    ['format_applied', o.format],
    ['redact_pii_applied', o.redactPii],
    ['redact_pci_applied', o.redactPci],
  ];
  return Object.fromEntries(asked.filter(([, on]) => on).map(([name]) => [name, false]));
}

export const TranscriptionSocketQuery = Type.Object({
  token,
  model: Type.Optional(Type.String({ enum: [...TRANSCRIPTION_MODEL_SPELLINGS], description: 'The recogniser (every name serves the installed one)' })),
  language: TranscriptionQuery.properties.language,
  encoding: Type.Optional(Type.String({ enum: [...sttEncodings], description: 'Audio in binary frames; opus and ogg_opus as Ogg pages or raw packets' })),
  sample_rate: Type.Optional(Type.String({ pattern: '^[0-9]{4,5}$', description: 'must be a whole number of Hz between 8000 and 48000' })),
  word_timestamps: TranscriptionQuery.properties.word_timestamps,
  diarize: TranscriptionQuery.properties.diarize,
  vad_events: flag('Send speech_started and speech_ended events'),
  eou_timeout_ms: Type.Optional(Type.String({ pattern: '^[0-9]{1,5}$', description: 'must be a whole number of milliseconds between 100 and 10000' })),
  endpointing: flag('Finalise an utterance after eou_timeout_ms of silence (false: only on finalize, close_stream or the utterance bound)'),
  sentence_timestamps: flag('Add utterances: each sentence with its start and end'),
  full_transcript: flag('Add full_transcript: every final so far, and the partial'),
  ...TranscriptTextQuery.properties,
  timeout: timeout,
});
export type TranscriptionSocketQueryValues = Static<typeof TranscriptionSocketQuery>;
