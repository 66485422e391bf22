/**
 * WebSocket synthesis: `<prefix>/<speech name>/get_speech/stream` upgraded (the path names the
 * model), and `/waves/v1/tts/live` (each message's `model` names it, default lightning_v3.1).
 * Each text message is a speech request (the REST body's fields and rules) with `request_id`,
 * `continue` (more text follows: buffered and spoken sentence by sentence as sentences complete),
 * `flush` (speak the rest and finish; its text may be empty), `max_buffer_flush_ms` (speak what
 * waits without a sentence end after that long) and `word_timestamps`. A message of only
 * whitespace with nothing buffered is a keep-alive: no audio, no answer. Answers: `chunk`
 * messages of base64 audio (and `word_timestamp` messages, numbered from 0, when asked), then `complete`; or
 * `error`, after which the socket stays usable (unless messages that are not speech requests at all
 * pass the socket's limit on malformed messages: it is then closed). Requests run one after another in the order they
 * arrived, so any number of them complete in turn on one socket; their pieces go through the
 * synthesis scheduler like SSE streams.
 * On the product names and /tts/live every answer also carries session_id, our own request_id and
 * the client's ids as external_session_id and external_request_id; a request still open for text
 * completes once its audio has caught up and complete_backoff_ms (default 4 s) pass without text;
 * an idle socket is told so before it is closed.
 * Each message that starts a request pays the account's synthesis rate limit as a REST request
 * does (text continuing an open request, a flush and a keep-alive do not); without a token it is
 * refused with 429.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { IncomingMessage } from 'node:http';
import type { RawData } from 'ws';
import type { ModelGeneration } from '../../engines/types.js';
import { AbortedError, InvalidRequestError } from '../../errors.js';
import { numberLanguageApplied, type ResolvedSynthesis, type SynthesisService, type SynthesisStats } from '../../synthesis/synthesize.js';
import { TextFeed } from '../../synthesis/text-feed.js';
import { logWireError, toWireError } from '../plugins/error-mapping.js';
import { OrderedMessages } from '../plugins/ordered-messages.js';
import { idleTimeoutFromQuery, type RealtimeSession, type RealtimeSockets } from '../plugins/realtime-sockets.js';
import { messageValidator } from '../plugins/validation-messages.js';
import { DEFAULT_COMPLETE_BACKOFF_MS, SynthesisSocketQuery, synthesisMessageSchema, type SynthesisMessage } from '../schemas/realtime.js';
import type { ProductSpeechModel } from '../../synthesis/languages.js';
import { deprecationHeaders, isProductName, markDeprecated, productModelOf, SPEECH_MODEL_SPELLINGS, SPEECH_ROUTE_NAMES, speechModelOf, speechRouteNamesFor, speechSocketRoutes } from './product-names.js';
import { toRequest } from './synthesis.js';

export interface RealtimeSynthesisOptions {
  synthesis: SynthesisService;
  sockets: RealtimeSockets;
  maxTextChars: number;
  /** A client that takes no bytes for this long while synthesis waits on it is disconnected. */
  writeStallTimeoutMs: number;
  /** Takes one token of the account's synthesis rate limit; throws RateLimitedError when there is none. */
  chargeRequest(accountId: string): Promise<void>;
}

/**
 * Most bytes of audio per chunk message (base64 in JSON: about 5.5 kB). Bytes go out as the
 * encoder gives them, never held back to fill a chunk: the first audio leaves at once.
 */
const MAX_CHUNK_BYTES = 4096;

/** The model of a /tts/live message that names none. */
const DEFAULT_LIVE_MODEL = 'lightning_v3.1';

/** One request on a socket: its text arrives through `feed`, its audio leaves in order. */
interface SocketRequest {
  /** What the request is known by on this socket: the client's request_id, else one of ours. */
  id: string;
  /** The id fields every message about the request carries. */
  ids: Readonly<Record<string, string>>;
  resolved: Promise<ResolvedSynthesis>;
  feed: TextFeed;
  wordTimestamps: boolean;
  /** 0: text without a sentence end waits for more, however long. */
  maxBufferFlushMs: number;
  /** Set while text waits and maxBufferFlushMs is on. */
  flushTimer?: NodeJS.Timeout;
  /** An open request (continue) whose audio has caught up completes after this long without text; undefined: never. */
  completeBackoffMs?: number;
  /** Set while the audio has caught up with the text of an open request. */
  backoffTimer?: NodeJS.Timeout;
  /** Words timed so far: the next word_timestamp's id. */
  words: number;
}

/** A message's model, and the service's product model whose language rules it follows (none: the seed's). */
interface SocketModel {
  model: ModelGeneration;
  product?: ProductSpeechModel;
}

/** Keyed by the rules a message follows: its product model's, else its generation's. */
type Validators = ReadonlyMap<string, (data: unknown) => SynthesisMessage>;
const rulesOf = ({ model, product }: SocketModel): string => product ?? model;

class SynthesisSocket {
  private readonly requests = new Map<string, SocketRequest>();
  /** The request that the next message without request_id continues, if it asked for more. */
  private buffering: SocketRequest | undefined;
  private queue: Promise<void> = Promise.resolve();
  /** Messages are taken in order, each after the one before has paid its rate-limit token. */
  readonly messages: OrderedMessages;
  private anonymous = 0;

  /**
   * @param pathModel the model the path names; undefined where each message names its own.
   * @param service the socket is the service's of today (a product name, or /tts/live): its
   *   messages carry session_id, our request_id and the client's ids as external_*, and an open
   *   request completes after complete_backoff_ms without text. Else the client's request_id is
   *   the request_id, and an open request waits for its flush.
   */
  constructor(
    private readonly session: RealtimeSession,
    private readonly pathModel: SocketModel | undefined,
    private readonly service: boolean,
    private readonly validators: Validators,
    private readonly options: RealtimeSynthesisOptions,
  ) {
    this.messages = new OrderedMessages(session, options.sockets, (data, isBinary) => this.take(data, isBinary));
    session.closed.signal.addEventListener('abort', () => {
      for (const request of this.requests.values()) {
        clearTimeout(request.flushTimer);
        clearTimeout(request.backoffTimer);
      }
    });
  }

  private async take(data: RawData, isBinary: boolean): Promise<void> {
    let requestId: string | undefined;
    /** Not a speech request at all (not its protocol), rather than a request with a bad field. */
    let malformed = true;
    try {
      if (isBinary) throw new InvalidRequestError('Messages must be JSON text frames');
      let parsed: unknown;
      try {
        parsed = JSON.parse(data.toString());
      } catch {
        throw new InvalidRequestError('Request body is not valid JSON');
      }
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new InvalidRequestError('Request body must be a JSON object');
      malformed = false;
      requestId = (parsed as { request_id?: unknown }).request_id as string | undefined;
      if (typeof requestId !== 'string') requestId = undefined;
      const model = this.modelOf(parsed as { model?: unknown });
      const message = this.validators.get(rulesOf(model))!(parsed);
      if (this.startsRequest(message)) await this.options.chargeRequest(this.session.request.accountId);
      this.accept(model, message);
    } catch (err) {
      const ids = this.idsOf(requestId ?? this.buffering?.id);
      const overLimit = malformed ? this.session.countMalformed() : undefined;
      if (overLimit) {
        void this.sendError(ids, new InvalidRequestError(overLimit));
        this.session.closeMalformed();
        return;
      }
      // Awaited: while the client reads none of its errors, the next message waits (and the socket stops reading).
      await this.sendError(ids, err);
    }
  }

  /** The id fields of an error about the request the client calls `requestId` (which may not have started). */
  private idsOf(requestId: string | undefined): Readonly<Record<string, string | null>> {
    const known = requestId === undefined ? undefined : this.requests.get(requestId);
    if (known) return known.ids;
    if (!this.service) return { request_id: requestId ?? null };
    return { session_id: this.session.request.id, ...(requestId === undefined ? {} : { external_request_id: requestId }) };
  }

  /** The request `message` continues, when one is open for more text. */
  private continued(message: SynthesisMessage): SocketRequest | undefined {
    const open = message.request_id !== undefined ? this.requests.get(message.request_id) : this.buffering;
    return open && !open.feed.isClosed ? open : undefined;
  }

  /** Whether `message` would start a synthesis (what pays the rate limit): not a continuation, a flush or a keep-alive. */
  private startsRequest(message: SynthesisMessage): boolean {
    if (this.continued(message) || message.text === undefined || !/\S/.test(message.text)) return false;
    return !(message.request_id !== undefined && this.requests.has(message.request_id));
  }

  /** The path's model; else the message's `model` in any spelling clients use (a wrong type is the schema's to name). */
  private modelOf(message: { model?: unknown }): SocketModel {
    if (this.pathModel) return this.pathModel;
    const named = typeof message.model === 'string' ? message.model : DEFAULT_LIVE_MODEL;
    const model = speechModelOf(named);
    if (!model) throw new InvalidRequestError(`model must be one of ${SPEECH_MODEL_SPELLINGS.join(', ')}`);
    return { model, product: productModelOf(named) };
  }

  private accept({ model, product }: SocketModel, message: SynthesisMessage): void {
    const more = message.continue === true && message.flush !== true;
    const open = this.continued(message);
    if (open) {
      if (message.max_buffer_flush_ms !== undefined) open.maxBufferFlushMs = message.max_buffer_flush_ms;
      if (message.complete_backoff_ms !== undefined) open.completeBackoffMs = message.complete_backoff_ms;
      this.addText(open, message.text);
      if (!more) this.finish(open);
      return;
    }
    if (message.request_id !== undefined && this.requests.has(message.request_id)) {
      throw new InvalidRequestError(`request_id "${message.request_id}" is still in flight on this socket`);
    }
    if (message.text === undefined && message.flush !== true) throw new InvalidRequestError('text is required');
    // Nothing is buffered: an empty flush has nothing to speak, and whitespace alone is a keep-alive.
    if (message.text === undefined || !/\S/.test(message.text)) return;
    if (this.requests.size >= this.options.sockets.limits.maxRequestsPerSocket) {
      throw new InvalidRequestError(`at most ${this.options.sockets.limits.maxRequestsPerSocket} requests may be in flight on one socket`);
    }
    const ours = () => `${this.session.request.id}-${++this.anonymous}`;
    const id = message.request_id ?? ours();
    const ids = this.service
      ? {
          session_id: this.session.request.id,
          request_id: message.request_id === undefined ? id : ours(),
          ...(message.session_id === undefined ? {} : { external_session_id: message.session_id }),
          ...(message.request_id === undefined ? {} : { external_request_id: message.request_id }),
        }
      : { request_id: id };
    const request: SocketRequest = {
      id,
      ids,
      resolved: this.options.synthesis.resolve(toRequest(model, { ...message, text: '' }, this.session.request.accountId, product)),
      feed: new TextFeed(),
      wordTimestamps: message.word_timestamps === true,
      maxBufferFlushMs: message.max_buffer_flush_ms ?? 0,
      completeBackoffMs: message.complete_backoff_ms ?? (this.service ? DEFAULT_COMPLETE_BACKOFF_MS : undefined),
      words: 0,
    };
    request.resolved.catch(() => undefined); // reported in its turn, by run()
    this.requests.set(id, request);
    this.addText(request, message.text);
    if (more) this.buffering = request;
    else this.finish(request);
    this.queue = this.queue.then(() => this.run(request));
  }

  private addText(request: SocketRequest, text: string | undefined): void {
    if (text === undefined) return;
    if (request.feed.received + text.length > this.options.maxTextChars) {
      throw new InvalidRequestError(`text must be at most ${this.options.maxTextChars} characters`);
    }
    request.feed.push(text);
    // Text arriving is not the end of the request: its countdown starts again.
    if (request.backoffTimer) this.armBackoff(request);
    if (!request.feed.waiting) {
      clearTimeout(request.flushTimer);
      request.flushTimer = undefined;
    } else if (request.maxBufferFlushMs > 0 && !request.flushTimer) {
      request.flushTimer = setTimeout(() => {
        request.flushTimer = undefined;
        request.feed.releaseWaiting();
      }, request.maxBufferFlushMs);
    }
  }

  /** Starts (or restarts) an open request's complete_backoff_ms countdown: at its end the request is finished as by a flush. */
  private armBackoff(request: SocketRequest): void {
    clearTimeout(request.backoffTimer);
    request.backoffTimer = undefined;
    if (request.completeBackoffMs === undefined || request.feed.isClosed) return;
    request.backoffTimer = setTimeout(() => {
      request.backoffTimer = undefined;
      this.finish(request);
    }, request.completeBackoffMs);
  }

  /**
   * The request's text pieces as synthesis takes them. Each piece after the first is asked for
   * once the audio of those before it has been sent: while it waits, the backoff runs.
   */
  private async *pieces(request: SocketRequest): AsyncGenerator<string> {
    const feed = request.feed[Symbol.asyncIterator]();
    for (let first = true; ; first = false) {
      if (!first) this.armBackoff(request);
      const next = await feed.next();
      clearTimeout(request.backoffTimer);
      request.backoffTimer = undefined;
      if (next.done) return;
      yield next.value;
    }
  }

  private finish(request: SocketRequest): void {
    clearTimeout(request.flushTimer);
    clearTimeout(request.backoffTimer);
    request.feed.close();
    if (this.buffering === request) this.buffering = undefined;
  }

  private async run(request: SocketRequest): Promise<void> {
    const { synthesis, writeStallTimeoutMs } = this.options;
    const { session } = this;
    const stats: SynthesisStats = { samples: 0 };
    let chunks = 0;
    const send = (message: object) => session.send({ ...request.ids, ...message }, writeStallTimeoutMs);
    try {
      const resolved = await request.resolved;
      const rate = resolved.request.sampleRate;
      // Each piece of text is spoken as it completes; its words are timed once its audio is made.
      const parts = synthesis.spokenParts(resolved, this.pieces(request), session.closed.signal, stats, { wordTimestamps: request.wordTimestamps });
      for await (const part of parts) {
        if ('words' in part) {
          for (const word of part.words) await send({ status: 'word_timestamp', data: { id: request.words++, ...word } });
          continue;
        }
        const { bytes } = part;
        for (let at = 0; at < bytes.length; at += MAX_CHUNK_BYTES) {
          const chunk = bytes.subarray(at, at + MAX_CHUNK_BYTES);
          chunks++;
          await send({ status: 'chunk', data: { audio: Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('base64') } });
        }
      }
      const applied = numberLanguageApplied(resolved.request);
      await send({
        status: 'complete',
        chunks,
        audio_seconds: Math.round((stats.samples / rate) * 1000) / 1000,
        ...(applied === undefined ? {} : { number_pronunciation_language_applied: applied }),
      });
    } catch (err) {
      if (err instanceof AbortedError || !session.isOpen) session.request.log.info({ requestId: request.id, chunks }, 'socket closed: synthesis stopped');
      else await this.sendError(request.ids, err);
    } finally {
      // Text still arriving for a failed request is dropped with it.
      this.finish(request);
      this.requests.delete(request.id);
    }
  }

  private async sendError(ids: Readonly<Record<string, string | null>>, err: unknown): Promise<void> {
    const wire = toWireError(err, 'speech', this.session.request.id);
    logWireError(this.session.request.log.child({ requestId: ids.external_request_id ?? ids.request_id }), wire, err, 'websocket synthesis request failed');
    const message = wire.body.message ?? wire.body.error;
    const retry = wire.retryAfter === undefined ? {} : { retry_after: wire.retryAfter };
    await this.session
      .send({ ...ids, status: 'error', message, error: { code: wire.body.error, message }, ...retry }, this.options.writeStallTimeoutMs)
      .catch(() => undefined);
  }
}

/**
 * The synthesis sockets under one path prefix: `/<name>/get_speech/stream` for every speech
 * route name, and with `live`, `/tts/live` (the current layout's socket, model per message).
 */
export function realtimeSynthesisRoutes(options: RealtimeSynthesisOptions & { live?: boolean }) {
  const socketModels: SocketModel[] = [
    ...speechRouteNamesFor('stream').map((name) => ({ model: name.model, product: productModelOf(name.path) })),
    ...SPEECH_MODEL_SPELLINGS.map((value) => ({ model: speechModelOf(value)!, product: productModelOf(value) })),
  ];
  const validators = new Map<string, (data: unknown) => SynthesisMessage>();
  for (const m of socketModels) {
    if (!validators.has(rulesOf(m))) validators.set(rulesOf(m), messageValidator<SynthesisMessage>(synthesisMessageSchema(m.model, options.maxTextChars, m.product)));
  }
  const paths = speechSocketRoutes(options.live ?? false);
  // The neutral names keep Parley's own messages; every other socket is the service's of today.
  const neutralPaths = new Set(SPEECH_ROUTE_NAMES.filter((name) => !isProductName(name.path)).map((name) => `/${name.path}/get_speech/stream`));
  return async function register(instance: FastifyInstance): Promise<void> {
    const app = instance.withTypeProvider<TypeBoxTypeProvider>();
    // A deprecated name says so on the upgrade's 101 (written by ws, not by a reply) and on a refusal.
    const deprecatedPaths = new Set(paths.filter(({ deprecated }) => deprecated).map(({ path }) => `${instance.prefix}${path}`));
    instance.websocketServer.on('headers', (headers: string[], request: IncomingMessage) => {
      const path = (request.url ?? '').split('?')[0]!;
      if (deprecatedPaths.has(path)) for (const [name, value] of Object.entries(deprecationHeaders(path))) headers.push(`${name}: ${value}`);
    });
    const deprecation = markDeprecated(undefined);
    for (const { path, name, model, deprecated } of paths) {
      const service = !neutralPaths.has(path);
      app.get(
        path,
        {
          websocket: true,
          ...(deprecated && { onRequest: deprecation }),
          config: { rateFamily: 'synthesis' },
          schema: { querystring: SynthesisSocketQuery },
          // Before the upgrade, so a bad value is a plain 400.
          preHandler: async (request) => void idleTimeoutFromQuery(request.query.timeout, options.sockets.limits),
        },
        async (socket, request) => {
          const idleTimeoutMs = idleTimeoutFromQuery(request.query.timeout, options.sockets.limits);
          const idleMessage = service ? (seconds: number) => ({ session_id: request.id, status: 'error', message: `Connection timed out after ${seconds} seconds of inactivity` }) : undefined;
          const session = await options.sockets.admit(socket, request, 'synthesis', idleTimeoutMs, idleMessage);
          if (!session) return;
          const handler = new SynthesisSocket(session, model && { model, product: productModelOf(name) }, service, validators, options);
          session.receive(handler.messages.receive);
          // Else the queue resumes the socket once it has drained to half.
          if (socket.isPaused && !handler.messages.backlogged) socket.resume();
        },
      );
    }
  };
}
