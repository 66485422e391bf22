/**
 * Streaming transcription: `<prefix>/<transcription name>/get_text` (GET /api/v1/stt/get_text,
 * /api/v1/pulse/get_text, …) and the current layout's /waves/v1/stt/live, upgraded to a WebSocket.
 * Binary frames carry audio of `encoding` at `sample_rate`; text frames are {"type":"finalize"} (a
 * final now, the stream goes on) and {"type":"close_stream"} (the last final, then the socket
 * closes). Every query value, and whether the engines it needs are installed, is checked before
 * the upgrade, so a bad one is a plain 4xx with the stt error body, the same sentences as POST
 * /get_text. On /stt/live a word's `speaker` is an integer (the legacy paths keep `speaker_0`).
 *
 * The product name (`pulse`) and /stt/live follow the service's defaults: formatted (format,
 * punctuate and capitalize true; format=false turns all three and itn_normalize off, which leaves
 * the words in lower case without marks), spoken numbers kept unless itn_normalize or numerals
 * asks for digits, a final every 10 words (finalize_on_words) or max_words; a final carries the
 * language heard (`language`, `languages`) and whether it answers a finalize (`from_finalize`).
 * The neutral name (`stt`) keeps the original API's: nothing added unless format=true, numerals
 * auto, finals on silence only, `language` on every message; punctuate, capitalize, itn_normalize
 * and max_words apply there when given.
 * Where partials come from (a live recognition stream, or re-decoding) is the session's business
 * (src/transcription/streaming-session.ts).
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RawData } from 'ws';
import { createStreamDecoder, type StreamDecoder, type StreamEncoding } from '../../audio/stream-decoder.js';
import { AbortedError, InvalidRequestError, PackNotInstalledError } from '../../errors.js';
import { missingPacksCloseReason } from '../../models/missing-packs.js';
import { checkEngines } from '../../transcription/pipeline.js';
import { PartialBudget, StreamingTranscription, type StreamingEvent } from '../../transcription/streaming-session.js';
import { requireTranscriptionEngines, requireVad, type HeldEngines } from '../../transcription/transcribe.js';
import { applyToLiveTranscriptWithModels, liveTranscriptionOptions, type LiveTextRequest, type LiveTranscriptionOptions } from '../../transcription/options/live.js';
import type { Punctuator } from '../../engines/types.js';
import { transcriptionOptionsFromQuery } from '../schemas/transcription-query.js';
import { toDomainError } from '../plugins/error-mapping.js';
import { OrderedMessages } from '../plugins/ordered-messages.js';
import { CloseCode, idleTimeoutFromQuery, type RealtimeSession, type RealtimeSockets } from '../plugins/realtime-sockets.js';
import { MAX_WORDS_PER_FINAL, ProductTranscriptionSocketQuery, TranscriptionSocketQuery, type TranscriptionSocketQueryValues } from '../schemas/realtime.js';
import { followsProductLanguages, TRANSCRIPTION_ROUTE_NAMES } from './product-names.js';
import { DETECT, detectsLanguage } from '../../transcription/languages.js';

export interface RealtimeTranscriptionOptions {
  /** The engines of the moment, held until release(). */
  engines(): HeldEngines;
  sockets: RealtimeSockets;
  writeStallTimeoutMs: number;
  /** Partial re-decodes at once across all sockets (the transcription workers: more would only queue); streaming recognisers need none. */
  partialSlots: number;
  /** Also serve /stt/live, the current layout's socket. */
  live?: boolean;
}

interface SocketSettings {
  language: string;
  encoding: StreamEncoding;
  sampleRate: number;
  wordTimestamps: boolean;
  diarize: boolean;
  vadEvents: boolean;
  eouSeconds: number;
  /** Finals come after eouSeconds of silence; without it only on finalize, close_stream or the utterance bound. */
  endpointing: boolean;
  sentenceTimestamps: boolean;
  fullTranscript: boolean;
  idleTimeoutMs: number;
  /** Most words in one final; unset: a final per utterance. */
  maxWords: number | undefined;
  /** keywords, numerals, format, redaction. */
  options: LiveTranscriptionOptions;
}

/** Words in a final when finalize_on_words is on and max_words is not given: the service's cadence. */
const DEFAULT_WORDS_PER_FINAL = 10;

/**
 * The transcript options of a socket's query. `product`: the service's defaults and precedence
 * (see the top of this file); else the original API's, with the service's flags applied as given.
 */
function liveTextRequestOf(q: TranscriptionSocketQueryValues, product: boolean): LiveTextRequest {
  const requested = transcriptionOptionsFromQuery(q);
  // Digits come from itn_normalize there; numerals (which the service still takes) only when given.
  const numerals = product && q.numerals === undefined ? false : requested.numerals;
  const punctuate = q.punctuate !== 'false';
  const capitalize = q.capitalize !== 'false';
  const itn = q.itn_normalize === 'true';
  if (!product) return { ...requested, itn, stripPunctuation: !punctuate, lowercase: !capitalize };
  if (q.format === 'false') return { ...requested, numerals, format: false, itn: false, stripPunctuation: true, lowercase: true };
  return { ...requested, numerals, format: punctuate || capitalize, itn, stripPunctuation: !punctuate, lowercase: !capitalize };
}

/** Most words in one final: max_words, else with finalize_on_words (default on for `product`) the service's cadence. */
function maxWordsOf(q: TranscriptionSocketQueryValues, product: boolean): number | undefined {
  if (q.max_words !== undefined) {
    const maxWords = Number(q.max_words);
    if (maxWords < 1 || maxWords > MAX_WORDS_PER_FINAL) throw new InvalidRequestError(`max_words must be between 1 and ${MAX_WORDS_PER_FINAL}`);
    return maxWords;
  }
  const onWords = q.finalize_on_words === undefined ? product : q.finalize_on_words === 'true';
  return onWords ? DEFAULT_WORDS_PER_FINAL : undefined;
}

/** Audio that may wait for the engines beyond an utterance's length before the client is told it sends too fast. */
const BACKLOG_SECONDS = 10;

function settingsOf(q: TranscriptionSocketQueryValues, options: RealtimeTranscriptionOptions, product: boolean): SocketSettings {
  const sampleRate = q.sample_rate === undefined ? 16_000 : Number(q.sample_rate);
  if (sampleRate < 8_000 || sampleRate > 48_000) throw new InvalidRequestError('sample_rate must be between 8000 and 48000');
  const eouMs = q.eou_timeout_ms === undefined ? 800 : Number(q.eou_timeout_ms);
  if (eouMs < 100 || eouMs > 10_000) throw new InvalidRequestError('eou_timeout_ms must be between 100 and 10000');
  return {
    language: q.language ?? 'en',
    // Ogg pages and raw packets are told apart by their bytes.
    encoding: (q.encoding === 'ogg_opus' ? 'opus' : (q.encoding ?? 'linear16')) as StreamEncoding,
    sampleRate,
    wordTimestamps: q.word_timestamps === 'true',
    diarize: q.diarize === 'true',
    vadEvents: (q.vad_events ?? q.vad) === 'true',
    eouSeconds: eouMs / 1000,
    endpointing: q.endpointing !== 'false',
    sentenceTimestamps: q.sentence_timestamps === 'true',
    fullTranscript: q.full_transcript === 'true',
    idleTimeoutMs: idleTimeoutFromQuery(q.timeout, options.sockets.limits),
    maxWords: maxWordsOf(q, product),
    options: liveTranscriptionOptions(liveTextRequestOf(q, product), q.language ?? 'en', eouMs / 1000),
  };
}

/** Checks the settings against the installed engines (throws the REST route's errors). */
function checkInstalled(engines: HeldEngines, settings: SocketSettings) {
  requireTranscriptionEngines(engines, settings.language);
  const vad = requireVad(engines);
  const recognizer = checkEngines(engines, settings);
  return { vad, recognizer, diarizer: engines.diarizer };
}

/** A pause between words this long ends a sentence when the recogniser writes no punctuation. */
const SENTENCE_PAUSE_SECONDS = 0.6;

type TranscriptEvent = Extract<StreamingEvent, { type: 'transcription' }>;

/** The sentences of a transcript with their times: split after end punctuation or at a long pause. */
function utterancesOf(event: TranscriptEvent, integerSpeakers: boolean) {
  if (event.words.length === 0) return event.transcript ? [{ text: event.transcript, start: event.start, end: event.end }] : [];
  const sentences: { text: string; start: number; end: number; speaker?: string | number }[] = [];
  let words: typeof event.words = [];
  const close = () => {
    if (words.length === 0) return;
    const speaker = words[0]!.speaker;
    sentences.push({
      text: words.map((w) => w.word).join(' '),
      start: words[0]!.start,
      end: words.at(-1)!.end,
      ...(speaker !== undefined && { speaker: integerSpeakers ? speakerNumber(speaker) : speaker }),
    });
    words = [];
  };
  for (const word of event.words) {
    const previous = words.at(-1);
    if (previous && (word.start - previous.end >= SENTENCE_PAUSE_SECONDS || word.speaker !== previous.speaker)) close();
    words.push(word);
    if (/[.!?…]["'”’)\]]*$/.test(word.word)) close();
  }
  close();
  return sentences;
}

/** `speaker_2` → 2. */
function speakerNumber(label: string): number {
  return Number(label.slice(label.lastIndexOf('_') + 1));
}

class TranscriptionSocket {
  /**
   * Messages are handled one at a time, in order: audio after a finalize belongs to the next final.
   * While a finalize waits for the engine, frames queue there (and the socket stops reading past its bounds).
   */
  readonly messages: OrderedMessages;
  /**
   * Messages to the client, made and sent one at a time in the order the session gave them: a
   * final waiting for the punctuation model (at most realtime.punctuationWaitMs) holds back what
   * comes after it, so finals stay in the order of their utterances.
   */
  private outbox: Promise<void> = Promise.resolve();
  private closing = false;
  /** The finals so far, for full_transcript. */
  private finals: string[] = [];

  constructor(
    private readonly session: RealtimeSession,
    private readonly stt: StreamingTranscription,
    private readonly decoder: StreamDecoder,
    private readonly settings: SocketSettings,
    private readonly options: RealtimeTranscriptionOptions,
    /** The current layout: integer speakers. */
    private readonly live: boolean,
    /** The product name or /stt/live: the service's fields (see the top of this file). */
    private readonly product: boolean,
    /** The languages of the recogniser serving the socket. */
    private readonly recognizerLanguages: readonly string[],
    /** For format=true on finals, when a punctuation pack is installed. */
    private readonly punctuator: Punctuator | undefined,
  ) {
    this.messages = new OrderedMessages(session, options.sockets, (data, isBinary) => this.handle(data, isBinary));
  }

  send(event: StreamingEvent): void {
    this.post(async () => (event.type === 'transcription' ? this.transcriptMessage(event) : event));
  }

  /** Queues a message made by `make` behind those before it. */
  private post(make: () => Promise<object> | object): void {
    this.outbox = this.outbox
      .then(async () => {
        const message = await make();
        this.session.send(message, this.options.writeStallTimeoutMs).catch(() => undefined);
      })
      .catch((err: unknown) => {
        // The socket went away while the message was made: nobody is left to tell.
        if (err instanceof AbortedError || !this.session.isOpen) return;
        this.session.request.log.error({ err }, 'streaming transcription: a message could not be made');
        this.session.send({ type: 'error', message: 'Internal server error' }, this.options.writeStallTimeoutMs).catch(() => undefined);
      });
  }

  private async transcriptMessage(heard: TranscriptEvent) {
    const { settings } = this;
    // Numerals, redaction and formatting change the transcript before anything is kept or sent.
    const applied = await applyToLiveTranscriptWithModels(heard, settings.options, {
      punctuator: this.punctuator,
      signal: this.session.closed.signal,
      waitMs: this.options.sockets.limits.punctuationWaitMs,
    });
    const event = { ...heard, ...applied };
    // Words are timed for sentence_timestamps too; they are sent only when asked for.
    const words = !settings.wordTimestamps ? undefined : this.live ? event.words.map((w) => ({ ...w, speaker: speakerNumber(w.speaker) })) : event.words;
    if (event.is_final && event.transcript) this.finals.push(event.transcript);
    const full = [...this.finals, ...(event.is_final ? [] : [event.transcript])].filter(Boolean).join(' ');
    const { requested, language: detected, ...fields } = event;
    const language = detected ?? this.pinnedLanguage();
    return {
      ...fields,
      words: words ?? [],
      status: 'success',
      session_id: this.session.request.id,
      // The service names the language on finals only, with every language heard in it.
      ...(!this.product ? { language } : event.is_final ? { language, languages: [language], from_finalize: Boolean(requested && !event.is_last) } : {}),
      ...(settings.sentenceTimestamps && { utterances: utterancesOf(event, this.live) }),
      ...(settings.fullTranscript && { full_transcript: full }),
    };
  }

  /** The language of a transcript the recogniser did not name: the one asked for, or for detection its first. */
  private pinnedLanguage(): string {
    const asked = this.settings.language;
    if (asked !== 'multi' && this.recognizerLanguages.includes(asked)) return asked;
    return this.recognizerLanguages.find((l) => l !== 'multi') ?? asked;
  }

  private error(message: string): void {
    this.post(() => ({ type: 'error', message }));
  }

  /** Closes the socket once every message before it is sent. */
  private async closeAfterMessages(code: number, reason: string): Promise<void> {
    await this.outbox;
    this.session.close(code, reason);
  }

  private async handle(data: RawData, isBinary: boolean): Promise<void> {
    if (this.closing || !this.session.isOpen) return;
    try {
      if (isBinary) {
        const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
        this.stt.push(await this.decoder.decode(bytes));
        const limit = this.options.sockets.limits.maxUtteranceSeconds + BACKLOG_SECONDS;
        if (this.stt.heldSeconds > limit) {
          this.error(`audio arrives faster than it can be transcribed (more than ${limit} s waiting)`);
          this.closing = true; // nothing more is taken while the messages before the error go out
          await this.closeAfterMessages(CloseCode.policy, 'audio arrives faster than it can be transcribed');
        }
        return;
      }
      let control: { type?: unknown } | null = null;
      try {
        control = JSON.parse(data.toString());
      } catch {
        // answered below
      }
      const type = control !== null && typeof control === 'object' ? control.type : undefined;
      if (type === 'finalize') {
        await this.stt.finalize(false);
      } else if (type === 'close_stream') {
        this.closing = true;
        await this.stt.finalize(true);
        await this.closeAfterMessages(CloseCode.normal, 'stream closed');
      } else {
        const overLimit = this.session.countMalformed();
        if (overLimit) {
          this.error(overLimit);
          this.closing = true; // nothing more is taken while the messages before the error go out
          await this.outbox;
          this.session.closeMalformed();
          return;
        }
        this.error('Text frames must be {"type":"finalize"} or {"type":"close_stream"}; audio goes in binary frames');
      }
    } catch (err) {
      if (err instanceof AbortedError || !this.session.isOpen) return;
      const domain = toDomainError(err, 'stt');
      // Bad input, or engines busy or restarting for now (503): the client is told, the stream goes on
      // (after close_stream there is no stream left: the socket closes once the client is told).
      if (domain && (domain.status < 500 || domain.status === 503)) {
        this.session.request.log.info({ reason: domain.message }, domain.status === 503 ? 'streaming transcription: engines unavailable' : 'streaming transcription: bad input');
        this.error(domain.message);
        if (this.closing) await this.closeAfterMessages(CloseCode.internal, 'the last final could not be made');
        return;
      }
      this.session.request.log.error({ err }, 'streaming transcription failed');
      this.error('Internal server error');
      await this.closeAfterMessages(CloseCode.internal, 'transcription failed');
    }
  }
}

export function realtimeTranscriptionRoutes(options: RealtimeTranscriptionOptions) {
  const partialBudget = new PartialBudget(options.partialSlots);
  return async function register(instance: FastifyInstance): Promise<void> {
    const app = instance.withTypeProvider<TypeBoxTypeProvider>();
    const paths = TRANSCRIPTION_ROUTE_NAMES.map((name) => `/${name}/get_text`);
    if (options.live) paths.push('/stt/live');
    for (const url of paths) {
      const live = url === '/stt/live';
      const product = live || url.startsWith('/pulse/');
      const productLanguages = followsProductLanguages(options.live ? 'current' : 'legacy', url.split('/')[1]!);
      app.route({
        method: 'GET',
        url,
        config: { rateFamily: 'transcription' },
        schema: { hide: true, querystring: productLanguages ? ProductTranscriptionSocketQuery : TranscriptionSocketQuery },
        // Before the upgrade: a bad value or a missing engine is a plain 4xx/503. A missing pack is
        // told inside the socket instead (an error message, then the close frame): a browser's
        // WebSocket never shows the body of a refused upgrade, only that it failed.
        preHandler: async (request) => {
          const engines = options.engines();
          try {
            checkInstalled(engines, settingsOf(request.query, options, product));
          } catch (err) {
            if (!(err instanceof PackNotInstalledError)) throw err;
          } finally {
            engines.release();
          }
        },
        handler: async (request) => {
          throw new InvalidRequestError(`GET ${request.routeOptions.url} is a WebSocket: send Upgrade: websocket (or POST audio to transcribe a file)`);
        },
        wsHandler: async (socket, request) => {
          const settings = settingsOf(request.query, options, product);
          // Not echoed (the service's rule): the operator's record of whose session this is.
          if (request.query.external_session_id) request.log.info({ externalSessionId: request.query.external_session_id }, "streaming transcription: the client's session id");
          // Nothing more is read until the session is ready: what came with the upgrade waits in the session.
          const session = await options.sockets.admit(socket, request, 'transcription', settings.idleTimeoutMs);
          if (!session) return;
          const engines = options.engines();
          let handler: TranscriptionSocket | undefined;
          try {
            const installed = checkInstalled(engines, settings);
            if (settings.options.hotwords) settings.options.keywordsApplied = Boolean(installed.recognizer.supportsHotwords);
            const decoder = await createStreamDecoder(settings.encoding, settings.sampleRate);
            const stt = await StreamingTranscription.create(
              installed,
              {
                // An aggregator is detection for the recogniser (restricted to its languages on batch only).
                language: detectsLanguage(settings.language) ? DETECT : settings.language,
                inputSampleRate: decoder.sampleRate,
                wordTimestamps: settings.wordTimestamps || settings.sentenceTimestamps,
                diarize: settings.diarize,
                vadEvents: settings.vadEvents,
                eouSeconds: settings.endpointing ? settings.eouSeconds : Infinity,
                partialIntervalSeconds: options.sockets.limits.partialIntervalMs / 1000,
                maxUtteranceSeconds: options.sockets.limits.maxUtteranceSeconds,
                partialBudget,
                ...(settings.options.hotwords ? { hotwords: settings.options.hotwords } : {}),
                ...(settings.maxWords !== undefined ? { maxWords: settings.maxWords } : {}),
              },
              (event) => handler?.send(event),
            );
            const stop = () => {
              stt.close();
              decoder.free();
              engines.release();
            };
            if (session.closed.signal.aborted) return stop();
            session.closed.signal.addEventListener('abort', stop);
            const punctuator = settings.options.text?.format ? engines.punctuator : undefined;
            handler = new TranscriptionSocket(session, stt, decoder, settings, options, live, product, installed.recognizer.languages, punctuator);
            session.receive(handler.messages.receive);
            // Else the queue resumes the socket once it has drained to half.
            if (socket.isPaused && !handler.messages.backlogged) socket.resume();
          } catch (err) {
            engines.release();
            if (err instanceof PackNotInstalledError) {
              request.log.info({ reason: err.message }, 'streaming transcription refused: a pack is missing');
              await session.send({ type: 'error', status: 'error', error_code: err.errorCode, message: err.message, session_id: request.id }, options.writeStallTimeoutMs).catch(() => undefined);
              session.close(CloseCode.internal, missingPacksCloseReason(err.missing));
              return;
            }
            request.log.error({ err }, 'streaming transcription could not start');
            session.close(CloseCode.internal, 'transcription could not start');
          }
        },
      });
    }
  };
}
