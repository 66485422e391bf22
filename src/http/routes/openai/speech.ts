/**
 * POST /v1/audio/speech: OpenAI's speech API on Parley's synthesis use case. The audio is made
 * at 24 kHz (OpenAI's rate, and what `pcm` is documented as) and streamed as it is encoded:
 * chunked bytes (`stream_format: audio`) or `speech.audio.delta`/`speech.audio.done` events (`sse`).
 */
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { FfmpegEncoder } from '../../../audio/ffmpeg-encode.js';
import { encodeStream, streamContentTypes } from '../../../audio/stream-encode.js';
import { timeStretch } from '../../../audio/time-stretch.js';
import { AbortedError, InvalidRequestError } from '../../../errors.js';
import type { SynthesisService } from '../../../synthesis/synthesize.js';
import { toDomainError } from '../../plugins/error-mapping.js';
import { pipeToSse, sseEvent } from '../../plugins/sse.js';
import { openAiSpeechSchema, type OpenAiSpeechBody } from '../../schemas/openai-speech.js';
import type { SpeechModels } from './aliases.js';
import { openAiErrorBody, ParamError } from './errors.js';

export const OPENAI_SAMPLE_RATE = 24000;
/** How the ids of an account's cloned voices begin. */
const CLONE_PREFIX = 'voice_';
/** The speeds Parley's engines take (SynthesisOptions.speed); OpenAI's 0.25-4 beyond these is time-stretched. */
const ENGINE_MIN_SPEED = 0.5;
const ENGINE_MAX_SPEED = 2;

/** Samples passed through, counted (for the SSE completion event). */
async function* counted(pcm: AsyncIterable<Float32Array>, stats: { samples: number }): AsyncGenerator<Float32Array> {
  for await (const samples of pcm) {
    stats.samples += samples.length;
    yield samples;
  }
}

export interface SpeechRouteOptions {
  synthesis: SynthesisService;
  models: SpeechModels;
  ffmpeg: FfmpegEncoder;
  maxTextChars: number;
  writeStallTimeoutMs?: number;
}

export function openAiSpeechRoutes(options: SpeechRouteOptions) {
  const { synthesis } = options;

  async function speech(request: FastifyRequest<{ Body: OpenAiSpeechBody }>, reply: FastifyReply) {
    const { body } = request;
    const engineSpeed = Math.min(ENGINE_MAX_SPEED, Math.max(ENGINE_MIN_SPEED, body.speed));
    const voiceName = typeof body.voice === 'string' ? body.voice : body.voice.id;
    // An account's clone is found by the synthesis use case, for its owner only; every other name maps through the model's voices.
    const clone = voiceName.startsWith(CLONE_PREFIX);
    const target = clone ? { generation: options.models.generationOf(body.model), voice: { id: voiceName } } : options.models.resolve(body.model, voiceName);
    // `instructions` is accepted and ignored: no Parley voice takes a style prompt.
    const prepared = await synthesis
      .prepare({
        accountId: request.accountId,
        model: target.generation,
        text: body.input,
        voiceId: target.voice.id,
        sampleRate: OPENAI_SAMPLE_RATE,
        speed: engineSpeed,
        language: 'auto',
        outputFormat: 'pcm',
        pronunciationDicts: [],
      })
      .catch((err: unknown) => {
        if (clone && err instanceof InvalidRequestError && !(err instanceof ParamError)) {
          const message = err.message.startsWith('voice_id') ? `The voice "${voiceName}" is not a cloned voice of this account: see GET /api/v1/tts-large/get_cloned_voices` : err.message;
          throw new ParamError(message, 'voice');
        }
        throw err;
      });
    const stats = { samples: 0 };
    const format = body.response_format;
    let bytes: AsyncGenerator<Uint8Array>;
    if (format !== 'aac') {
      // Resampled, stretched to a speed beyond the engine's and encoded beside the engine (the synthesis output workers).
      bytes = synthesis.encodedStream(prepared, request.clientGone, stats, format, body.speed / engineSpeed);
    } else {
      // aac only from ffmpeg, fed from here.
      let pcm = synthesis.pcm(prepared, request.clientGone);
      // The engine's output is bounded by limits.maxOutputSeconds; stretching to speed 0.25 at most doubles it.
      if (body.speed !== engineSpeed) pcm = timeStretch(pcm, body.speed / engineSpeed, OPENAI_SAMPLE_RATE);
      bytes = encodeStream(format, OPENAI_SAMPLE_RATE, counted(pcm, stats), { ffmpeg: options.ffmpeg, signal: request.clientGone });
    }
    reply.header('X-Voice-Id', target.voice.id);
    if (body.stream_format === 'sse') return sse(request, reply, bytes, stats);

    // The first bytes are made before the status line goes out, so an early failure is still a clean 4xx/5xx.
    const first = await bytes.next();
    async function* all() {
      if (!first.done) yield first.value;
      yield* bytes;
    }
    const stream = Readable.from(all(), { objectMode: false });
    stream.on('error', (err) => {
      if (!(err instanceof AbortedError)) request.log.error({ err }, 'speech failed after the stream began');
    });
    return reply.type(streamContentTypes[body.response_format]).send(stream);
  }

  function sse(request: FastifyRequest, reply: FastifyReply, bytes: AsyncGenerator<Uint8Array>, stats: { samples: number }) {
    const event = (data: { type: string; [field: string]: unknown }) => sseEvent(data.type, data);
    return pipeToSse(request, reply, bytes, {
      stallTimeoutMs: options.writeStallTimeoutMs,
      what: 'speech',
      events: (piece) => [event({ type: 'speech.audio.delta', audio: Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength).toString('base64') })],
      // No `usage`: Parley counts no tokens, and made-up numbers would mislead a client that bills by them.
      end: () => [event({ type: 'speech.audio.done', audio_seconds: Math.round((stats.samples / OPENAI_SAMPLE_RATE) * 1000) / 1000 })],
      error: (err) => {
        const domain = toDomainError(err, 'speech');
        if (!domain || domain.status >= 500) request.log.error({ err }, 'speech failed after the stream began');
        return event({ type: 'error', ...openAiErrorBody(domain).body });
      },
    });
  }

  return async function register(app: FastifyInstance): Promise<void> {
    app.post('/audio/speech', {
      config: { rateFamily: 'synthesis' },
      schema: {
        tags: ['openai'],
        summary: "Speech from text, OpenAI's API: chunked audio bytes, or SSE events with stream_format sse",
        body: openAiSpeechSchema(options.maxTextChars),
        produces: Object.values(streamContentTypes),
      },
      handler: speech,
    });
  };
}
