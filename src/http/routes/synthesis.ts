/**
 * Synthesis routes: /stream (Server-Sent Events of base64 chunks) for all three models and /get_speech
 * (whole file, point 11) for tts-v2 and tts-v3.1. Thin: schema → SynthesisRequest → use case.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ByteChunker } from '../../audio/chunk.js';
import type { ModelGeneration } from '../../engines/types.js';
import { AbortedError } from '../../errors.js';
import { logWireError, streamErrorMessage, toWireError } from '../plugins/error-mapping.js';
import type { SynthesisRequest, SynthesisService, SynthesisStats } from '../../synthesis/synthesize.js';
import { SseStream } from '../plugins/sse.js';
import { speechErrors } from '../schemas/common.js';
import { speechRequestSchema, type SpeechBody } from '../schemas/speech-request.js';

export interface SynthesisRouteOptions {
  synthesis: SynthesisService;
  maxTextChars: number;
  /** Newer wire format: chunk data as JSON {"audio","done"}. */
  jsonChunks: boolean;
  /** A stream whose client has not taken a write for this long is closed (config.http). */
  writeStallTimeoutMs?: number;
  /** Where tts-large's Deprecation Link header points (the tts-v2 docs). */
  successorDocsUrl: string;
}

const CHUNK_BYTES = 1024;

export function toRequest(model: ModelGeneration, body: SpeechBody, accountId: string): SynthesisRequest {
  return {
    accountId,
    model,
    text: body.text,
    voiceId: body.voice_id,
    sampleRate: body.sample_rate,
    speed: body.speed,
    language: body.language,
    outputFormat: body.output_format,
    // tts-v3.1 has no consistency control.
    consistency: model === 'tts-v3.1' ? undefined : body.consistency,
    pronunciationDicts: body.pronunciation_dicts ?? [],
  };
}

export function synthesisRoutes(options: SynthesisRouteOptions) {
  const { synthesis } = options;

  async function stream(model: ModelGeneration, body: SpeechBody, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const prepared = await synthesis.prepare(toRequest(model, body, request.accountId));
    const sse = new SseStream(reply, options.writeStallTimeoutMs);
    const stats: SynthesisStats = { samples: 0 };
    const bytes = synthesis.encodedStream(prepared, sse.abort.signal, stats);
    // The first audio is made before the headers go out, so a failure there is still a plain 500.
    const first = await bytes.next();
    sse.open();
    const chunker = new ByteChunker(CHUNK_BYTES);
    let chunks = 0;
    const sendChunk = async (chunk: Uint8Array) => {
      chunks++;
      const b64 = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('base64');
      await sse.send([
        ['event', 'chunk'],
        ['data', options.jsonChunks ? JSON.stringify({ audio: b64, done: false }) : b64],
        ['done', 'false'],
      ]);
    };
    try {
      if (!first.done) for (const c of chunker.push(first.value)) await sendChunk(c);
      for await (const piece of bytes) {
        for (const c of chunker.push(piece)) await sendChunk(c);
        if (sse.isClosed) break;
      }
      const rest = chunker.flush();
      if (rest) await sendChunk(rest);
      await sse.send([
        ['event', 'complete'],
        [
          'data',
          JSON.stringify({
            done: true,
            status: '200',
            request_id: request.id,
            chunks,
            audio_seconds: Math.round((stats.samples / prepared.request.sampleRate) * 1000) / 1000,
          }),
        ],
        ['done', 'true'],
      ]);
    } catch (err) {
      if (err instanceof AbortedError || sse.isClosed) {
        request.log.info({ chunks }, 'client went away: synthesis stopped');
      } else {
        // The status line is gone; the error event carries what the REST body would have said.
        const wire = toWireError(err, 'speech', request.id);
        logWireError(request.log, wire, err, 'synthesis stopped after the stream began');
        await sse.send([
          ['event', 'error'],
          ['data', JSON.stringify(streamErrorMessage(wire, request.id))],
        ]);
      }
    } finally {
      await bytes.return(undefined);
      sse.end();
    }
  }

  async function getSpeech(model: ModelGeneration, body: SpeechBody, request: FastifyRequest, reply: FastifyReply) {
    const prepared = await synthesis.prepare(toRequest(model, body, request.accountId));
    const abort = new AbortController();
    reply.raw.on('close', () => {
      if (!reply.raw.writableFinished) abort.abort();
    });
    const file = await synthesis.wholeFile(prepared, { wavHeader: body.add_wav_header !== false }, abort.signal);
    return reply
      .header('Content-Type', file.contentType)
      .header('X-Sample-Rate', String(file.sampleRate))
      .header('X-Audio-Duration', file.durationSeconds.toFixed(3))
      .send(Buffer.from(file.bytes.buffer, file.bytes.byteOffset, file.bytes.byteLength));
  }

  return async function register(instance: FastifyInstance): Promise<void> {
    const app = instance.withTypeProvider<TypeBoxTypeProvider>();
    for (const model of ['tts-large', 'tts-v2', 'tts-v3.1'] as ModelGeneration[]) {
      const body = speechRequestSchema(model, options.maxTextChars);
      const deprecated = model === 'tts-large';
      const onRequest = deprecated
        ? async (_req: FastifyRequest, reply: FastifyReply) => {
            reply.header('Deprecation', 'true');
            reply.header('Link', `<${options.successorDocsUrl}>; rel="successor-version"`);
          }
        : undefined;
      app.post(`/${model}/stream`, {
        config: { rateFamily: 'synthesis' },
        ...(onRequest ? { onRequest } : {}),
        schema: {
          tags: [model],
          summary: `Stream speech as Server-Sent Events of base64 audio chunks (≤ ${CHUNK_BYTES} bytes)${deprecated ? ' — deprecated, use tts-v2' : ''}`,
          deprecated,
          body,
          produces: ['text/event-stream'],
          response: speechErrors,
        },
        handler: (request, reply) => stream(model, request.body, request, reply),
      });
      if (deprecated) continue;
      app.post(`/${model}/get_speech`, {
        config: { rateFamily: 'synthesis' },
        schema: {
          tags: [model],
          summary: 'Synthesise the whole text and return one audio file',
          body,
          produces: ['audio/wav', 'audio/mpeg', 'audio/pcm'],
          response: speechErrors,
        },
        handler: (request, reply) => getSpeech(model, request.body, request, reply),
      });
    }
  };
}
