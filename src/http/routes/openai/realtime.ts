/**
 * GET /v1/realtime?intent=transcription (or ?model= a transcription model): OpenAI's Realtime API
 * for transcription sessions, on Parley's streaming transcription use case (the same one as the
 * native streaming socket). Audio comes base64 in `input_audio_buffer.append` events.
 *
 * - With server VAD (the default) Parley's VAD finds the turns: `speech_started` when one opens,
 *   `delta`s as the recogniser's hypothesis grows, then `speech_stopped`, `committed` and
 *   `completed` once `silence_duration_ms` of silence ends it; `threshold` is the VAD's speech probability.
 * - With `turn_detection: null` the client ends each turn with `input_audio_buffer.commit`:
 *   `committed`, then the rest of the deltas and one `completed` for everything since the last commit.
 * Deltas follow the recogniser's hypothesis as it grows (never taking text back); `completed`
 * carries the final text. Every error is an `error` event in OpenAI's shape and the
 * session goes on, except where the socket's limits close it (as on every socket).
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RawData } from 'ws';
import { createStreamDecoder, type StreamDecoder } from '../../../audio/stream-decoder.js';
import { AbortedError, InvalidRequestError, PackNotInstalledError } from '../../../errors.js';
import { checkEngines } from '../../../transcription/pipeline.js';
import { PartialBudget, StreamingTranscription, type StreamingEvent } from '../../../transcription/streaming-session.js';
import { requireTranscriptionEngines, requireVad, type HeldEngines } from '../../../transcription/transcribe.js';
import { missingPacksCloseReason } from '../../../models/missing-packs.js';
import { toDomainError } from '../../plugins/error-mapping.js';
import { OrderedMessages } from '../../plugins/ordered-messages.js';
import { CloseCode, type RealtimeSession, type RealtimeSockets } from '../../plugins/realtime-sockets.js';
import { transcriptionModelAliases } from './aliases.js';
import { ParamError } from './errors.js';
import {
  applySessionUpdate,
  applyTranscriptionSessionUpdate,
  audioFormats,
  defaultServerVad,
  describeSession,
  describeTranscriptionSession,
  RealtimeEventError,
  type TranscriptionSettings,
} from './realtime-settings.js';

export interface OpenAiRealtimeOptions {
  /** The engines of the moment, held until release(). */
  engines(): HeldEngines;
  sockets: RealtimeSockets;
  writeStallTimeoutMs: number;
  /** Partial re-decodes at once across these sockets (recognisers that do not stream). */
  partialSlots: number;
  /** Ids of the loaded recogniser packs: transcription models besides the aliases. */
  recognizerPacks(): string[];
  /** The language used when the session names none. */
  defaultLanguage(): string;
}

/** Audio that may wait for the engines beyond an utterance's length before the client is told it sends too fast. */
const BACKLOG_SECONDS = 10;
/** OpenAI refuses to commit less audio than this. */
const MIN_COMMIT_MS = 100;
/** An utterance never ends by silence when the client commits turns itself (it is cut at realtime.maxUtteranceSeconds). */
const NO_SILENCE_END = 1e9;

/** An event that is not of the protocol at all (not a JSON object, a binary frame, an unknown type): counted against the malformed-message limit. */
class MalformedEventError extends RealtimeEventError {}

function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('base64url')}`;
}

/** One turn being transcribed: its item, and what was sent of it. */
interface Turn {
  itemId: string;
  startMs: number;
  /** Finals already made within the turn (an utterance cut at its maximum length, or manual turns). */
  finals: string[];
  /** Text sent in deltas so far. */
  sent: string;
}

class TranscriptionSessionSocket {
  /** Events are handled one at a time, in order: audio after a commit belongs to the next turn. */
  readonly messages: OrderedMessages;
  private stt: StreamingTranscription | undefined;
  private decoder: StreamDecoder | undefined;
  private engines: HeldEngines | undefined;
  private turn: Turn | null = null;
  private previousItemId: string | null = null;
  /** Audio before the current recogniser session, ms; its input samples (at its format's rate) in it, and since the last commit. */
  private msBefore = 0;
  private samplesInSession = 0;
  private samplesSinceCommit = 0;
  private committing = false;
  readonly id = newId('sess');

  constructor(
    private readonly session: RealtimeSession,
    private settings: TranscriptionSettings,
    private readonly options: OpenAiRealtimeOptions,
    private readonly partialBudget: PartialBudget,
  ) {
    this.messages = new OrderedMessages(session, options.sockets, (data, isBinary) => this.handle(data, isBinary));
  }

  private get language(): string {
    return this.settings.language || this.options.defaultLanguage();
  }

  /** The rate of the recogniser session's input (the format it was opened with). */
  private get inputRate(): number {
    return this.decoder?.sampleRate ?? this.settings.format.sampleRate;
  }

  send(event: { type: string; [field: string]: unknown }): void {
    this.session.send({ event_id: newId('event'), ...event }, this.options.writeStallTimeoutMs).catch(() => undefined);
  }

  private sendError(err: RealtimeEventError, clientEventId: unknown): void {
    this.send({
      type: 'error',
      error: { type: err.errorType, code: err.code, message: err.message, param: err.param, event_id: typeof clientEventId === 'string' ? clientEventId : null },
    });
  }

  /** Opens the recogniser session for the current settings (the engines are checked first: a missing one is an error event). */
  async start(): Promise<void> {
    const engines = this.options.engines();
    try {
      requireTranscriptionEngines(engines, this.language);
      const vad = requireVad(engines);
      const recognizer = checkEngines(engines, { language: this.language, diarize: false });
      const decoder = await createStreamDecoder(this.settings.format.encoding, this.settings.format.sampleRate);
      const vadTurns = this.settings.turnDetection;
      const stt = await StreamingTranscription.create(
        { vad, recognizer },
        {
          language: this.language,
          inputSampleRate: decoder.sampleRate,
          wordTimestamps: false,
          diarize: false,
          vadEvents: vadTurns !== null,
          eouSeconds: vadTurns ? vadTurns.silence_duration_ms / 1000 : NO_SILENCE_END,
          // The turn's audio begins prefix_padding_ms before the speech the VAD found (at most the second the session holds before speech).
          ...(vadTurns && { leadSeconds: vadTurns.prefix_padding_ms / 1000, vadThreshold: vadTurns.threshold }),
          partialIntervalSeconds: this.options.sockets.limits.partialIntervalMs / 1000,
          maxUtteranceSeconds: this.options.sockets.limits.maxUtteranceSeconds,
          partialBudget: this.partialBudget,
        },
        (event) => this.onTranscription(event),
      );
      this.stop();
      this.stt = stt;
      this.decoder = decoder;
      this.engines = engines;
    } catch (err) {
      engines.release();
      throw err;
    }
  }

  /** Releases the recogniser session; what it held and did not commit is dropped. */
  stop(): void {
    this.msBefore += (this.samplesInSession / this.inputRate) * 1000;
    this.samplesInSession = 0;
    this.stt?.close();
    this.decoder?.free();
    this.engines?.release();
    this.stt = this.decoder = this.engines = undefined;
  }

  private ms(streamSeconds: number): number {
    return Math.round(this.msBefore + streamSeconds * 1000);
  }

  /** The turn in progress, opened at `startSeconds` if there is none; `announce`: told as speech_started (server VAD). */
  private openTurn(startSeconds: number, announce = this.settings.turnDetection !== null): Turn {
    if (!this.turn) {
      this.turn = { itemId: newId('item'), startMs: this.ms(startSeconds), finals: [], sent: '' };
      const vad = this.settings.turnDetection;
      if (announce && vad) this.send({ type: 'input_audio_buffer.speech_started', audio_start_ms: this.turn.startMs, item_id: this.turn.itemId });
    }
    return this.turn;
  }

  /**
   * Sends what `text` adds to what was sent: the new characters while it extends the sent text
   * (the recogniser's hypothesis grows), else, once it revised something already sent, the words
   * past as many as were sent (a delta cannot take text back; `completed` has the final text).
   */
  private extend(turn: Turn, text: string): void {
    let delta = '';
    if (text.startsWith(turn.sent)) {
      delta = text.slice(turn.sent.length);
    } else {
      const sentWords = turn.sent.split(' ').filter(Boolean).length;
      const words = text.split(' ').filter(Boolean);
      if (words.length > sentWords) delta = (sentWords > 0 ? ' ' : '') + words.slice(sentWords).join(' ');
    }
    if (!delta) return;
    turn.sent += delta;
    this.send({ type: 'conversation.item.input_audio_transcription.delta', item_id: turn.itemId, content_index: 0, delta });
  }

  private complete(turn: Turn, endMs: number): void {
    const transcript = turn.finals.filter(Boolean).join(' ');
    this.extend(turn, transcript);
    const seconds = Math.max(0, endMs - turn.startMs) / 1000;
    this.send({
      type: 'conversation.item.input_audio_transcription.completed',
      item_id: turn.itemId,
      content_index: 0,
      transcript,
      usage: { type: 'duration', seconds: Math.round(seconds * 1000) / 1000 },
    });
    this.previousItemId = turn.itemId;
    this.turn = null;
  }

  private committed(turn: Turn): void {
    this.send({ type: 'input_audio_buffer.committed', item_id: turn.itemId, previous_item_id: this.previousItemId });
  }

  private onTranscription(event: StreamingEvent): void {
    // speech_ended is not used: a turn's end is told with its final, in the order OpenAI sends them.
    if (event.type === 'speech_started') {
      // As OpenAI counts it: the turn's audio begins prefix_padding_ms before the speech.
      this.openTurn(Math.max(0, event.timestamp - (this.settings.turnDetection?.prefix_padding_ms ?? 0) / 1000));
      return;
    }
    if (event.type !== 'transcription') return;
    if (!event.is_final) {
      const turn = this.openTurn(event.start);
      this.extend(turn, [...turn.finals, event.transcript].filter(Boolean).join(' '));
      return;
    }
    // Manual turns, or a commit in progress: finals add up until the commit completes the turn.
    if (!this.settings.turnDetection || this.committing) {
      if (event.transcript) this.openTurn(event.start).finals.push(event.transcript);
      return;
    }
    if (!this.turn && !event.transcript) return;
    const turn = this.openTurn(event.start);
    turn.finals.push(event.transcript);
    const endMs = this.ms(event.end);
    // An utterance cut at its maximum length goes on as the same turn; any other final ends it.
    if (event.end - event.start >= this.options.sockets.limits.maxUtteranceSeconds - 0.01) return;
    this.send({ type: 'input_audio_buffer.speech_stopped', audio_end_ms: endMs, item_id: turn.itemId });
    this.committed(turn);
    this.complete(turn, endMs);
    this.samplesSinceCommit = 0;
  }

  private async handle(data: RawData, isBinary: boolean): Promise<void> {
    if (!this.session.isOpen) return;
    let event: Record<string, unknown> | undefined;
    try {
      if (isBinary) throw new MalformedEventError('Events are JSON text messages; audio goes base64 in input_audio_buffer.append', null, 'invalid_event');
      try {
        const parsed: unknown = JSON.parse(data.toString());
        if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) event = parsed as Record<string, unknown>;
      } catch {
        // answered below
      }
      if (!event) throw new MalformedEventError('The event is not a JSON object', null, 'invalid_json');
      await this.dispatch(event);
    } catch (err) {
      const overLimit = err instanceof MalformedEventError ? this.session.countMalformed() : undefined;
      if (overLimit) {
        this.sendError(new RealtimeEventError(overLimit, null, 'rate_limit_exceeded'), event?.event_id);
        return this.session.closeMalformed();
      }
      if (err instanceof RealtimeEventError) return this.sendError(err, event?.event_id);
      if (err instanceof AbortedError || !this.session.isOpen) return;
      const domain = toDomainError(err, 'stt');
      // Bad input, or engines busy or restarting for now (503): the client is told, the session goes on.
      if (domain && (domain.status < 500 || domain.status === 503)) {
        this.session.request.log.info({ reason: domain.message }, 'realtime transcription: refused');
        return this.sendError(new RealtimeEventError(domain.message, null, domain.status === 503 ? 'service_unavailable' : 'invalid_value', domain.status === 503 ? 'server_error' : 'invalid_request_error'), event?.event_id);
      }
      this.session.request.log.error({ err }, 'realtime transcription failed');
      this.sendError(new RealtimeEventError('The server had an error while processing your request.', null, 'server_error', 'server_error'), event?.event_id);
      this.session.close(CloseCode.internal, 'transcription failed');
    }
  }

  private async dispatch(event: Record<string, unknown>): Promise<void> {
    const checks = { isTranscriptionModel: (m: string) => isTranscriptionModel(m, this.options) };
    switch (event.type) {
      case 'session.update':
      case 'transcription_session.update': {
        const older = event.type === 'transcription_session.update';
        const next = older ? applyTranscriptionSessionUpdate(event.session, this.settings, checks) : applySessionUpdate(event.session, this.settings, checks);
        const restart = next.format !== this.settings.format || next.language !== this.settings.language || JSON.stringify(next.turnDetection) !== JSON.stringify(this.settings.turnDetection);
        if (restart) {
          // The turn in progress ends as a commit would end it; then the recogniser starts again with the new settings.
          if (this.samplesSinceCommit > 0) await this.commit(false);
          const previous = this.settings;
          this.settings = next;
          try {
            await this.start();
          } catch (err) {
            this.settings = previous;
            throw err;
          }
        }
        this.settings = next;
        const session = older ? describeTranscriptionSession(this.id, next, this.language) : describeSession(this.id, next, this.language);
        this.send({ type: older ? 'transcription_session.updated' : 'session.updated', session });
        return;
      }
      case 'input_audio_buffer.append': {
        if (typeof event.audio !== 'string') throw new RealtimeEventError('audio must be a base64 string', 'audio', 'missing_required_parameter');
        if (!this.stt) await this.start();
        const samples = await this.decoder!.decode(Buffer.from(event.audio, 'base64'));
        this.samplesInSession += samples.length;
        this.samplesSinceCommit += samples.length;
        this.stt!.push(samples);
        const limit = this.options.sockets.limits.maxUtteranceSeconds + BACKLOG_SECONDS;
        if (this.stt!.heldSeconds > limit) {
          this.sendError(new RealtimeEventError(`audio arrives faster than it can be transcribed (more than ${limit} s waiting)`, null, 'rate_limit_exceeded', 'invalid_request_error'), event.event_id);
          this.session.close(CloseCode.policy, 'audio arrives faster than it can be transcribed');
        }
        return;
      }
      case 'input_audio_buffer.commit':
        return this.commit(true);
      case 'input_audio_buffer.clear':
        // The recogniser starts again with nothing: what was held is dropped, and so is the turn in progress.
        if (this.stt) await this.start();
        this.turn = null;
        this.samplesSinceCommit = 0;
        this.send({ type: 'input_audio_buffer.cleared' });
        return;
      default:
        throw new MalformedEventError(
          `Invalid value: '${String(event.type)}'. A transcription session takes session.update, transcription_session.update, input_audio_buffer.append, input_audio_buffer.commit and input_audio_buffer.clear`,
          'type',
          'invalid_value',
        );
    }
  }

  /** Ends the turn in progress: committed, the rest of its deltas, completed. */
  private async commit(byClient: boolean): Promise<void> {
    const ms = (this.samplesSinceCommit / this.inputRate) * 1000;
    if (ms < MIN_COMMIT_MS) {
      if (!byClient) return;
      throw new RealtimeEventError(
        `Error committing input audio buffer: buffer too small. Expected at least ${MIN_COMMIT_MS}ms of audio, but buffer only has ${ms.toFixed(2)}ms of audio.`,
        null,
        'input_audio_buffer_commit_empty',
      );
    }
    const startSeconds = (this.samplesInSession - this.samplesSinceCommit) / this.inputRate;
    const turn = this.openTurn(startSeconds, false);
    if (!this.settings.turnDetection) this.committed(turn);
    this.committing = true;
    try {
      await this.stt!.finalize(false);
    } finally {
      this.committing = false;
    }
    if (this.settings.turnDetection) this.committed(turn);
    this.complete(turn, this.ms(this.samplesInSession / this.inputRate));
    this.samplesSinceCommit = 0;
  }
}

/** What a session in the default language would lack (the VAD, any recogniser), or undefined when all is there. */
function missingPacksOf(options: Pick<OpenAiRealtimeOptions, 'engines' | 'defaultLanguage'>): PackNotInstalledError | undefined {
  const engines = options.engines();
  try {
    requireTranscriptionEngines(engines, options.defaultLanguage());
    return undefined;
  } catch (err) {
    if (err instanceof PackNotInstalledError) return err;
    throw err;
  } finally {
    engines.release();
  }
}

function isTranscriptionModel(model: string, options: Pick<OpenAiRealtimeOptions, 'recognizerPacks'>): boolean {
  return (transcriptionModelAliases as readonly string[]).includes(model) || options.recognizerPacks().includes(model);
}

/** The query of the upgrade: a transcription session, by intent or by a transcription model. */
function checkQuery(request: FastifyRequest, options: OpenAiRealtimeOptions): { model: string } {
  const query = request.query as Record<string, unknown>;
  const { intent, model } = query;
  if (intent !== undefined && intent !== 'transcription') {
    throw new ParamError('Parley serves transcription sessions only: use ?intent=transcription', 'intent');
  }
  if (model !== undefined && (typeof model !== 'string' || !isTranscriptionModel(model, options))) {
    throw new ParamError(
      `The model "${String(model)}" is not a transcription model: Parley serves transcription sessions only (whisper-1, gpt-4o-transcribe, gpt-4o-mini-transcribe, or an installed recogniser)`,
      'model',
      'model_not_found',
    );
  }
  if (intent === undefined && model === undefined) throw new ParamError('Name the session: ?intent=transcription, or ?model= a transcription model', 'intent');
  return { model: typeof model === 'string' ? model : 'gpt-4o-transcribe' };
}

export function openAiRealtimeRoutes(options: OpenAiRealtimeOptions) {
  const partialBudget = new PartialBudget(options.partialSlots);
  return async function register(app: FastifyInstance): Promise<void> {
    app.route({
      method: 'GET',
      url: '/realtime',
      config: { rateFamily: 'transcription' },
      schema: { hide: true },
      // Before the upgrade: a bad query is a plain 4xx in OpenAI's shape. A missing pack is told
      // inside the socket (an error event, then the close frame): a browser's WebSocket never
      // shows the body of a refused upgrade.
      preHandler: async (request) => {
        checkQuery(request, options);
      },
      handler: async () => {
        throw new InvalidRequestError('GET /v1/realtime is a WebSocket: send Upgrade: websocket');
      },
      wsHandler: async (socket, request) => {
        const { model } = checkQuery(request, options);
        const session = await options.sockets.admit(socket, request, 'transcription', options.sockets.limits.idleTimeoutMs);
        if (!session) return;
        const missing = missingPacksOf(options);
        if (missing) {
          request.log.info({ reason: missing.message }, 'realtime transcription refused: a pack is missing');
          const error = { type: 'invalid_request_error', code: 'pack_not_installed', message: missing.message, param: null, event_id: null };
          await session.send({ event_id: newId('event'), type: 'error', error }, options.writeStallTimeoutMs).catch(() => undefined);
          session.close(CloseCode.internal, missingPacksCloseReason(missing.missing));
          return;
        }
        const settings: TranscriptionSettings = { format: audioFormats[0]!, model, language: '', prompt: '', turnDetection: defaultServerVad, noiseReduction: null };
        const handler = new TranscriptionSessionSocket(session, settings, options, partialBudget);
        session.closed.signal.addEventListener('abort', () => handler.stop());
        handler.send({ type: 'session.created', session: describeSession(handler.id, settings, options.defaultLanguage()) });
        session.receive(handler.messages.receive);
        if (socket.isPaused && !handler.messages.backlogged) socket.resume();
      },
    });
  };
}
