/**
 * WebSocket synthesis: GET /api/v1/{tts-v2,tts-v3.1,tts-large}/get_speech/stream, upgraded.
 * Each text message is a speech request (the REST body's fields and rules) with `request_id`,
 * `continue` (more text follows: buffered until a sentence ends) and `flush` (synthesise the rest
 * and finish). Answers: `chunk` messages of base64 audio, then `complete`; or `error`, after which
 * the socket stays usable. Requests run one after another in the order they arrived, so each
 * completes in order; their pieces go through the synthesis scheduler like SSE streams.
 * Each message that starts a request pays the account's synthesis rate limit as a REST request
 * does (text continuing an open request does not); without a token it is refused with 429.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RawData, WebSocket } from 'ws';
import type { ModelGeneration } from '../../engines/types.js';
import { AbortedError, InvalidRequestError } from '../../errors.js';
import { SynthesisStream } from '../../synthesis/scheduler.js';
import type { ResolvedSynthesis, SynthesisService, SynthesisStats } from '../../synthesis/synthesize.js';
import { TextFeed } from '../../synthesis/text-feed.js';
import { logWireError, toWireError } from '../plugins/error-mapping.js';
import { idleTimeoutFromQuery, type RealtimeSession, type RealtimeSockets } from '../plugins/realtime-sockets.js';
import { messageValidator } from '../plugins/validation-messages.js';
import { SynthesisSocketQuery, synthesisMessageSchema, type SynthesisMessage } from '../schemas/realtime.js';
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

/** One request on a socket: its text arrives through `feed`, its audio leaves in order. */
interface SocketRequest {
  id: string;
  resolved: Promise<ResolvedSynthesis>;
  feed: TextFeed;
}

class SynthesisSocket {
  private readonly requests = new Map<string, SocketRequest>();
  /** The request that the next message without request_id continues, if it asked for more. */
  private buffering: SocketRequest | undefined;
  private queue: Promise<void> = Promise.resolve();
  /** Messages are taken in order, each after the one before has paid its rate-limit token. */
  private intake: Promise<void> = Promise.resolve();
  private anonymous = 0;

  constructor(
    private readonly session: RealtimeSession,
    private readonly model: ModelGeneration,
    private readonly validate: (data: unknown) => SynthesisMessage,
    private readonly options: RealtimeSynthesisOptions,
  ) {}

  onMessage(data: RawData, isBinary: boolean): void {
    this.intake = this.intake.then(() => this.take(data, isBinary));
  }

  private async take(data: RawData, isBinary: boolean): Promise<void> {
    let requestId: string | undefined;
    try {
      if (isBinary) throw new InvalidRequestError('Messages must be JSON text frames');
      let parsed: unknown;
      try {
        parsed = JSON.parse(data.toString());
      } catch {
        throw new InvalidRequestError('Request body is not valid JSON');
      }
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new InvalidRequestError('Request body must be a JSON object');
      requestId = (parsed as { request_id?: unknown }).request_id as string | undefined;
      if (typeof requestId !== 'string') requestId = undefined;
      const message = this.validate(parsed);
      if (this.startsRequest(message)) await this.options.chargeRequest(this.session.request.accountId);
      this.accept(message);
    } catch (err) {
      void this.sendError(requestId ?? this.buffering?.id ?? null, err);
    }
  }

  /** The request `message` continues, when one is open for more text. */
  private continued(message: SynthesisMessage): SocketRequest | undefined {
    const open = message.request_id !== undefined ? this.requests.get(message.request_id) : this.buffering;
    return open && !open.feed.isClosed ? open : undefined;
  }

  /** Whether `message` would start a synthesis (what pays the rate limit). */
  private startsRequest(message: SynthesisMessage): boolean {
    return !this.continued(message) && message.text !== undefined && !(message.request_id !== undefined && this.requests.has(message.request_id));
  }

  private accept(message: SynthesisMessage): void {
    const more = message.continue === true && message.flush !== true;
    const open = this.continued(message);
    if (open) {
      this.addText(open, message.text);
      if (!more) this.finish(open);
      return;
    }
    if (message.request_id !== undefined && this.requests.has(message.request_id)) {
      throw new InvalidRequestError(`request_id "${message.request_id}" is still in flight on this socket`);
    }
    if (message.text === undefined && message.flush === true) return; // nothing is buffered: nothing to flush
    if (message.text === undefined) throw new InvalidRequestError('text is required');
    if (this.requests.size >= this.options.sockets.limits.maxRequestsPerSocket) {
      throw new InvalidRequestError(`at most ${this.options.sockets.limits.maxRequestsPerSocket} requests may be in flight on one socket`);
    }
    const id = message.request_id ?? `${this.session.request.id}-${++this.anonymous}`;
    const request: SocketRequest = {
      id,
      resolved: this.options.synthesis.resolve(toRequest(this.model, { ...message, text: '' }, this.session.request.accountId)),
      feed: new TextFeed(),
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
  }

  private finish(request: SocketRequest): void {
    request.feed.close();
    if (this.buffering === request) this.buffering = undefined;
  }

  private async run(request: SocketRequest): Promise<void> {
    const { synthesis, writeStallTimeoutMs } = this.options;
    const { session } = this;
    const stats: SynthesisStats = { samples: 0 };
    let chunks = 0;
    try {
      const resolved = await request.resolved;
      const stream = new SynthesisStream();
      let pieces = 0;
      const prepared = async function* () {
        for await (const text of request.feed) {
          pieces++;
          yield synthesis.prepareText(resolved, text, stream);
        }
        if (pieces === 0) throw new InvalidRequestError('text must contain something to say');
      };
      const send = (bytes: Uint8Array) => {
        chunks++;
        return session.send({ request_id: request.id, status: 'chunk', data: { audio: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64') } }, writeStallTimeoutMs);
      };
      for await (const bytes of synthesis.encodedPieces(resolved.request, prepared(), session.closed.signal, stats)) {
        for (let at = 0; at < bytes.length; at += MAX_CHUNK_BYTES) await send(bytes.subarray(at, at + MAX_CHUNK_BYTES));
      }
      await session.send(
        { request_id: request.id, status: 'complete', chunks, audio_seconds: Math.round((stats.samples / resolved.request.sampleRate) * 1000) / 1000 },
        writeStallTimeoutMs,
      );
    } catch (err) {
      if (err instanceof AbortedError || !session.isOpen) session.request.log.info({ requestId: request.id, chunks }, 'socket closed: synthesis stopped');
      else await this.sendError(request.id, err);
    } finally {
      // Text still arriving for a failed request is dropped with it.
      request.feed.close();
      if (this.buffering === request) this.buffering = undefined;
      this.requests.delete(request.id);
    }
  }

  private async sendError(requestId: string | null, err: unknown): Promise<void> {
    const wire = toWireError(err, 'speech', this.session.request.id);
    logWireError(this.session.request.log.child({ requestId }), wire, err, 'websocket synthesis request failed');
    const message = wire.body.message ?? wire.body.error;
    const retry = wire.retryAfter === undefined ? {} : { retry_after: wire.retryAfter };
    await this.session
      .send({ status: 'error', request_id: requestId, message, error: { code: wire.body.error, message }, ...retry }, this.options.writeStallTimeoutMs)
      .catch(() => undefined);
  }
}

export function realtimeSynthesisRoutes(options: RealtimeSynthesisOptions) {
  return async function register(instance: FastifyInstance): Promise<void> {
    const app = instance.withTypeProvider<TypeBoxTypeProvider>();
    for (const model of ['tts-large', 'tts-v2', 'tts-v3.1'] as ModelGeneration[]) {
      const validate = messageValidator<SynthesisMessage>(synthesisMessageSchema(model, options.maxTextChars));
      app.get(
        `/${model}/get_speech/stream`,
        {
          websocket: true,
          config: { rateFamily: 'synthesis' },
          schema: { querystring: SynthesisSocketQuery },
          // Before the upgrade, so a bad value is a plain 400.
          preHandler: async (request) => void idleTimeoutFromQuery(request.query.timeout, options.sockets.limits),
        },
        async (socket, request) => {
          const idleTimeoutMs = idleTimeoutFromQuery(request.query.timeout, options.sockets.limits);
          const session = await options.sockets.admit(socket, request, 'synthesis', idleTimeoutMs);
          if (!session) return;
          const handler = new SynthesisSocket(session, model, validate, options);
          session.receive((data, isBinary) => handler.onMessage(data, isBinary));
          socket.resume();
        },
      );
    }
  };
}
