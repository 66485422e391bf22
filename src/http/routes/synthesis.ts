/**
 * Synthesis routes, one handler per operation registered under every name of the route table:
 * `<name>/stream` (Server-Sent Events of base64 chunks) and `<name>/get_speech` (one whole file),
 * and on the current layout `POST /tts` (whole file) and `POST /tts/live` (SSE), whose body names
 * the model. Thin: schema → SynthesisRequest → use case.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ByteChunker } from '../../audio/chunk.js';
import type { ModelGeneration } from '../../engines/types.js';
import { InvalidRequestError } from '../../errors.js';
import { logWireError, streamErrorMessage, toWireError, type RouteFamily } from '../plugins/error-mapping.js';
import { productDetection, type ProductSpeechModel } from '../../synthesis/languages.js';
import { numberLanguageApplied, type PreparedSynthesis, type SynthesisRequest, type SynthesisService, type SynthesisStats } from '../../synthesis/synthesize.js';
import { pipeToSse, sseEvent, type SseEvent } from '../plugins/sse.js';
import { messageValidator } from '../plugins/validation-messages.js';
import { speechErrorsOf } from '../schemas/common.js';
import {
  currentSpeechRequestSchema,
  outputFormatOf,
  speechRequestSchema,
  type CurrentSpeechBody,
  type SpeechBody,
  type WireOutputFormat,
} from '../schemas/speech-request.js';
import {
  DEFAULT_SPEECH_MODEL_VALUE,
  isDeprecatedSpeechModelValue,
  isProductName,
  markDeprecated,
  productModelOf,
  SPEECH_MODEL_SPELLINGS,
  speechModelOf,
  speechRouteNamesFor,
  type RouteLayout,
} from './product-names.js';

export interface SynthesisRouteOptions {
  synthesis: SynthesisService;
  maxTextChars: number;
  /** Newer wire format: chunk data as JSON {"audio","done"}. */
  jsonChunks: boolean;
  /** A stream whose client has not taken a write for this long is closed (config.http). */
  writeStallTimeoutMs?: number;
  /** Where a deprecated name's Deprecation Link header points (the tts-v2 docs). */
  successorDocsUrl: string;
  /** The layout of the prefix these routes are registered under (the current one adds /tts and /tts/live). */
  layout?: RouteLayout;
}

const CHUNK_BYTES = 1024;

/** `product`: the service's product model the route or body names, whose language rules the request follows (else the seed's). */
export function toRequest(model: ModelGeneration, body: SpeechBody, accountId: string, product?: ProductSpeechModel): SynthesisRequest {
  return {
    accountId,
    model,
    text: body.text,
    voiceId: body.voice_id,
    sampleRate: body.sample_rate,
    speed: body.speed,
    language: body.language ?? 'auto',
    outputFormat: outputFormatOf(body.output_format),
    // tts-v3.1 has no consistency control.
    consistency: model === 'tts-v3.1' ? undefined : body.consistency,
    pronunciationDicts: body.pronunciation_dicts ?? [],
    ...(product ? { routing: { detectAmong: productDetection(product, body.language) } } : {}),
    ...(body.number_pronunciation_language === undefined ? {} : { numberLanguage: body.number_pronunciation_language }),
    mathNotation: body.math_notation === true,
  };
}

/**
 * What the caller hears, on the response: `Content-Language`, the language spoken, `X-Voice-Id`,
 * the voice that spoke (another than the request's when its language was routed), and whether
 * `number_pronunciation_language` was honoured when the request gave one.
 */
function describeSpeech(reply: FastifyReply, prepared: PreparedSynthesis, request: SynthesisRequest): void {
  reply.header('Content-Language', prepared.language).header('X-Voice-Id', prepared.voice.id);
  const applied = numberLanguageApplied(request);
  if (applied !== undefined) reply.header('X-Number-Pronunciation-Language-Applied', String(applied));
}

/** How a stream's events are framed on the wire: the legacy layout's, or the current layout's. */
interface StreamFraming {
  chunk(b64: string): SseEvent;
  complete(summary: { requestId: string; chunks: number; audioSeconds: number }): SseEvent;
  family: RouteFamily;
}

function legacyFraming(jsonChunks: boolean, family: RouteFamily): StreamFraming {
  return {
    chunk: (b64) => [
      ['event', 'chunk'],
      ['data', jsonChunks ? JSON.stringify({ audio: b64, done: false }) : b64],
      ['done', 'false'],
    ],
    complete: ({ requestId, chunks, audioSeconds }) => [
      ['event', 'complete'],
      ['data', JSON.stringify({ done: true, status: '200', request_id: requestId, chunks, audio_seconds: audioSeconds })],
      ['done', 'true'],
    ],
    family,
  };
}

/**
 * The service's frames today (`/tts/live`, and `<product name>/stream` on both prefixes):
 * `event: audio` frames of `{"audio", "done": false, "status": "206"}`, then one unnamed
 * `{"status": "200", "done": true}`.
 */
function serviceFraming(family: RouteFamily): StreamFraming {
  return {
    chunk: (b64) => [
      ['event', 'audio'],
      ['data', JSON.stringify({ audio: b64, done: false, status: '206' })],
    ],
    complete: () => [['data', JSON.stringify({ status: '200', done: true })]],
    family,
  };
}

export function synthesisRoutes(options: SynthesisRouteOptions) {
  const { synthesis } = options;
  const layout = options.layout ?? 'legacy';
  const family: RouteFamily = layout === 'current' ? 'waves' : 'speech';
  const deprecation = markDeprecated(options.successorDocsUrl);

  async function stream(request: FastifyRequest, reply: FastifyReply, synthesisRequest: SynthesisRequest, framing: StreamFraming): Promise<void> {
    const prepared = await synthesis.prepare(synthesisRequest);
    describeSpeech(reply, prepared, synthesisRequest);
    const stats: SynthesisStats = { samples: 0 };
    const chunker = new ByteChunker(CHUNK_BYTES);
    let chunks = 0;
    // base64 stays on the event loop: for 14 s of 24 kHz PCM it takes about 0.5 ms, against about
    // 10 ms of the stream's other event-loop work (bench:throughput -- --sse-only prints both).
    const chunkEvents = (pieces: Iterable<Uint8Array>) =>
      Array.from(pieces, (chunk) => {
        chunks++;
        return framing.chunk(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('base64'));
      });
    await pipeToSse(request, reply, synthesis.encodedStream(prepared, request.clientGone, stats), {
      stallTimeoutMs: options.writeStallTimeoutMs,
      what: 'synthesis',
      events: (piece) => chunkEvents(chunker.push(piece)),
      end: () => {
        const rest = chunker.flush();
        const audioSeconds = Math.round((stats.samples / prepared.request.sampleRate) * 1000) / 1000;
        return [...chunkEvents(rest ? [rest] : []), framing.complete({ requestId: request.id, chunks, audioSeconds })];
      },
      error: (err) => {
        const wire = toWireError(err, framing.family, request.id);
        logWireError(request.log, wire, err, 'synthesis stopped after the stream began');
        return sseEvent('error', framing.family === 'waves' ? wire.body : streamErrorMessage(wire, request.id));
      },
    });
  }

  async function getSpeech(request: FastifyRequest, reply: FastifyReply, synthesisRequest: SynthesisRequest, wavHeader: boolean) {
    const prepared = await synthesis.prepare(synthesisRequest);
    describeSpeech(reply, prepared, synthesisRequest);
    const file = await synthesis.wholeFile(prepared, { wavHeader }, request.clientGone);
    return reply
      .header('Content-Type', file.contentType)
      .header('X-Sample-Rate', String(file.sampleRate))
      .header('X-Audio-Duration', file.durationSeconds.toFixed(3))
      .send(Buffer.from(file.bytes.buffer, file.bytes.byteOffset, file.bytes.byteLength));
  }

  /** Each model's body schema, and its validator as the routes apply it (enums included, defaults filled in), by the rules it follows. */
  const modelRules = new Map<string, { schema: ReturnType<typeof speechRequestSchema>; validate: (data: unknown) => SpeechBody }>();
  const rulesOf = (model: ModelGeneration, product?: ProductSpeechModel) => {
    let rules = modelRules.get(product ?? model);
    if (!rules) {
      const schema = speechRequestSchema(model, options.maxTextChars, product);
      modelRules.set(product ?? model, (rules = { schema, validate: messageValidator<SpeechBody>(schema) }));
    }
    return rules;
  };
  const modelSchema = (model: ModelGeneration, product?: ProductSpeechModel) => rulesOf(model, product).schema;

  /**
   * A current-layout body as the request of the model it names, checked against that model's own
   * rules (its rates and languages). The format defaults to wav when Accept asks for it, else pcm.
   */
  function currentRequest(body: CurrentSpeechBody, request: FastifyRequest, reply: FastifyReply): SynthesisRequest {
    const model = speechModelOf(body.model)!;
    const product = productModelOf(body.model);
    if (isDeprecatedSpeechModelValue(body.model)) void deprecation(request, reply);
    // The service's correlation headers: its own ids (X-Request-Id is every answer's), the client's echoed or empty.
    reply.header('X-Session-Id', request.id);
    reply.header('X-External-Session-Id', body.session_id ?? '');
    reply.header('X-External-Request-Id', body.request_id ?? '');
    const accept = String(request.headers.accept ?? '');
    const format: WireOutputFormat = body.output_format ?? (/\baudio\/(x-)?wav\b/i.test(accept) ? 'wav' : 'pcm');
    const candidate = {
      text: body.text,
      voice_id: body.voice_id,
      speed: body.speed,
      ...(body.language === undefined ? {} : { language: body.language }),
      output_format: format,
      ...(body.sample_rate === undefined ? {} : { sample_rate: body.sample_rate }),
      ...(body.consistency === undefined ? {} : { consistency: body.consistency }),
      ...(body.pronunciation_dicts === undefined ? {} : { pronunciation_dicts: body.pronunciation_dicts }),
      ...(body.number_pronunciation_language === undefined ? {} : { number_pronunciation_language: body.number_pronunciation_language }),
      ...(body.math_notation === undefined ? {} : { math_notation: body.math_notation }),
    };
    let valid: SpeechBody;
    try {
      valid = rulesOf(model, product).validate(candidate);
    } catch (err) {
      throw err instanceof InvalidRequestError ? new InvalidRequestError(`${err.message} for model ${body.model}`) : err;
    }
    return toRequest(model, valid, request.accountId, product);
  }

  return async function register(instance: FastifyInstance): Promise<void> {
    const app = instance.withTypeProvider<TypeBoxTypeProvider>();
    // A neutral `<name>/stream` keeps the original API's frames; a product name has the service's of today.
    const neutralFraming = legacyFraming(options.jsonChunks, family);
    const productFraming = serviceFraming(family);
    const errors = speechErrorsOf(layout);
    for (const { path, model, deprecated } of speechRouteNamesFor('stream')) {
      const framing = isProductName(path) ? productFraming : neutralFraming;
      const product = productModelOf(path);
      app.post(`/${path}/stream`, {
        config: { rateFamily: 'synthesis' },
        ...(deprecated ? { onRequest: deprecation } : {}),
        schema: {
          tags: [path],
          summary: `Stream speech (${model}) as Server-Sent Events of base64 audio chunks (≤ ${CHUNK_BYTES} bytes)${deprecated ? ' — deprecated' : ''}`,
          deprecated,
          body: modelSchema(model, product),
          produces: ['text/event-stream'],
          response: errors,
        },
        handler: (request, reply) => stream(request, reply, toRequest(model, request.body, request.accountId, product), framing),
      });
    }
    for (const { path, model, deprecated } of speechRouteNamesFor('get_speech')) {
      const product = productModelOf(path);
      app.post(`/${path}/get_speech`, {
        config: { rateFamily: 'synthesis' },
        ...(deprecated ? { onRequest: deprecation } : {}),
        schema: {
          tags: [path],
          summary: `Synthesise the whole text (${model}) and return one audio file${deprecated ? ' — deprecated' : ''}`,
          deprecated,
          body: modelSchema(model, product),
          produces: ['audio/wav', 'audio/mpeg', 'audio/pcm'],
          response: errors,
        },
        handler: (request, reply) =>
          getSpeech(request, reply, toRequest(model, request.body, request.accountId, product), request.body.add_wav_header !== false),
      });
    }
    if (layout !== 'current') return;
    const body = currentSpeechRequestSchema(options.maxTextChars, SPEECH_MODEL_SPELLINGS, DEFAULT_SPEECH_MODEL_VALUE);
    app.post('/tts', {
      config: { rateFamily: 'synthesis' },
      schema: {
        tags: ['tts'],
        summary: 'Synthesise the whole text and return one audio file (the model is a body field)',
        body,
        produces: ['audio/wav', 'audio/mpeg', 'audio/pcm'],
        response: errors,
      },
      // pcm is raw samples here (clients feed the bytes straight to a player); only wav is a file.
      handler: (request, reply) => {
        const synthesisRequest = currentRequest(request.body, request, reply);
        return getSpeech(request, reply, synthesisRequest, synthesisRequest.outputFormat === 'wav');
      },
    });
    app.post('/tts/live', {
      config: { rateFamily: 'synthesis' },
      schema: {
        tags: ['tts'],
        summary: 'Stream speech as Server-Sent Events: `event: audio` frames of {"audio": base64, "done": false, "status": "206"}, then {"status": "200", "done": true}',
        body,
        produces: ['text/event-stream'],
        response: errors,
      },
      handler: (request, reply) => stream(request, reply, currentRequest(request.body, request, reply), productFraming),
    });
  };
}
