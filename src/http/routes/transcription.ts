/**
 * POST <name>/get_text under every transcription name: raw audio/* bytes (read with the upload cap
 * enforced while reading; on the product name `pulse` application/octet-stream too) or JSON {url}. With webhook_url the job is stored and the answer is
 * immediate. On the current layout (POST /waves/v1/stt) bytes of any Content-Type are read (the
 * bytes say the format; `encoding` and `sample_rate` describe headerless audio) and
 * `sentence_timestamps` adds the utterances.
 */
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { InvalidRequestError, UnsupportedAudioError } from '../../errors.js';
import type { AudioInput, Transcribe, TranscriptionOptions } from '../../transcription/types.js';
import { wavesErrors } from '../schemas/common.js';
import type { WebhookMethod } from '../../jobs/webhook-sender.js';
import {
  CurrentTranscriptionQuery,
  ProductTranscriptionQuery,
  TranscriptionQuery,
  transcriptionOptionsFromQuery,
  type CurrentTranscriptionQueryValues,
  type ProductTranscriptionQueryValues,
} from '../schemas/transcription-query.js';
import type { RouteLayout } from './product-names.js';

export interface TranscriptionRouteOptions {
  transcribe: Transcribe;
  maxUploadBytes: number;
  /** Fetch a URL given as input, with the address policy and caps applied. */
  fetchUrl(url: string, signal: AbortSignal): Promise<{ bytes: Uint8Array; contentType: string; filename: string }>;
  /**
   * Throws PackNotInstalledError when this server lacks a pack every transcription in `language`
   * needs (no VAD, no recogniser at all): checked before a URL is fetched or a job is stored.
   * Unset (a stand-in transcriber): nothing to check.
   */
  requirePacks?(language: string): void;
  /** Store a job for webhook delivery; undefined when jobs are not installed. */
  submitJob?(job: {
    accountId: string;
    requestId: string;
    input: AudioInput;
    options: TranscriptionOptions;
    webhookUrl: string;
    webhookExtra: string | undefined;
    webhookMethod: WebhookMethod | undefined;
  }): Promise<void>;
  /** Check webhook_url and webhook_extra before anything is read or stored (throws InvalidRequestError). */
  validateWebhook?(url: string, extra: string | undefined): Promise<void>;
  layout?: RouteLayout;
  /**
   * The service's rules of today rather than the seed's (the product name `pulse`, and every route
   * of the current layout): the product's language codes and aggregators, raw bytes as
   * application/octet-stream too, `itn_normalize` and `webhook_method`, and numbers as spoken
   * unless asked for as digits.
   */
  productRules?: boolean;
  /** Paths of the one handler within its prefix (default /get_text). */
  paths?: readonly string[];
}

/** The Content-Type that describes headerless audio of an `encoding` (a container's header is read first whatever this says). */
const RAW_TYPE_OF_ENCODING: Partial<Record<string, string>> = { linear16: 'audio/pcm', mulaw: 'audio/mulaw', alaw: 'audio/pcma' };

function rawHint(q: CurrentTranscriptionQueryValues, contentTypeHeader: string): string {
  const type = q.encoding === undefined ? undefined : RAW_TYPE_OF_ENCODING[q.encoding];
  if (!type) return contentTypeHeader;
  return q.sample_rate === undefined ? type : `${type};rate=${q.sample_rate}`;
}

const sttError = { $ref: 'SttError#' };
const sttErrors = { 400: sttError, 401: sttError, 413: sttError, 429: sttError, 500: sttError, 503: sttError };

function flag(v: 'true' | 'false' | undefined): boolean {
  return v === 'true';
}

/** The non-empty `url` of a JSON body {"url": "…"}, else undefined. */
function urlOf(body: unknown): string | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body) || !('url' in body)) return undefined;
  return typeof body.url === 'string' && body.url ? body.url : undefined;
}

/** Content-Types read as raw audio on the legacy layout: audio/*, and with the product's rules application/octet-stream (the bytes say the format). */
const LEGACY_AUDIO_TYPE = /^audio\/[\w.+-]+/i;
const PRODUCT_LEGACY_AUDIO_TYPE = /^(audio\/[\w.+-]+|application\/octet-stream)/i;

export function transcriptionRoutes(options: TranscriptionRouteOptions) {
  const current = options.layout === 'current';
  const product = current || options.productRules === true;
  const querystring = current ? CurrentTranscriptionQuery : product ? ProductTranscriptionQuery : TranscriptionQuery;
  return async function register(instance: FastifyInstance): Promise<void> {
    const app = instance.withTypeProvider<TypeBoxTypeProvider>();
    // Raw audio arrives as one buffer; Fastify stops reading and answers 413 as soon as the cap is passed.
    // The current layout reads any Content-Type as audio (JSON stays a {url} body).
    const rawTypes = current ? '*' : product ? PRODUCT_LEGACY_AUDIO_TYPE : LEGACY_AUDIO_TYPE;
    app.addContentTypeParser(rawTypes, { parseAs: 'buffer', bodyLimit: options.maxUploadBytes }, (_req, body, done) => done(null, body));

    for (const path of options.paths ?? ['/get_text']) app.post(path, {
      bodyLimit: options.maxUploadBytes,
      config: { rateFamily: 'transcription' },
      schema: {
        tags: ['stt'],
        summary: current
          ? 'Transcribe audio given as raw bytes of any Content-Type (the bytes say the format) or as JSON {"url": "…"}'
          : product
            ? 'Transcribe audio given as raw bytes (Content-Type audio/* or application/octet-stream: the bytes say the format) or as JSON {"url": "…"}'
            : 'Transcribe audio given as raw bytes (Content-Type audio/*) or as JSON {"url": "…"}',
        querystring,
        consumes: current ? ['*/*', 'application/json'] : product ? ['audio/*', 'application/octet-stream', 'application/json'] : ['audio/*', 'application/json'],
        response: {
          200: Type.Object({}, { additionalProperties: true, description: 'Transcription result, or {status: "processing", request_id} with webhook_url' }),
          ...(current ? wavesErrors : sttErrors),
        },
      },
      handler: async (request, reply) => {
        const q = request.query as CurrentTranscriptionQueryValues & Partial<ProductTranscriptionQueryValues>;
        const contentTypeHeader = String(request.headers['content-type'] ?? '').trim();
        const contentType = contentTypeHeader.split(';')[0]!.trim().toLowerCase();
        // Checked before any audio is read or stored.
        const requestedOptions = transcriptionOptionsFromQuery(q, product ? false : 'auto');
        const webhookUrl = q.webhook_url;
        if (q.webhook_extra !== undefined && webhookUrl === undefined) throw new InvalidRequestError('webhook_extra needs webhook_url');
        if (webhookUrl !== undefined) {
          if (!options.submitJob || !options.validateWebhook) throw new InvalidRequestError('webhook_url is not supported by this server');
          await options.validateWebhook(webhookUrl, q.webhook_extra);
        }
        // Before any URL is fetched or job stored: only an install can fix a missing pack.
        options.requirePacks?.(q.language ?? 'en');


        let input: AudioInput;
        let filename: string;
        if (contentType === 'application/json') {
          const url = urlOf(request.body);
          if (!url) throw new InvalidRequestError('Body must be a JSON object {"url": "<address of an audio file>"}');
          const fetched = await options.fetchUrl(url, request.clientGone);
          input = { bytes: fetched.bytes, contentType: fetched.contentType };
          filename = fetched.filename;
        } else if (current || contentType.startsWith('audio/') || (product && contentType === 'application/octet-stream')) {
          const bytes = request.body;
          if (!Buffer.isBuffer(bytes) || bytes.byteLength === 0) throw new UnsupportedAudioError();
          // The whole header: headerless PCM carries its rate and channels as parameters (audio/pcm;rate=24000).
          input = {
            bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength),
            contentType: contentType.startsWith('audio/') ? contentTypeHeader : rawHint(q, contentTypeHeader),
          };
          const header = request.headers['x-filename'];
          filename = q.filename ?? (typeof header === 'string' && header ? header : 'audio');
        } else {
          throw new UnsupportedAudioError();
        }

        const transcriptionOptions: TranscriptionOptions = {
          language: q.language ?? 'en',
          wordTimestamps: flag(q.word_timestamps),
          ...(current && { currentFields: true }),
          ...(flag(q.sentence_timestamps) ? { sentenceTimestamps: true } : {}),
          diarize: flag(q.diarize),
          ageDetection: flag(q.age_detection),
          genderDetection: flag(q.gender_detection),
          emotionDetection: flag(q.emotion_detection),
          filename,
          ...requestedOptions,
        };

        if (webhookUrl !== undefined) {
          await options.submitJob!({
            accountId: request.accountId,
            requestId: request.id,
            input,
            options: transcriptionOptions,
            webhookUrl,
            webhookExtra: q.webhook_extra,
            webhookMethod: q.webhook_method,
          });
          return { status: 'processing', request_id: request.id };
        }
        return { status: 'success', ...(await options.transcribe(input, transcriptionOptions, { requestId: request.id, signal: request.clientGone })) };
      },
    });
  };
}
