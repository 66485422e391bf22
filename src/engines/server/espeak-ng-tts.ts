/**
 * The built-in eSpeak NG engine: the Emscripten build in @echogarden/espeak-ng-emscripten, so a
 * fresh `npm ci` can speak every language of tts-v2 and the product models with no download.
 * eSpeak's WASM call is synchronous, so synthesis runs in a small pool of worker threads (espeak-ng-worker.ts), one
 * request at a time per worker; requests wait in FIFO order for a free worker.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { AbortedError, EngineError } from '../../errors.js';
import type { EspeakWorkerData, SynthesizeMessage, WordMark, WorkerReply } from './espeak-ng-worker.js';
import type { Gender, ModelGeneration, SynthesisOptions, TtsEngine, Voice } from '../types.js';

/** eSpeak's native output rate. */
export const espeakSampleRate = 22050;

/** Times each worker speaks during warmUp(): measured, a fresh worker's first two sentences took 330-390 ms, later ones 20-40 ms. */
const WARM_UP_ROUNDS = 3;

/** eSpeak's default rate, taken as speed 1. */
const baseWordsPerMinute = 175;
/** espeakRATE_MINIMUM and espeakRATE_MAXIMUM in speak_lib.h. */
const minWordsPerMinute = 80;
const maxWordsPerMinute = 450;

/** eSpeak's own base pitch and pitch range on its 0..99 scales. */
const defaultPitch = 50;
const defaultRange = 50;

/** How eSpeak speaks one request: a voice with variant and its prosody settings. */
export interface EspeakVoiceSettings {
  /** eSpeak voice name with variant, e.g. "en-us+f3". */
  voice: string;
  /** Words per minute; clamped to eSpeak's 80..450. */
  wordsPerMinute: number;
  /** Base pitch and pitch range, 0..99 (default 50). */
  pitch?: number;
  range?: number;
}

/** The built-in engine, which also speaks with settings that are not one of its listed voices (matched clones). */
export interface EspeakNgTts extends TtsEngine {
  speak(settings: EspeakVoiceSettings, text: string, options: SynthesisOptions): AsyncIterable<Float32Array>;
  /** Speaks a short text a few times on every worker (a server's warm start). */
  warmUp(): Promise<void>;
}

/** The eSpeak voice (without variant) of an ISO 639-1 code or tag ("en" → "en-us"); undefined when none. */
export function espeakVoiceForLanguage(language: string): string | undefined {
  const lower = language.toLowerCase();
  return (espeakLanguages.find((l) => l.slug === lower) ?? espeakLanguages.find((l) => l.languages.some((t) => t.toLowerCase() === lower)))?.espeakVoice;
}

/** eSpeak voice variants (espeak-ng-data/voices/!v). m3/f3 have the clearest pitch difference. */
const variants: Record<Exclude<Gender, 'neutral'>, string> = { male: '+m3', female: '+f3' };

const models: ModelGeneration[] = ['tts-large', 'tts-v2', 'tts-v3.1'];

interface EspeakLanguage {
  /** Middle part of our voice ids. */
  slug: string;
  /** File name of the eSpeak voice in the bundled data (espeak-ng-data/voices/<family>/<name>). */
  espeakVoice: string;
  label: string;
  languages: string[];
  accent: string;
}

/**
 * Every language of tts-v2 and of the service's product models, plus British English, Latin
 * American Spanish and Brazilian Portuguese because eSpeak has them.
 */
export const espeakLanguages: readonly EspeakLanguage[] = [
  { slug: 'en-us', espeakVoice: 'en-us', label: 'English (US)', languages: ['en', 'en-US'], accent: 'american' },
  { slug: 'en-gb', espeakVoice: 'en', label: 'English (UK)', languages: ['en', 'en-GB'], accent: 'british' },
  { slug: 'hi', espeakVoice: 'hi', label: 'Hindi', languages: ['hi', 'hi-IN'], accent: 'indian' },
  { slug: 'ta', espeakVoice: 'ta', label: 'Tamil', languages: ['ta', 'ta-IN'], accent: 'indian' },
  { slug: 'kn', espeakVoice: 'kn', label: 'Kannada', languages: ['kn', 'kn-IN'], accent: 'indian' },
  { slug: 'mr', espeakVoice: 'mr', label: 'Marathi', languages: ['mr', 'mr-IN'], accent: 'indian' },
  { slug: 'bn', espeakVoice: 'bn', label: 'Bengali', languages: ['bn', 'bn-IN'], accent: 'indian' },
  { slug: 'gu', espeakVoice: 'gu', label: 'Gujarati', languages: ['gu', 'gu-IN'], accent: 'indian' },
  { slug: 'ml', espeakVoice: 'ml', label: 'Malayalam', languages: ['ml', 'ml-IN'], accent: 'indian' },
  { slug: 'te', espeakVoice: 'te', label: 'Telugu', languages: ['te', 'te-IN'], accent: 'indian' },
  { slug: 'ar', espeakVoice: 'ar', label: 'Arabic', languages: ['ar'], accent: 'arabic' },
  { slug: 'he', espeakVoice: 'he', label: 'Hebrew', languages: ['he', 'he-IL'], accent: 'israeli' },
  { slug: 'fr', espeakVoice: 'fr', label: 'French (France)', languages: ['fr', 'fr-FR'], accent: 'french' },
  { slug: 'de', espeakVoice: 'de', label: 'German', languages: ['de', 'de-DE'], accent: 'german' },
  { slug: 'pl', espeakVoice: 'pl', label: 'Polish', languages: ['pl', 'pl-PL'], accent: 'polish' },
  { slug: 'ru', espeakVoice: 'ru', label: 'Russian', languages: ['ru', 'ru-RU'], accent: 'russian' },
  { slug: 'it', espeakVoice: 'it', label: 'Italian', languages: ['it', 'it-IT'], accent: 'italian' },
  { slug: 'nl', espeakVoice: 'nl', label: 'Dutch', languages: ['nl', 'nl-NL'], accent: 'dutch' },
  { slug: 'es', espeakVoice: 'es', label: 'Spanish (Spain)', languages: ['es', 'es-ES'], accent: 'spanish' },
  { slug: 'es-419', espeakVoice: 'es-419', label: 'Spanish (Latin America)', languages: ['es', 'es-419'], accent: 'latin american' },
  { slug: 'sv', espeakVoice: 'sv', label: 'Swedish', languages: ['sv', 'sv-SE'], accent: 'swedish' },
  { slug: 'pa', espeakVoice: 'pa', label: 'Punjabi', languages: ['pa', 'pa-IN'], accent: 'indian' },
  { slug: 'or', espeakVoice: 'or', label: 'Odia', languages: ['or', 'or-IN'], accent: 'indian' },
  { slug: 'pt', espeakVoice: 'pt', label: 'Portuguese (Portugal)', languages: ['pt', 'pt-PT'], accent: 'portuguese' },
  { slug: 'pt-br', espeakVoice: 'pt-br', label: 'Portuguese (Brazil)', languages: ['pt', 'pt-BR'], accent: 'brazilian' },
  { slug: 'el', espeakVoice: 'el', label: 'Greek', languages: ['el', 'el-GR'], accent: 'greek' },
  { slug: 'fi', espeakVoice: 'fi', label: 'Finnish', languages: ['fi', 'fi-FI'], accent: 'finnish' },
  { slug: 'no', espeakVoice: 'nb', label: 'Norwegian (Bokmål)', languages: ['no', 'nb', 'nb-NO'], accent: 'norwegian' },
  { slug: 'tr', espeakVoice: 'tr', label: 'Turkish', languages: ['tr', 'tr-TR'], accent: 'turkish' },
  // eSpeak reads Hanzi in Mandarin, but of Japanese only kana (a kanji is named, not read).
  { slug: 'zh', espeakVoice: 'cmn', label: 'Chinese (Mandarin)', languages: ['zh', 'zh-CN', 'cmn'], accent: 'chinese' },
  { slug: 'ja', espeakVoice: 'ja', label: 'Japanese', languages: ['ja', 'ja-JP'], accent: 'japanese' },
  { slug: 'ko', espeakVoice: 'ko', label: 'Korean', languages: ['ko', 'ko-KR'], accent: 'korean' },
  { slug: 'id', espeakVoice: 'id', label: 'Indonesian', languages: ['id', 'id-ID'], accent: 'indonesian' },
  { slug: 'ms', espeakVoice: 'ms', label: 'Malay', languages: ['ms', 'ms-MY'], accent: 'malaysian' },
  { slug: 'vi', espeakVoice: 'vi', label: 'Vietnamese', languages: ['vi', 'vi-VN'], accent: 'vietnamese' },
];

/** speed 0.5..2 → eSpeak words per minute (`base` is the voice's own rate at speed 1). */
export function speedToWordsPerMinute(speed: number, base = baseWordsPerMinute): number {
  const wpm = Math.round(base * speed);
  return Math.min(maxWordsPerMinute, Math.max(minWordsPerMinute, wpm));
}

const clampSetting = (v: number | undefined, fallback: number) => Math.min(99, Math.max(0, Math.round(v ?? fallback)));

function buildVoices(available: Set<string>): { voice: Voice; espeakName: string }[] {
  return espeakLanguages
    .filter((l) => available.has(l.espeakVoice.toLowerCase()))
    .flatMap((l) =>
      (['male', 'female'] as const).map((gender) => ({
        espeakName: `${l.espeakVoice}${variants[gender]}`,
        voice: {
          id: `espeak-${l.slug}-${gender}`,
          displayName: `eSpeak ${l.label} — ${gender}`,
          languages: l.languages,
          accent: l.accent,
          gender,
          sampleRate: espeakSampleRate,
          engine: 'espeak-ng',
          models,
        },
      })),
    );
}

/** Where the worker script is: its compiled .js, or its .ts source when running under tsx. */
function workerEntry(): { code: string; eval: true } | { url: URL } {
  const compiled = new URL('./espeak-ng-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(compiled))) return { url: compiled };
  const source = new URL('./espeak-ng-worker.ts', import.meta.url);
  let tsx: string;
  try {
    tsx = import.meta.resolve('tsx/esm/api');
  } catch {
    return { url: source }; // a Node that strips types itself
  }
  // Node 20 does not apply tsx's --import hooks to a worker's entry file, so the worker
  // registers tsx itself before importing the .ts module.
  return {
    eval: true,
    code: `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(source.href)}); });`,
  };
}

/** What a running request sees of its worker's replies. */
interface RequestChannel {
  id: number;
  chunks: Float32Array[];
  finished: boolean;
  /** Where eSpeak started each word, once done. */
  words?: WordMark[];
  error?: Error;
  /** Wakes the consumer waiting for the next reply. */
  wake?: () => void;
}

/** One worker thread; serves one request at a time. */
class EspeakWorker {
  private readonly worker: Worker;
  private readonly cancel: Int32Array;
  private nextId = 1;
  private current: RequestChannel | undefined;
  readonly ready: Promise<string[]>;
  /** Called when the worker is free again (its current request answered done/error). */
  onIdle: () => void = () => {};
  dead = false;
  /**
   * Set from the moment a request is handed this worker until it calls start(): the request
   * resumes a microtask later, and another request must not take the worker meanwhile.
   */
  reserved = false;

  constructor() {
    const shared = new SharedArrayBuffer(4);
    this.cancel = new Int32Array(shared);
    const workerData: EspeakWorkerData = { cancel: shared };
    const entry = workerEntry();
    this.worker = 'url' in entry ? new Worker(entry.url, { workerData }) : new Worker(entry.code, { eval: true, workerData });
    this.ready = new Promise((resolve, reject) => {
      const onMessage = (reply: WorkerReply): void => {
        if (reply.type === 'ready') resolve(reply.voiceNames);
        else if (reply.type === 'init-error') reject(new EngineError(`eSpeak NG failed to start: ${reply.message}`));
        else this.handle(reply);
      };
      this.worker.on('message', onMessage);
      this.worker.on('error', (err) => {
        reject(new EngineError(`eSpeak NG worker failed: ${err.message}`));
        this.fail(new EngineError(`eSpeak NG worker failed: ${err.message}`));
      });
      this.worker.on('exit', (code) => {
        reject(new EngineError(`eSpeak NG worker exited with code ${code}`));
        this.fail(new EngineError(`eSpeak NG worker exited with code ${code}`));
      });
    });
    // A rejection before anyone awaits `ready` must not become an unhandled rejection.
    this.ready.catch(() => {});
    // An idle worker must not keep the process alive (e.g. a CLI command that forgot close()).
    this.ready.then(() => this.dead || this.worker.unref(), () => {});
  }

  get busy(): boolean {
    return this.reserved || this.current !== undefined;
  }

  start(message: Omit<SynthesizeMessage, 'type' | 'id'>): RequestChannel {
    const channel: RequestChannel = { id: this.nextId++, chunks: [], finished: false };
    this.reserved = false;
    this.current = channel;
    this.worker.ref();
    this.worker.postMessage({ type: 'synthesize', id: channel.id, ...message } satisfies SynthesizeMessage);
    return channel;
  }

  /** Asks the worker to stop `channel`; it stays busy until the worker confirms. */
  abort(channel: RequestChannel): void {
    if (this.current === channel) Atomics.store(this.cancel, 0, channel.id);
  }

  async terminate(): Promise<void> {
    this.dead = true;
    // An idle worker is unref'd; without a ref the process may run out of events before the
    // worker's exit arrives, and whoever awaits close() is left with a promise that never settles.
    this.worker.ref();
    await this.worker.terminate();
  }

  private handle(reply: WorkerReply): void {
    const channel = this.current;
    if (!channel || !('id' in reply) || reply.id !== channel.id) return;
    if (reply.type === 'chunk') channel.chunks.push(reply.samples);
    else {
      if (reply.type === 'error') channel.error = new EngineError(`eSpeak NG failed: ${reply.message}`);
      if (reply.type === 'done') channel.words = reply.words;
      channel.finished = true;
      this.current = undefined;
      // Once terminating, the worker stays ref'd until it exits (see terminate()): the last
      // message of an aborted request may arrive in between.
      if (!this.dead) this.worker.unref();
      this.onIdle();
    }
    channel.wake?.();
  }

  private fail(error: Error): void {
    this.dead = true;
    const channel = this.current;
    this.current = undefined;
    if (channel) {
      channel.error = error;
      channel.finished = true;
      channel.wake?.();
    }
    this.onIdle();
  }
}

class EspeakNgEngine implements EspeakNgTts {
  readonly name = 'espeak-ng';
  /** eSpeak spells numbers and abbreviations in the voice's own language. */
  readonly normalizesText = true;
  private readonly voices: Voice[];
  private readonly espeakNames = new Map<string, string>();
  /** Requests waiting for a free worker, oldest first. */
  private readonly waiting: { resolve: (w: EspeakWorker) => void; reject: (e: Error) => void }[] = [];
  private closed = false;

  constructor(
    private readonly workers: EspeakWorker[],
    available: Set<string>,
  ) {
    const built = buildVoices(available);
    this.voices = built.map((b) => b.voice);
    for (const b of built) this.espeakNames.set(b.voice.id, b.espeakName);
    for (const w of workers) w.onIdle = () => this.dispatch();
  }

  listVoices(): Voice[] {
    return this.voices;
  }

  async *synthesize(voice: Voice, text: string, options: SynthesisOptions): AsyncIterable<Float32Array> {
    const espeakName = this.espeakNames.get(voice.id);
    if (!espeakName) throw new EngineError(`eSpeak NG has no voice ${voice.id}`);
    yield* this.speak({ voice: espeakName, wordsPerMinute: speedToWordsPerMinute(options.speed) }, text, options);
  }

  async *speak(settings: EspeakVoiceSettings, text: string, options: SynthesisOptions): AsyncIterable<Float32Array> {
    const { signal } = options;
    if (signal?.aborted) throw new AbortedError();

    const worker = await this.acquire(signal);
    const channel = worker.start({
      text,
      voice: settings.voice,
      rate: speedToWordsPerMinute(1, settings.wordsPerMinute),
      pitch: clampSetting(settings.pitch, defaultPitch),
      range: clampSetting(settings.range, defaultRange),
    });
    const onAbort = (): void => {
      worker.abort(channel);
      channel.wake?.();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      for (;;) {
        if (signal?.aborted) throw new AbortedError();
        const chunk = channel.chunks.shift();
        if (chunk) {
          yield chunk;
          continue;
        }
        if (channel.error) throw channel.error;
        if (channel.finished) {
          if (channel.words) options.onWords?.(channel.words.map((w) => ({ start: w.start, length: w.length, seconds: w.ms / 1000 })));
          return;
        }
        await new Promise<void>((resolve) => (channel.wake = resolve));
        channel.wake = undefined;
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      // Also reached when the consumer stops iterating early: free the worker for the next request.
      if (!channel.finished) worker.abort(channel);
    }
  }

  /**
   * V8 compiles eSpeak's WebAssembly in tiers as it runs, so each worker's first few sentences
   * run several times slower: every worker speaks a short sentence WARM_UP_ROUNDS times, as many
   * at once as there are workers, so each takes one.
   */
  async warmUp(): Promise<void> {
    const settings = { voice: 'en-us', wordsPerMinute: baseWordsPerMinute };
    for (let round = 0; round < WARM_UP_ROUNDS; round++) {
      await Promise.all(
        this.workers.map(async () => {
          for await (const piece of this.speak(settings, 'The quick brown fox jumps over the lazy dog.', { speed: 1, language: 'en' })) void piece;
        }),
      );
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.waiting.splice(0)) w.reject(new EngineError('eSpeak NG engine is closed'));
    await Promise.all(this.workers.map((w) => w.terminate()));
  }

  private acquire(signal: AbortSignal | undefined): Promise<EspeakWorker> {
    if (this.closed) return Promise.reject(new EngineError('eSpeak NG engine is closed'));
    const free = this.workers.find((w) => !w.busy && !w.dead);
    if (free && this.waiting.length === 0) {
      free.reserved = true;
      return Promise.resolve(free);
    }
    if (this.workers.every((w) => w.dead)) return Promise.reject(new EngineError('eSpeak NG workers are gone'));
    return new Promise((resolve, reject) => {
      const entry = {
        resolve: (w: EspeakWorker) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(w);
        },
        reject,
      };
      const onAbort = (): void => {
        const i = this.waiting.indexOf(entry);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(new AbortedError());
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(entry);
    });
  }

  /** Hands free workers to waiting requests. */
  private dispatch(): void {
    for (const worker of this.workers) {
      if (this.waiting.length === 0) return;
      if (!worker.busy && !worker.dead) {
        worker.reserved = true;
        this.waiting.shift()!.resolve(worker);
      }
    }
    if (this.waiting.length > 0 && this.workers.every((w) => w.dead)) {
      for (const w of this.waiting.splice(0)) w.reject(new EngineError('eSpeak NG workers are gone'));
    }
  }
}

/**
 * Starts the worker pool and waits until every worker has loaded eSpeak (~0.2 s and ~50 MB each).
 * `workers` defaults to 1: eSpeak runs far faster than real time, and the machine is small.
 */
export async function createEspeakNgEngine(options: { workers?: number } = {}): Promise<EspeakNgTts> {
  const count = Math.max(1, Math.floor(options.workers ?? 1));
  const workers = Array.from({ length: count }, () => new EspeakWorker());
  let voiceNames: string[][];
  try {
    voiceNames = await Promise.all(workers.map((w) => w.ready));
  } catch (err) {
    await Promise.all(workers.map((w) => w.terminate()));
    throw err;
  }
  return new EspeakNgEngine(workers, new Set(voiceNames[0]));
}
