/**
 * Worker-thread side of the built-in eSpeak NG engine (espeak-ng-tts.ts is the main-thread side).
 * The Emscripten build synthesises synchronously, so it lives here, off the event loop. One
 * request at a time: the main thread never sends a second one before this worker answered `done`.
 *
 * Protocol (main → worker): `{ type: 'synthesize', id, text, voice, rate, pitch, range }`.
 * Worker → main: `ready` (with the voice names of the bundled data) or `init-error` once, then per
 * request any number of `chunk` (Float32Array PCM at 22.05 kHz, transferred), then `done` (with where
 * eSpeak started each word) or `error`.
 * Abort: the main thread writes the request id into the shared `cancel` cell; the synthesis
 * callback reads it and tells eSpeak to stop, so an abort takes effect within one eSpeak buffer.
 */
import { parentPort, workerData } from 'node:worker_threads';

export interface EspeakWorkerData {
  /** Int32Array(1) over a SharedArrayBuffer: id of the request the main thread wants stopped. */
  cancel: SharedArrayBuffer;
}

export interface SynthesizeMessage {
  type: 'synthesize';
  id: number;
  /** Plain text; escaped here because the bundled build parses its input as SSML. */
  text: string;
  /** eSpeak voice name with variant, e.g. "en-us+f3". */
  voice: string;
  /** Words per minute, already clamped to eSpeak's range. */
  rate: number;
  /** eSpeak's base pitch and pitch range, 0..99 (50 is the voice's own). */
  pitch: number;
  range: number;
}

export type WorkerReply =
  /** voiceNames: file names of the bundled voices, lower case. */
  | { type: 'ready'; voiceNames: string[] }
  | { type: 'init-error'; message: string }
  | { type: 'chunk'; id: number; samples: Float32Array }
  | { type: 'done'; id: number; aborted: boolean; words: WordMark[] }
  | { type: 'error'; id: number; message: string };

interface EspeakEvent {
  type: string;
  /** 1-based character position in the text given to eSpeak (for `word`: the word's first). */
  text_position: number;
  word_length: number;
  /** Milliseconds from the start of this synthesis. */
  audio_position: number;
}

/** A word eSpeak spoke: `length` characters at `start` (0-based) of the request's text, at `ms`. */
export interface WordMark {
  start: number;
  length: number;
  ms: number;
}

/** The part of the Emscripten module's eSpeakNGWorker class used here. */
interface EspeakInstance {
  set_voice(name: string): number;
  set_rate(wordsPerMinute: number): number;
  set_pitch(pitch: number): number;
  set_range(range: number): number;
  list_voices(): { identifier: string; name: string; languages: { priority: number; name: string }[] }[];
  /** Calls back with int16 PCM and its events; returning true stops the synthesis. */
  synthesize(text: string, callback: (samples: Int16Array | undefined, events: EspeakEvent[]) => boolean): void;
}

interface EspeakModule {
  eSpeakNGWorker: new () => EspeakInstance;
}

// Keeps worker→main messages big enough to be cheap but small enough to stream: eSpeak's own
// buffers are ~100 ms; we flush at each clause end, or once this much audio has piled up.
const maxBufferedSamples = 22050;
/**
 * The first piece of each text goes out after ~0.1 s of audio (eSpeak's first buffer, ~1 ms of
 * work) instead of a second's worth (~5 ms): that is the time to first audio a client waits for.
 */
const firstPieceSamples = 2205;

const port = parentPort;
if (!port) throw new Error('espeak-ng-worker must run in a worker thread');
const cancel = new Int32Array((workerData as EspeakWorkerData).cancel);

const SSML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

/**
 * The text as the bundled build reads it (SSML), and for each of its characters the position of
 * the character of `text` it came from, so eSpeak's word positions can be given in `text`'s terms.
 */
function escapeForSsml(text: string): { escaped: string; origin: number[] } {
  let escaped = '';
  const origin: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const out = SSML_ESCAPES[text[i]!] ?? text[i]!;
    escaped += out;
    for (let k = 0; k < out.length; k++) origin.push(i);
  }
  return { escaped, origin };
}

function toFloat(chunks: Int16Array[], total: number): Float32Array {
  const out = new Float32Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    for (let i = 0; i < chunk.length; i++) out[offset + i] = chunk[i]! / 32768;
    offset += chunk.length;
  }
  return out;
}

function synthesize(instance: EspeakInstance, message: SynthesizeMessage): void {
  const { id } = message;
  if (instance.set_voice(message.voice) !== 0) {
    port!.postMessage({ type: 'error', id, message: `eSpeak has no voice "${message.voice}"` } satisfies WorkerReply);
    return;
  }
  instance.set_rate(message.rate);
  // Set on every request: the instance keeps the previous request's values otherwise.
  instance.set_pitch(message.pitch);
  instance.set_range(message.range);

  let pending: Int16Array[] = [];
  let pendingLength = 0;
  let sentPieces = 0;
  let aborted = false;
  const flush = (): void => {
    if (pendingLength === 0) return;
    const samples = toFloat(pending, pendingLength);
    pending = [];
    pendingLength = 0;
    sentPieces++;
    port!.postMessage({ type: 'chunk', id, samples } satisfies WorkerReply, [samples.buffer as ArrayBuffer]);
  };

  const { escaped, origin } = escapeForSsml(message.text);
  const words: WordMark[] = [];
  instance.synthesize(escaped, (samples, events) => {
    if (Atomics.load(cancel, 0) === id) {
      aborted = true;
      return true;
    }
    for (const event of events) {
      const at = origin[event.text_position - 1];
      if (event.type !== 'word' || at === undefined) continue;
      const last = origin[Math.min(origin.length, event.text_position - 1 + event.word_length) - 1] ?? at;
      words.push({ start: at, length: last - at + 1, ms: event.audio_position });
    }
    if (samples && samples.length > 0) {
      pending.push(samples);
      pendingLength += samples.length;
    }
    const limit = sentPieces === 0 ? firstPieceSamples : maxBufferedSamples;
    if (events.some((e) => e.type === 'end') || pendingLength >= limit) flush();
    return false;
  });
  if (!aborted) flush();
  port!.postMessage({ type: 'done', id, aborted, words } satisfies WorkerReply);
}

async function start(): Promise<void> {
  let instance: EspeakInstance;
  try {
    // The package ships no type declarations; the specifier in a variable keeps tsc from asking.
    const specifier = '@echogarden/espeak-ng-emscripten';
    const { default: createModule } = (await import(specifier)) as { default: () => Promise<EspeakModule> };
    const module = await createModule();
    instance = new module.eSpeakNGWorker();
  } catch (err) {
    port!.postMessage({ type: 'init-error', message: (err as Error).message } satisfies WorkerReply);
    return;
  }
  // Voice files are found by file name, case-insensitively ("en-us" for gmw/en-US).
  const voiceNames = instance.list_voices().map((v) => v.identifier.slice(v.identifier.lastIndexOf('/') + 1).toLowerCase());
  port!.on('message', (message: SynthesizeMessage) => {
    try {
      synthesize(instance, message);
    } catch (err) {
      port!.postMessage({ type: 'error', id: message.id, message: (err as Error).message } satisfies WorkerReply);
    }
  });
  port!.postMessage({ type: 'ready', voiceNames } satisfies WorkerReply);
}

void start();
