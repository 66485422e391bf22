/**
 * AsyncAPI 3.0 description of the WebSockets (synthesis and streaming transcription, under every
 * route name and prefix, and the current layout's /waves/v1/tts/live and /waves/v1/stt/live),
 * served at /asyncapi.json and linked from the OpenAPI document. Message payloads are the schemas
 * the routes validate with.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import type { Config } from '../../config.js';
import type { ModelGeneration } from '../../engines/types.js';
import type { ProductSpeechModel } from '../../synthesis/languages.js';
import { productModelOf, ROUTE_PREFIXES, speechRouteNamesFor, TRANSCRIPTION_ROUTE_NAMES } from '../routes/product-names.js';
import { synthesisMessageSchema, SynthesisSocketQuery, TranscriptionSocketQuery } from './realtime.js';

/** The ids of a message on the product names and /waves/v1/tts/live (on the neutral names request_id is the client's). */
const serviceIds = {
  session_id: Type.Optional(Type.String({ description: "The connection's id (product names and /waves/v1/tts/live)" })),
  request_id: Type.String({ description: "Ours, one per request, on the product names and /waves/v1/tts/live; elsewhere the client's request_id" }),
  external_session_id: Type.Optional(Type.String({ description: "The client's session_id, when it sent one (product names and /waves/v1/tts/live)" })),
  external_request_id: Type.Optional(Type.String({ description: "The client's request_id, when it sent one (product names and /waves/v1/tts/live)" })),
};
const SynthesisChunk = Type.Object({
  ...serviceIds,
  status: Type.Literal('chunk'),
  data: Type.Object({ audio: Type.String({ description: 'base64 of the next bytes of the output_format stream' }) }),
});
const SynthesisComplete = Type.Object({
  ...serviceIds,
  status: Type.Literal('complete'),
  chunks: Type.Integer(),
  audio_seconds: Type.Number(),
  number_pronunciation_language_applied: Type.Optional(Type.Boolean({ description: 'With number_pronunciation_language: whether numbers were read in it (false: in the text language)' })),
});
const SynthesisWordTimestamp = Type.Object({
  ...serviceIds,
  status: Type.Literal('word_timestamp'),
  data: Type.Object({
    id: Type.Integer({ description: "the word's place in the request's text, from 0" }),
    word: Type.String(),
    start: Type.Number({ description: "seconds from the start of the request's audio" }),
    end: Type.Number(),
  }),
});
const SynthesisError = Type.Object({
  ...serviceIds,
  status: Type.Literal('error'),
  request_id: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'null or absent for a message that started no request' })),
  message: Type.String(),
  error: Type.Optional(Type.Object({ code: Type.String({ description: 'The REST error type, e.g. InvalidRequest' }), message: Type.String() })),
});
const transcription = (speaker: TSchema) =>
  Type.Object({
    type: Type.Literal('transcription'),
    status: Type.Literal('success'),
    session_id: Type.String(),
    transcript: Type.String(),
    is_final: Type.Boolean(),
    is_last: Type.Boolean({ description: 'true on the last message, after close_stream' }),
    start: Type.Number({ description: 'seconds from the start of the stream' }),
    end: Type.Number(),
    words: Type.Array(Type.Object({ word: Type.String(), start: Type.Number(), end: Type.Number(), speaker, confidence: Type.Union([Type.Number(), Type.Null()]) })),
    language: Type.Optional(Type.String({ description: 'The language heard (the one asked for unless the recogniser detects it); on pulse and /stt/live on finals only' })),
    languages: Type.Optional(Type.Array(Type.String(), { description: 'On pulse and /stt/live, on finals: every language heard in it' })),
    from_finalize: Type.Optional(Type.Boolean({ description: 'On pulse and /stt/live, on finals: true on the final that answers a {"type":"finalize"}' })),
    utterances: Type.Optional(
      Type.Array(Type.Object({ text: Type.String(), start: Type.Number(), end: Type.Number(), speaker: Type.Optional(speaker) }), {
        description: 'With sentence_timestamps=true: the sentences of the transcript',
      }),
    ),
    full_transcript: Type.Optional(Type.String({ description: 'With full_transcript=true: every final so far, then this partial' })),
    keywords_applied: Type.Optional(Type.Boolean({ description: 'With keywords: whether the recogniser boosted them (false: it cannot)' })),
    redacted_entities: Type.Optional(
      Type.Array(Type.String(), { description: 'With redact_pci or redact_pii: the placeholders of this message, such as [CREDITCARDNUMBER_1]' }),
    ),
  });
const Transcription = transcription(Type.String({ description: 'speaker_0, speaker_1, …' }));
const LiveTranscription = transcription(Type.Integer({ description: '0, 1, …' }));
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
    `A socket stops reading past ${limits.maxQueuedMessages} messages or ${mib(limits.maxQueuedMessageBytes)} waiting to be handled (transcription waiting for the engines), so TCP pushes back on the client.`,
    `One more than ${limits.maxMalformedMessagesPerSecond} messages within a second that are not of the socket's protocol (not JSON, not an object, a binary frame where text is expected, an unknown type) gets an error message and the socket is closed with 1008.`,
  ].join(' ');
}

/** A channel id for a path: the route name under /api/v1, `waves-<name>` under /waves/v1. */
function channelId(prefix: string, name: string): string {
  return prefix === '/api/v1' ? name : `waves-${name}`;
}

export function asyncApiDocument(version: string, maxTextChars: number, limits: RealtimeLimits): object {
  const synthesisChannel = (address: string, model: ModelGeneration, title: string, product?: ProductSpeechModel) => ({
    address,
    title,
    bindings: { ws: { method: 'GET', query: SynthesisSocketQuery } },
    messages: {
      ...message(
        'speechRequest',
        synthesisMessageSchema(model, maxTextChars, product),
        'Text to speak (continue: more follows, spoken sentence by sentence; flush: speak the rest and finish, text may be empty; whitespace alone with nothing buffered: a keep-alive)',
      ),
      ...message('chunk', SynthesisChunk, 'Audio'),
      ...message('wordTimestamp', SynthesisWordTimestamp, 'With word_timestamps: a word and where it is in the audio'),
      ...message('complete', SynthesisComplete, 'The request is done'),
      ...message(
        'error',
        SynthesisError,
        'The request failed; the socket stays usable. On the product names and /waves/v1/tts/live an idle socket is sent {"session_id","status":"error","message":"Connection timed out after N seconds of inactivity"} before it closes',
      ),
    },
  });
  const transcriptionChannel = (address: string, title: string, payload: TSchema) => ({
    address,
    title,
    bindings: { ws: { method: 'GET', query: TranscriptionSocketQuery } },
    messages: {
      ...message('audio', { type: 'string', contentEncoding: 'binary', description: 'A binary frame of audio in the declared encoding' }, 'Audio'),
      ...message('control', Control, 'finalize, or close_stream'),
      ...message('transcription', payload, 'A partial (is_final false) or final transcript'),
      ...message('vadEvent', VadEvent, 'With vad_events=true'),
      ...message('error', SttError, 'A bad frame or a busy engine; the stream goes on'),
    },
  });
  const synthesisChannels: Record<string, object> = {};
  const transcriptionChannels: Record<string, object> = {};
  for (const prefix of ROUTE_PREFIXES) {
    for (const name of speechRouteNamesFor('stream')) {
      const title = `${name.path} WebSocket synthesis (${name.model})${name.deprecated ? ', deprecated' : ''}`;
      synthesisChannels[channelId(prefix, name.path)] = synthesisChannel(`${prefix}/${name.path}/get_speech/stream`, name.model, title, productModelOf(name.path));
    }
    for (const name of TRANSCRIPTION_ROUTE_NAMES) {
      transcriptionChannels[channelId(prefix, name)] = transcriptionChannel(`${prefix}/${name}/get_text`, `Streaming transcription (${name})`, Transcription);
    }
  }
  synthesisChannels['tts-live'] = synthesisChannel(
    '/waves/v1/tts/live',
    'tts-v3.1',
    "WebSocket synthesis, current layout: each message's model (any spelling, default lightning_v3.1) chooses the model and its rules",
    // The widest language list of the models a message may name.
    'lightning_v3.1_pro',
  );
  synthesisChannels['streaming-tts'] = synthesisChannel(
    '/waves/v1/streaming-tts/stream',
    'tts-v2',
    "The hosted service's retired stream-tts socket (lightning-v2's messages), deprecated: /waves/v1/tts/live replaces it",
  );
  transcriptionChannels['stt-live'] = transcriptionChannel('/waves/v1/stt/live', 'Streaming transcription, current layout (integer speakers)', LiveTranscription);
  const operations = (channels: Record<string, object>, received: string[], sent: string[]) =>
    Object.fromEntries(
      Object.keys(channels).flatMap((id) => [
        [`${id}-send`, { action: 'receive', channel: { $ref: `#/channels/${id}` }, messages: received.map((m) => ({ $ref: `#/channels/${id}/messages/${m}` })) }],
        [`${id}-answer`, { action: 'send', channel: { $ref: `#/channels/${id}` }, messages: sent.map((m) => ({ $ref: `#/channels/${id}/messages/${m}` })) }],
      ]),
    );
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Parley realtime',
      version,
      description: `Authenticate with Authorization: Bearer (or Token), or ?token= where headers cannot be set. Refusals before the upgrade are plain HTTP 4xx with the REST error bodies. ${limitsText(limits)}`,
    },
    channels: { ...synthesisChannels, ...transcriptionChannels },
    operations: {
      ...operations(synthesisChannels, ['speechRequest'], ['chunk', 'wordTimestamp', 'complete', 'error']),
      ...operations(transcriptionChannels, ['audio', 'control'], ['transcription', 'vadEvent', 'error']),
    },
  };
}
