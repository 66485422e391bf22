/**
 * Query strings of the WebSocket routes, and the synthesis socket's message: the speech request
 * body of the REST routes (the same rules and sentences) plus the fields of a socket.
 */
import { Type, type Static, type TObject } from '@sinclair/typebox';
import type { ModelGeneration } from '../../engines/types.js';
import type { ProductSpeechModel } from '../../synthesis/languages.js';
import { SPEECH_MODEL_SPELLINGS, TRANSCRIPTION_MODEL_SPELLINGS } from '../routes/product-names.js';
import { MAX_REQUEST_ID_CHARS } from './common.js';
import { speechRequestSchema, type SpeechBody } from './speech-request.js';
import { productLanguageQuery, TranscriptionQuery, transcriptionOptionsQuery } from './transcription-query.js';

const token = Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'API key, for browsers that cannot send Authorization (less safe: URLs get logged)' }));
const timeout = Type.Optional(Type.String({ pattern: '^[0-9]{1,6}$', description: 'must be a whole number of seconds' }));

export const SynthesisSocketQuery = Type.Object({ token, timeout });
export type SynthesisSocketQueryValues = Static<typeof SynthesisSocketQuery>;

/** Longest `max_buffer_flush_ms` a client may ask for: beyond it text would wait longer than any client waits. */
export const MAX_BUFFER_FLUSH_MS = 60_000;

/** `complete_backoff_ms` bounds and default, as the service documents them. */
export const MAX_COMPLETE_BACKOFF_MS = 10_000;
export const DEFAULT_COMPLETE_BACKOFF_MS = 4_000;

const SocketFields = Type.Object({
  continue: Type.Optional(Type.Boolean({ description: 'More text follows: it is buffered and spoken sentence by sentence' })),
  flush: Type.Optional(Type.Boolean({ description: 'Speak what is buffered and finish the request (text may be empty)' })),
  request_id: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_REQUEST_ID_CHARS })),
  model: Type.Optional(Type.String({ enum: [...SPEECH_MODEL_SPELLINGS], description: 'The model (on /waves/v1/tts/live it chooses it; default lightning_v3.1)' })),
  max_buffer_flush_ms: Type.Optional(
    Type.Integer({ minimum: 0, maximum: MAX_BUFFER_FLUSH_MS, description: 'Speak buffered continue text after it waited this long without a sentence end (0: off)' }),
  ),
  word_timestamps: Type.Optional(Type.Boolean({ description: 'Send word_timestamp messages: each word and its seconds in the request audio' })),
  session_id: Type.Optional(
    Type.String({ minLength: 1, maxLength: 128, pattern: '^[a-zA-Z0-9_.-]+$', description: "The client's session id, echoed as external_session_id" }),
  ),
  complete_backoff_ms: Type.Optional(
    Type.Number({
      minimum: 0,
      maximum: MAX_COMPLETE_BACKOFF_MS,
      description: `How long a request still open for text (continue) waits after its last audio before it completes (default ${DEFAULT_COMPLETE_BACKOFF_MS} on the product names and /tts/live, else never)`,
    }),
  ),
});

/**
 * One client message. `text` may be empty or only whitespace: such a message flushes (with
 * `flush`), continues a buffered request, or is a keep-alive; the socket tells them apart.
 */
export function synthesisMessageSchema(model: ModelGeneration, maxTextChars: number, product?: ProductSpeechModel): TObject {
  const body = speechRequestSchema(model, maxTextChars, product) as TObject;
  return Type.Object({
    ...body.properties,
    text: Type.Optional(Type.String({ maxLength: maxTextChars, description: 'Text to speak; may be empty in a flush or a keep-alive' })),
    ...SocketFields.properties,
  });
}

export type SynthesisMessage = Omit<SpeechBody, 'text'> & { text?: string } & Static<typeof SocketFields>;

const flag = (description: string) => Type.Optional(Type.String({ enum: ['true', 'false'], description }));

export const sttEncodings = ['linear16', 'linear32', 'mulaw', 'alaw', 'opus', 'ogg_opus'] as const;

/** Most words a client may ask for in one final (`max_words`): past it, no utterance the socket holds is that long. */
export const MAX_WORDS_PER_FINAL = 1000;

export const TranscriptionSocketQuery = Type.Object({
  token,
  model: Type.Optional(Type.String({ enum: [...TRANSCRIPTION_MODEL_SPELLINGS], description: 'The recogniser (every name serves the installed one)' })),
  language: TranscriptionQuery.properties.language,
  encoding: Type.Optional(Type.String({ enum: [...sttEncodings], description: 'Audio in binary frames; opus and ogg_opus as Ogg pages or raw packets' })),
  sample_rate: Type.Optional(Type.String({ pattern: '^[0-9]{4,5}$', description: 'must be a whole number of Hz between 8000 and 48000' })),
  word_timestamps: TranscriptionQuery.properties.word_timestamps,
  diarize: TranscriptionQuery.properties.diarize,
  vad_events: flag('Send speech_started and speech_ended events'),
  vad: flag('The same as vad_events; vad_events wins when both are given'),
  eou_timeout_ms: Type.Optional(Type.String({ pattern: '^[0-9]{1,5}$', description: 'must be a whole number of milliseconds between 100 and 10000' })),
  endpointing: flag('Finalise an utterance after eou_timeout_ms of silence (false: only on finalize, close_stream or the utterance bound)'),
  sentence_timestamps: flag('Add utterances: each sentence with its start and end'),
  full_transcript: flag('Add full_transcript: every final so far, and the partial'),
  punctuate: flag('false: remove the marks . , ? ! that end words (format=false implies it; default true)'),
  capitalize: flag('false: put the transcript in lower case (format=false implies it; default true)'),
  itn_normalize: flag('Spoken numbers, amounts and the like written as digits in finals (format=false turns it off; default false)'),
  finalize_on_words: flag('Finalise every 10 words, or max_words, as well as on silence (default true on pulse and /stt/live, false on stt)'),
  max_words: Type.Optional(Type.String({ pattern: '^[0-9]{1,5}$', description: `must be a whole number of words between 1 and ${MAX_WORDS_PER_FINAL}` })),
  external_session_id: Type.Optional(
    Type.String({ maxLength: 128, pattern: '^[a-zA-Z0-9_.-]+$', description: "must be letters, digits, '_', '-' or '.' (the client's id for the session, logged with it, not echoed)" }),
  ),
  timeout: timeout,
  ...transcriptionOptionsQuery,
});
export type TranscriptionSocketQueryValues = Static<typeof TranscriptionSocketQuery>;

/** The socket's query under a product name or on the current layout: the product's language codes. */
export const ProductTranscriptionSocketQuery = Type.Object({ ...TranscriptionSocketQuery.properties, language: productLanguageQuery });
