/**
 * The Wyoming protocol (what Home Assistant's Wyoming integration speaks) on its own TCP port,
 * routing over the same use cases as the HTTP routes: streaming transcription (the live socket's
 * session) and synthesis. Wyoming has no authentication: every connection acts for the account of
 * config.wyoming.apiKey (checked at each connection, so a revoked key stops it).
 *
 * - `describe` → `info`: the loaded recognisers and the voices, with their languages.
 * - `transcribe` (optional: `language`, `name`), `audio-start`, `audio-chunk`s, `audio-stop` →
 *   `transcript-start`, a `transcript-chunk` per finished utterance as it is heard, then
 *   `transcript` (the whole text) and `transcript-stop`. Clients that do not stream just read `transcript`.
 * - `synthesize` → `audio-start`, `audio-chunk`s, `audio-stop`. Streaming: `synthesize-start`,
 *   `synthesize-chunk`s (each finished sentence is spoken at once as its own audio-start…audio-stop),
 *   `synthesize-stop` → the rest, then `synthesize-stopped`; a `synthesize` inside the stream is
 *   the copy sent for older servers and is not spoken twice.
 * - `ping` → `pong`.
 * Each `synthesize` spoken and each `synthesize-start` is one request of the account's synthesis
 * rate limit (the bucket REST and WebSocket synthesis draw on); past it the client gets an `error`
 * (`rate-limited`) instead, and a refused stream still ends with `synthesize-stopped`.
 * Limits are those of the WebSockets (config.realtime): connections per account (the same slots),
 * idle time, session length, the size of one event; audio waiting to be transcribed is bounded as
 * on the streaming socket. Events are handled one at a time and parsed only when their turn comes:
 * while one is handled (or its answer waits for a client that does not read), the socket is read
 * at most one event ahead, so a connection holds one parsed event and about one event's bytes.
 * A bad event gets an `error` event (`text`, `code`) and the connection goes on; only a header line
 * that cannot be read to its end closes it.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { Logger } from 'pino';
import type { ApiKeyService } from '../../accounts/api-keys.js';
import type { Config } from '../../config.js';
import type { Voice } from '../../engines/types.js';
import { AbortedError, PackNotInstalledError, RateLimitedError } from '../../errors.js';
import type { SynthesisService } from '../../synthesis/synthesize.js';
import type { VoiceRegistry } from '../../synthesis/voice-registry.js';
import { checkEngines } from '../../transcription/pipeline.js';
import { PartialBudget, StreamingTranscription } from '../../transcription/streaming-session.js';
import { requireTranscriptionEngines, requireVad, type HeldEngines } from '../../transcription/transcribe.js';
import { toDomainError } from '../plugins/error-mapping.js';
import { rateLimit } from '../plugins/rate-limit.js';
import type { RateLimitStore } from '../../store/rate-limits.js';
import type { SocketSlotStore } from '../../store/socket-slots.js';
import { sttLanguages } from '../schemas/transcription-query.js';
import { defaultTranscriptionLanguage } from '../routes/openai/transcriptions.js';
import { encodeEvent, EventReader, isProblem, type WyomingEvent } from './events.js';

export interface WyomingDeps {
  config: Pick<Config, 'wyoming' | 'realtime' | 'limits' | 'openai' | 'transcription' | 'rateLimits'>;
  version: string;
  apiKeys: ApiKeyService;
  slots: SocketSlotStore;
  voices: VoiceRegistry;
  synthesis?: SynthesisService;
  /** The rate-limit buckets the HTTP routes charge: Wyoming synthesis draws on the same ones. */
  rateLimitStore: RateLimitStore;
  /** The engines a transcription holds, until release(). */
  engines?: () => HeldEngines;
  /** The loaded recogniser packs and their languages. */
  recognizers(): { id: string; languages: string[] }[];
  log: Logger;
}

const PARLEY = { name: 'Parley', url: '' };
const SHERPA_ONNX = { name: 'sherpa-onnx', url: 'https://github.com/k2-fsa/sherpa-onnx' };
const ESPEAK_NG = { name: 'eSpeak NG', url: 'https://github.com/espeak-ng/espeak-ng' };
/** Longest JSON line of one event. */
const MAX_HEADER_BYTES = 64 * 1024;
/** Most JSON values in one event's data: what this server reads from an event is a few fields. */
const MAX_DATA_VALUES = 4_096;
/** The event types this server acts on (handle()); the data and payload of others are not read. */
const HANDLED_EVENTS: ReadonlySet<string> = new Set([
  'describe',
  'ping',
  'transcribe',
  'audio-start',
  'audio-chunk',
  'audio-stop',
  'synthesize',
  'synthesize-start',
  'synthesize-chunk',
  'synthesize-stop',
]);
/** Audio that may wait for the engines beyond an utterance's length before the stream is refused. */
const BACKLOG_SECONDS = 10;
/** A streamed text waiting for the end of its sentence is spoken anyway past this many characters (at a space). */
const MAX_PENDING_SENTENCE_CHARS = 400;
const SENTENCE_END = /[.!?。！？…]["'”’)\]]*\s/g;

class WyomingError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

/** Every voice once, whatever generations serve it. */
function allVoices(voices: VoiceRegistry): Voice[] {
  const seen = new Map<string, Voice>();
  for (const g of ['tts-v2', 'tts-v3.1', 'tts-large'] as const) for (const v of voices.list(g)) if (!seen.has(v.id)) seen.set(v.id, v);
  return [...seen.values()];
}

interface AudioFormat {
  rate: number;
  width: number;
  channels: number;
}

function audioFormat(data: Record<string, unknown>, event: string): AudioFormat {
  const { rate, width, channels } = data;
  if (!Number.isInteger(rate) || (rate as number) < 8_000 || (rate as number) > 48_000) throw new WyomingError(`${event}: rate must be a whole number of hertz from 8000 to 48000`, 'unsupported-audio');
  if (width !== 2) throw new WyomingError(`${event}: width must be 2 (16-bit samples)`, 'unsupported-audio');
  if (channels !== 1 && channels !== 2) throw new WyomingError(`${event}: channels must be 1 or 2`, 'unsupported-audio');
  return { rate: rate as number, width, channels };
}

/** 16-bit little-endian frames → mono samples; a frame split across chunks waits in `carry`. */
class PcmReader {
  private carry = Buffer.alloc(0);
  constructor(readonly format: AudioFormat) {}

  read(bytes: Buffer): Float32Array {
    const all = this.carry.length ? Buffer.concat([this.carry, bytes]) : bytes;
    const frameBytes = 2 * this.format.channels;
    const frames = Math.floor(all.length / frameBytes);
    this.carry = Buffer.from(all.subarray(frames * frameBytes));
    const out = new Float32Array(frames);
    for (let i = 0; i < frames; i++) {
      let sum = 0;
      for (let c = 0; c < this.format.channels; c++) sum += all.readInt16LE(i * frameBytes + c * 2);
      out[i] = sum / this.format.channels / 32768;
    }
    return out;
  }
}

interface Transcription {
  stt: StreamingTranscription;
  reader: PcmReader;
  engines: HeldEngines;
  language: string;
  /** Finished utterances' text, and how many were sent as transcript-chunk. */
  chunks: string[];
  sentChunks: number;
}

interface TextStream {
  voice: Voice;
  pending: string;
  spoken: number;
  /** Refused by the rate limit at its start: its text is dropped, and its end answered. */
  refused?: boolean;
}

class WyomingConnection {
  private readonly reader: EventReader;
  private readonly abort = new AbortController();
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly sessionTimer: NodeJS.Timeout;
  private requested: { language?: string; name?: string } = {};
  private transcription: Transcription | undefined;
  private textStream: TextStream | undefined;
  /** Whether an event is being handled: the next one is read from the buffered bytes only after it. */
  private handling = false;

  constructor(
    private readonly socket: Socket,
    private readonly accountId: string,
    private readonly deps: WyomingDeps,
    private readonly partialBudget: PartialBudget,
    /** Takes one synthesis request from the account's rate limit; throws RateLimitedError past it. */
    private readonly chargeSynthesis: () => Promise<void>,
    private readonly log: Logger,
  ) {
    const { realtime } = deps.config;
    this.reader = new EventReader({
      maxHeaderBytes: MAX_HEADER_BYTES,
      maxPayloadBytes: realtime.maxMessageBytes,
      maxDataValues: MAX_DATA_VALUES,
      handles: (type) => HANDLED_EVENTS.has(type),
    });
    this.sessionTimer = setTimeout(() => this.close(`session length limit of ${realtime.maxSessionSeconds} s reached`), realtime.maxSessionSeconds * 1000);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.once('close', () => this.stop());
    this.touch();
  }

  private touch(): void {
    clearTimeout(this.idleTimer);
    const ms = this.deps.config.realtime.idleTimeoutMs;
    // A connection whose events are still being worked on (a long transcription) is not idle.
    this.idleTimer = setTimeout(() => (this.handling ? this.touch() : this.close(`idle for ${Math.round(ms / 1000)} s`)), ms);
  }

  /** Ends the connection cleanly: an error event saying why, then FIN. */
  close(reason: string, code = 'closed'): void {
    if (this.socket.destroyed || this.socket.writableEnded) return;
    this.log.info({ reason }, 'wyoming connection closed by the server');
    this.socket.end(encodeEvent('error', { text: reason, code }));
    setTimeout(() => this.socket.destroy(), 1_000).unref();
  }

  private stop(): void {
    clearTimeout(this.idleTimer);
    clearTimeout(this.sessionTimer);
    this.abort.abort();
    this.endTranscription();
  }

  private endTranscription(): void {
    const t = this.transcription;
    this.transcription = undefined;
    if (!t) return;
    t.stt.close();
    t.engines.release();
  }

  /** Writes one event; waits while the client is not reading (up to the realtime limits' stall time, then the connection ends). */
  private async write(type: string, data: Record<string, unknown> = {}, payload?: Uint8Array): Promise<void> {
    if (this.socket.destroyed || this.socket.writableEnded) throw new AbortedError();
    this.touch();
    if (this.socket.write(encodeEvent(type, data, payload))) return;
    const drained = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), this.deps.config.realtime.idleTimeoutMs);
      this.socket.once('drain', () => (clearTimeout(timer), resolve(true)));
      this.socket.once('close', () => (clearTimeout(timer), resolve(false)));
    });
    if (!drained) {
      this.socket.destroy();
      throw new AbortedError();
    }
  }

  private onData(chunk: Buffer): void {
    this.touch();
    this.reader.push(chunk);
    this.flowControl();
    void this.handleEvents();
  }

  /**
   * Events are handled one at a time, in order, each parsed only when the one before is done: a
   * long one (a synthesis, a transcript, a write to a client that does not read) holds no queue of
   * parsed events behind it, only the bytes flowControl() lets in.
   */
  private async handleEvents(): Promise<void> {
    if (this.handling) return;
    this.handling = true;
    try {
      for (let item = this.reader.next(); item; item = this.reader.next()) {
        if (isProblem(item)) {
          if (item.fatal) return this.close(item.text, item.code);
          await this.write('error', { text: item.text, code: item.code }).catch((err: unknown) => this.report(err));
        } else {
          await this.handle(item).catch((err: unknown) => this.report(err));
        }
        this.flowControl();
      }
    } finally {
      this.handling = false;
      this.flowControl();
    }
  }

  /**
   * While an event is being handled the socket is read up to one more event's size ahead, then
   * paused until the events it holds are handled. While none is, it is always read: the reader's
   * limits bound what one unfinished event holds.
   */
  private flowControl(): void {
    if (this.socket.destroyed) return;
    const readAhead = this.deps.config.realtime.maxMessageBytes + MAX_HEADER_BYTES;
    if (this.handling && this.reader.heldBytes > readAhead) this.socket.pause();
    else if (this.socket.isPaused()) this.socket.resume();
  }

  private async report(err: unknown): Promise<void> {
    if (err instanceof AbortedError || this.socket.destroyed) return;
    if (err instanceof WyomingError) return this.write('error', { text: err.message, code: err.code }).catch(() => undefined);
    if (err instanceof PackNotInstalledError) return this.write('error', { text: err.message, code: 'pack-not-installed' }).catch(() => undefined);
    if (err instanceof RateLimitedError) {
      const text = `Synthesis rate limit of this account exceeded: try again in ${err.retryAfterSeconds ?? 1} s`;
      return this.write('error', { text, code: 'rate-limited' }).catch(() => undefined);
    }
    const domain = toDomainError(err, 'speech');
    if (domain && domain.status < 500) return this.write('error', { text: domain.message, code: 'invalid-request' }).catch(() => undefined);
    if (domain?.status === 503) return this.write('error', { text: domain.message, code: 'unavailable' }).catch(() => undefined);
    this.log.error({ err }, 'wyoming event failed');
    await this.write('error', { text: 'Internal server error', code: 'internal-error' }).catch(() => undefined);
  }

  private async handle(event: WyomingEvent): Promise<void> {
    const { data } = event;
    switch (event.type) {
      case 'describe':
        return this.write('info', this.info());
      case 'ping':
        return this.write('pong', typeof data.text === 'string' ? { text: data.text } : {});
      case 'transcribe': {
        const language = data.language;
        const name = data.name;
        if (language !== undefined && language !== null && typeof language !== 'string') throw new WyomingError('transcribe: language must be a string', 'malformed-event');
        if (name !== undefined && name !== null && typeof name !== 'string') throw new WyomingError('transcribe: name must be a string', 'malformed-event');
        if (typeof name === 'string' && !this.deps.recognizers().some((r) => r.id === name) && name !== 'parley') {
          throw new WyomingError(`transcribe: no recogniser "${name}" (describe lists them)`, 'unknown-model');
        }
        this.requested = { language: language ?? undefined, name: name ?? undefined };
        return;
      }
      case 'audio-start':
        return this.audioStart(data);
      case 'audio-chunk':
        return this.audioChunk(event);
      case 'audio-stop':
        return this.audioStop();
      case 'synthesize': {
        // Inside a stream this is the copy for servers that do not stream: the chunks carry the text.
        if (this.textStream) return;
        const voice = this.voiceOf(data.voice);
        const text = this.text(data.text, 'synthesize');
        await this.chargeSynthesis();
        return this.speak(voice, text);
      }
      case 'synthesize-start': {
        const voice = this.voiceOf(data.voice);
        try {
          await this.chargeSynthesis();
          this.textStream = { voice, pending: '', spoken: 0 };
        } catch (err) {
          this.textStream = { voice, pending: '', spoken: 0, refused: true };
          throw err;
        }
        return;
      }
      case 'synthesize-chunk':
        return this.synthesizeChunk(data);
      case 'synthesize-stop': {
        const stream = this.textStream;
        if (!stream) throw new WyomingError('synthesize-stop without synthesize-start', 'malformed-event');
        this.textStream = undefined;
        if (!stream.refused && stream.pending.trim()) await this.speak(stream.voice, stream.pending.trim());
        return this.write('synthesize-stopped');
      }
      default:
        // Other Wyoming services (wake words, intents, satellites) are not this server's: their events are left alone.
        this.log.debug({ type: event.type }, 'wyoming event ignored');
    }
  }

  private info(): Record<string, unknown> {
    const { version } = this.deps;
    const recognizers = this.deps.recognizers();
    const voices = allVoices(this.deps.voices);
    const artifact = (name: string, description: string, attribution = PARLEY) => ({ name, attribution, installed: true, description, version });
    return {
      asr: this.deps.engines && recognizers.length
        ? [
            {
              ...artifact('parley', 'Parley speech recognition'),
              models: recognizers.map((r) => ({ ...artifact(r.id, `Recogniser ${r.id}`, SHERPA_ONNX), languages: r.languages.filter((l) => l !== 'multi') })),
              supports_transcript_streaming: true,
            },
          ]
        : [],
      tts: this.deps.synthesis && voices.length
        ? [
            {
              ...artifact('parley', 'Parley speech synthesis'),
              voices: voices.map((v) => ({ ...artifact(v.id, v.displayName, v.engine.startsWith('espeak') ? ESPEAK_NG : SHERPA_ONNX), languages: v.languages, speakers: null })),
              supports_synthesize_streaming: true,
            },
          ]
        : [],
    };
  }

  private transcriptionLanguage(): string {
    const requested = this.requested.language;
    if (!requested) return defaultTranscriptionLanguage([...new Set(this.deps.recognizers().flatMap((r) => r.languages))]);
    const base = requested.toLowerCase().split(/[-_]/)[0]!;
    if (!(sttLanguages as readonly string[]).includes(base)) throw new WyomingError(`Language "${requested}" is not one Parley transcribes: ${sttLanguages.join(', ')}`, 'unsupported-language');
    return base;
  }

  private async audioStart(data: Record<string, unknown>): Promise<void> {
    const format = audioFormat(data, 'audio-start');
    if (!this.deps.engines) throw new WyomingError('Transcription is not available on this server (no recogniser is loaded)', 'unavailable');
    this.endTranscription();
    const language = this.transcriptionLanguage();
    const engines = this.deps.engines();
    try {
      requireTranscriptionEngines(engines, language);
      const vad = requireVad(engines);
      const recognizer = checkEngines(engines, { language, diarize: false });
      const { realtime } = this.deps.config;
      const t: Transcription = { stt: undefined as never, reader: new PcmReader(format), engines, language, chunks: [], sentChunks: 0 };
      t.stt = await StreamingTranscription.create(
        { vad, recognizer },
        {
          language,
          inputSampleRate: format.rate,
          wordTimestamps: false,
          diarize: false,
          vadEvents: false,
          eouSeconds: 0.8,
          partialIntervalSeconds: realtime.partialIntervalMs / 1000,
          maxUtteranceSeconds: realtime.maxUtteranceSeconds,
          partialBudget: this.partialBudget,
        },
        (event) => {
          if (event.type === 'transcription' && event.is_final && event.transcript) t.chunks.push(event.transcript);
        },
      );
      this.transcription = t;
    } catch (err) {
      engines.release();
      throw err;
    }
    await this.write('transcript-start', { language });
  }

  private async audioChunk(event: WyomingEvent): Promise<void> {
    const t = this.transcription;
    if (!t) throw new WyomingError('audio-chunk without audio-start', 'malformed-event');
    if (event.data.rate !== undefined) audioFormat(event.data, 'audio-chunk');
    if (!event.payload) return;
    t.stt.push(t.reader.read(event.payload));
    const limit = this.deps.config.realtime.maxUtteranceSeconds + BACKLOG_SECONDS;
    if (t.stt.heldSeconds > limit) {
      this.endTranscription();
      throw new WyomingError(`audio arrives faster than it can be transcribed (more than ${limit} s waiting): the transcription is dropped`, 'too-fast');
    }
    await this.sendChunks(t);
  }

  /** transcript-chunk events for the utterances finished since the last ones sent (a chunk adds to the text). */
  private async sendChunks(t: Transcription): Promise<void> {
    // Utterances finish in the background, also while earlier chunks are being sent.
    while (t.sentChunks < t.chunks.length) {
      const i = t.sentChunks++;
      await this.write('transcript-chunk', { text: (i > 0 ? ' ' : '') + t.chunks[i] });
    }
  }

  private async audioStop(): Promise<void> {
    const t = this.transcription;
    if (!t) throw new WyomingError('audio-stop without audio-start', 'malformed-event');
    try {
      await t.stt.finalize(true);
      await this.sendChunks(t);
      await this.write('transcript', { text: t.chunks.join(' '), language: t.language });
      await this.write('transcript-stop');
    } finally {
      if (this.transcription === t) this.endTranscription();
      this.requested = {};
    }
  }

  private voiceOf(value: unknown): Voice {
    const voices = allVoices(this.deps.voices);
    if (!this.deps.synthesis || voices.length === 0) throw new WyomingError('Synthesis is not available on this server (no voice is loaded)', 'unavailable');
    const given = value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {};
    if (typeof given.name === 'string' && given.name) {
      const voice = voices.find((v) => v.id === given.name);
      if (!voice) throw new WyomingError(`No voice "${given.name}" (describe lists them)`, 'unknown-voice');
      return voice;
    }
    if (typeof given.language === 'string' && given.language) {
      const wanted = given.language.toLowerCase().replace('_', '-');
      const voice = voices.find((v) => v.languages.some((l) => l.toLowerCase() === wanted)) ?? voices.find((v) => v.languages.some((l) => l.toLowerCase().split('-')[0] === wanted.split('-')[0]));
      if (!voice) throw new WyomingError(`No voice speaks "${given.language}"`, 'unknown-voice');
      return voice;
    }
    const { wyoming, openai } = this.deps.config;
    return voices.find((v) => v.id === wyoming.defaultVoice) ?? voices.find((v) => v.id === openai.voices.alloy) ?? voices[0]!;
  }

  private text(value: unknown, event: string): string {
    if (typeof value !== 'string' || !value.trim()) throw new WyomingError(`${event}: text must be a non-empty string`, 'malformed-event');
    const max = this.deps.config.limits.maxTextChars;
    if (value.length > max) throw new WyomingError(`${event}: text is longer than ${max} characters`, 'text-too-long');
    return value.trim();
  }

  private async synthesizeChunk(data: Record<string, unknown>): Promise<void> {
    const stream = this.textStream;
    if (!stream) throw new WyomingError('synthesize-chunk without synthesize-start', 'malformed-event');
    if (typeof data.text !== 'string') throw new WyomingError('synthesize-chunk: text must be a string', 'malformed-event');
    if (stream.refused) return;
    const max = this.deps.config.limits.maxTextChars;
    if (stream.spoken + stream.pending.length + data.text.length > max) {
      this.textStream = undefined;
      throw new WyomingError(`The streamed text is longer than ${max} characters: the stream is dropped`, 'text-too-long');
    }
    stream.pending += data.text;
    // Every finished sentence is spoken now; a long run without one is cut at its last space.
    let cut = 0;
    for (const m of stream.pending.matchAll(SENTENCE_END)) cut = m.index + m[0].length;
    if (cut === 0 && stream.pending.length > MAX_PENDING_SENTENCE_CHARS) cut = stream.pending.lastIndexOf(' ') + 1;
    if (cut <= 0) return;
    const ready = stream.pending.slice(0, cut).trim();
    stream.pending = stream.pending.slice(cut);
    stream.spoken += cut;
    if (ready) await this.speak(stream.voice, ready);
  }

  /** audio-start, the audio as it is made, audio-stop. */
  private async speak(voice: Voice, text: string): Promise<void> {
    const synthesis = this.deps.synthesis!;
    const rate = voice.sampleRate;
    const prepared = await synthesis.prepare({
      accountId: this.accountId,
      model: voice.models[0]!,
      text,
      voiceId: voice.id,
      sampleRate: rate,
      speed: 1,
      language: 'auto',
      outputFormat: 'pcm',
      pronunciationDicts: [],
    });
    const format = { rate, width: 2, channels: 1 };
    await this.write('audio-start', format);
    // 16-bit PCM, converted beside the engine (the synthesis output workers).
    for await (const bytes of synthesis.encodedStream(prepared, this.abort.signal)) await this.write('audio-chunk', format, bytes);
    await this.write('audio-stop');
  }
}

export interface WyomingServer {
  /** host:port it listens on. */
  address: AddressInfo;
  close(): Promise<void>;
}

/** Listens on config.wyoming.host:port; resolves once listening. */
export async function startWyoming(deps: WyomingDeps): Promise<WyomingServer> {
  const { config } = deps;
  const partialBudget = new PartialBudget(config.transcription.workers);
  // The family and store the HTTP app's synthesis routes use, so both charge one bucket per account.
  const synthesisLimit = rateLimit(deps.rateLimitStore, 'synthesis', config.rateLimits.synthesis);
  const connections = new Set<Socket>();
  const server: Server = createServer((socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
    socket.on('error', (err) => deps.log.info({ reason: err.message }, 'wyoming connection error'));
    socket.setNoDelay(true);
    // Nothing is read until the connection is admitted.
    socket.pause();
    void admit(socket);
  });
  async function admit(socket: Socket): Promise<void> {
    const log = deps.log.child({ remote: `${socket.remoteAddress}:${socket.remotePort}` });
    const refuse = (text: string, code: string) => {
      log.warn({ code }, `wyoming connection refused: ${text}`);
      socket.end(encodeEvent('error', { text, code }));
    };
    try {
      const key = await deps.apiKeys.authenticate(config.wyoming.apiKey);
      if (!key) return refuse('wyoming.apiKey is not a valid key: every Wyoming connection is refused until it is', 'unauthorized');
      const slot = { id: randomUUID(), accountId: key.accountId, kind: 'transcription' as const };
      const max = config.realtime.maxSocketsPerAccount;
      if (!(await deps.slots.take(slot, max))) return refuse(`too many open connections for this account (at most ${max})`, 'too-many-connections');
      if (socket.destroyed) return deps.slots.release(slot.id);
      socket.once('close', () => deps.slots.release(slot.id));
      new WyomingConnection(socket, key.accountId, deps, partialBudget, () => synthesisLimit.charge(key.accountId), log);
      socket.resume();
    } catch (err) {
      log.error({ err }, 'wyoming connection could not start');
      socket.destroy();
    }
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.wyoming.port, config.wyoming.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  deps.log.info({ host: config.wyoming.host, port: config.wyoming.port }, 'Wyoming listening');
  return {
    address: server.address() as AddressInfo,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of connections) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
