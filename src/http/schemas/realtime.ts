/**
 * Query strings of the WebSocket routes, and the synthesis socket's message: the speech request
 * body of the REST routes (the same rules and sentences) plus the fields of a socket.
 */
import { Type, type Static, type TObject } from '@sinclair/typebox';
import type { ModelGeneration } from '../../engines/types.js';
import { MAX_REQUEST_ID_CHARS } from './common.js';
import { speechRequestSchema, type SpeechBody } from './speech-request.js';
import { TranscriptionQuery, transcriptionOptionsQuery } from './transcription-query.js';

const token = Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'API key, for browsers that cannot send Authorization (less safe: URLs get logged)' }));
const timeout = Type.Optional(Type.String({ pattern: '^[0-9]{1,6}$', description: 'must be a whole number of seconds' }));

export const SynthesisSocketQuery = Type.Object({ token, timeout });
export type SynthesisSocketQueryValues = Static<typeof SynthesisSocketQuery>;

const SocketFields = Type.Object({
  continue: Type.Optional(Type.Boolean({ description: 'More text follows for this request_id' })),
  flush: Type.Optional(Type.Boolean({ description: 'Synthesise what is buffered and finish the request' })),
  request_id: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_REQUEST_ID_CHARS })),
});

/** One client message: `text` may be left out of a message that only flushes. */
export function synthesisMessageSchema(model: ModelGeneration, maxTextChars: number): TObject {
  const body = speechRequestSchema(model, maxTextChars) as TObject;
  return Type.Object({ ...body.properties, text: Type.Optional(body.properties.text!), ...SocketFields.properties });
}

export type SynthesisMessage = Omit<SpeechBody, 'text'> & { text?: string } & Static<typeof SocketFields>;

const flag = (description: string) => Type.Optional(Type.String({ enum: ['true', 'false'], description }));

export const sttEncodings = ['linear16', 'linear32', 'mulaw', 'alaw', 'opus'] as const;

export const TranscriptionSocketQuery = Type.Object({
  token,
  language: TranscriptionQuery.properties.language,
  encoding: Type.Optional(Type.String({ enum: [...sttEncodings], description: 'Audio in binary frames; opus as Ogg pages or raw packets' })),
  sample_rate: Type.Optional(Type.String({ pattern: '^[0-9]{4,5}$', description: 'must be a whole number of Hz between 8000 and 48000' })),
  word_timestamps: TranscriptionQuery.properties.word_timestamps,
  diarize: TranscriptionQuery.properties.diarize,
  vad_events: flag('Send speech_started and speech_ended events'),
  eou_timeout_ms: Type.Optional(Type.String({ pattern: '^[0-9]{1,5}$', description: 'must be a whole number of milliseconds between 100 and 10000' })),
  timeout: timeout,
  ...transcriptionOptionsQuery,
});
export type TranscriptionSocketQueryValues = Static<typeof TranscriptionSocketQuery>;
