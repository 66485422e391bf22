/**
 * AsyncAPI 3.0 description of the two WebSockets, served at /asyncapi.json and linked from the
 * OpenAPI document. Message payloads are the schemas the routes validate with.
 */
import { Type } from '@sinclair/typebox';
import type { Config } from '../../config.js';
import { synthesisMessageSchema, SynthesisSocketQuery, TranscriptionSocketQuery } from './realtime.js';

const SynthesisChunk = Type.Object({
  request_id: Type.String(),
  status: Type.Literal('chunk'),
  data: Type.Object({ audio: Type.String({ description: 'base64 of the next bytes of the output_format stream' }) }),
});
const SynthesisComplete = Type.Object({
  request_id: Type.String(),
  status: Type.Literal('complete'),
  chunks: Type.Integer(),
  audio_seconds: Type.Number(),
});
const SynthesisError = Type.Object({
  status: Type.Literal('error'),
  request_id: Type.Union([Type.String(), Type.Null()]),
  message: Type.String(),
  error: Type.Object({ code: Type.String({ description: 'The REST error type, e.g. InvalidRequest' }), message: Type.String() }),
});
const Transcription = Type.Object({
  type: Type.Literal('transcription'),
  status: Type.Literal('success'),
  session_id: Type.String(),
  transcript: Type.String(),
  is_final: Type.Boolean(),
  is_last: Type.Boolean(),
  start: Type.Number({ description: 'seconds from the start of the stream' }),
  end: Type.Number(),
  words: Type.Array(
    Type.Object({ word: Type.String(), start: Type.Number(), end: Type.Number(), speaker: Type.String(), confidence: Type.Union([Type.Number(), Type.Null()]) }),
  ),
  language: Type.String(),
});
const VadEvent = Type.Object({ type: Type.Union([Type.Literal('speech_started'), Type.Literal('speech_ended')]), timestamp: Type.Number() });
const SttError = Type.Object({ type: Type.Literal('error'), message: Type.String() });
const Control = Type.Object({ type: Type.Union([Type.Literal('finalize'), Type.Literal('close_stream')]) });

type RealtimeLimits = Config['realtime'];

const message = (name: string, payload: object, summary: string) => ({ [name]: { name, summary, payload } });

/** The limits every socket is held to, as configured (the close codes are RFC 6455's). */
function limitsText(limits: RealtimeLimits): string {
  const mib = (bytes: number) => `${Math.round((bytes / 2 ** 20) * 100) / 100} MiB`;
  return [
    `Limits: at most ${limits.maxSocketsPerAccount} open sockets per account, counted across every server sharing the database (PostgreSQL); one more is closed with 1008 and a reason.`,
    `A socket is closed with 1008 after ${limits.maxSessionSeconds} s, with 1009 on a message over ${mib(limits.maxMessageBytes)}, and with 1000 after ${limits.idleTimeoutMs / 1000} s with no message either way (?timeout= sets it in seconds, up to ${limits.maxIdleTimeoutMs / 1000}).`,
    `The server pings every ${limits.pingIntervalMs / 1000} s and drops a client that did not answer the previous ping.`,
    `Synthesis pauses while ${mib(limits.maxBufferedBytes)} waits for a client that does not read, and closes the socket with 1008 if it stays so.`,
    'Streaming transcription stops reading past 4 MiB of frames waiting for the engines, so TCP pushes back on the client.',
  ].join(' ');
}

export function asyncApiDocument(version: string, maxTextChars: number, limits: RealtimeLimits): object {
  const synthesisChannel = (model: string) => ({
    address: `/api/v1/${model}/get_speech/stream`,
    title: `${model} WebSocket synthesis${model === 'tts-large' ? ' (deprecated, use tts-v2)' : ''}`,
    bindings: { ws: { method: 'GET', query: SynthesisSocketQuery } },
    messages: {
      ...message('speechRequest', synthesisMessageSchema(model as 'tts-v2', maxTextChars), 'Text to speak (continue: more follows; flush: finish)'),
      ...message('chunk', SynthesisChunk, 'Audio'),
      ...message('complete', SynthesisComplete, 'The request is done'),
      ...message('error', SynthesisError, 'The request failed; the socket stays usable'),
    },
  });
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Parley realtime',
      version,
      description: `Authenticate with Authorization: Bearer, or ?token= where headers cannot be set. Refusals before the upgrade are plain HTTP 4xx with the REST error bodies. ${limitsText(limits)}`,
    },
    channels: {
      'tts-v2': synthesisChannel('tts-v2'),
      'tts-v3.1': synthesisChannel('tts-v3.1'),
      'tts-large': synthesisChannel('tts-large'),
      stt: {
        address: '/api/v1/stt/get_text',
        title: 'Streaming transcription',
        bindings: { ws: { method: 'GET', query: TranscriptionSocketQuery } },
        messages: {
          ...message('audio', { type: 'string', contentEncoding: 'binary', description: 'A binary frame of audio in the declared encoding' }, 'Audio'),
          ...message('control', Control, 'finalize, or close_stream'),
          ...message('transcription', Transcription, 'A partial (is_final false) or final transcript'),
          ...message('vadEvent', VadEvent, 'With vad_events=true'),
          ...message('error', SttError, 'A bad frame or a busy engine; the stream goes on'),
        },
      },
    },
    operations: {
      ...Object.fromEntries(
        ['tts-v2', 'tts-v3.1', 'tts-large'].flatMap((model) => [
          [`${model}-send`, { action: 'receive', channel: { $ref: `#/channels/${model}` }, messages: [{ $ref: `#/channels/${model}/messages/speechRequest` }] }],
          [
            `${model}-answer`,
            {
              action: 'send',
              channel: { $ref: `#/channels/${model}` },
              messages: ['chunk', 'complete', 'error'].map((m) => ({ $ref: `#/channels/${model}/messages/${m}` })),
            },
          ],
        ]),
      ),
      'stt-send': { action: 'receive', channel: { $ref: '#/channels/stt' }, messages: ['audio', 'control'].map((m) => ({ $ref: `#/channels/stt/messages/${m}` })) },
      'stt-answer': { action: 'send', channel: { $ref: '#/channels/stt' }, messages: ['transcription', 'vadEvent', 'error'].map((m) => ({ $ref: `#/channels/stt/messages/${m}` })) },
    },
  };
}
