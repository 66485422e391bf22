/**
 * The inference tasks: one kind per sherpa-onnx capability, each carrying the plain-data config
 * that builds its model, so whichever process or thread runs it can load the model on first use.
 * Everything here crosses a thread or process boundary, so it is structured-clone data only
 * (samples travel as Float32Array bytes, never as JSON).
 *
 * The synchronous kinds (POOL_TASK_KINDS) run on worker threads (worker-pool.ts, sherpa-worker.ts);
 * TTS and offline recognition use sherpa's async calls and run on libuv's pool (inference-core.ts).
 */

import type {
  SherpaAudioEvent,
  SherpaAudioTaggingConfig,
  SherpaClusteringConfig,
  SherpaDiarizationConfig,
  SherpaOfflineRecognizerConfig,
  SherpaOfflineResult,
  SherpaOfflineTtsConfig,
  SherpaOfflinePunctuationConfig,
  SherpaOnlinePunctuationConfig,
  SherpaOnlineRecognizerConfig,
  SherpaVadConfig,
} from './sherpa-onnx.js';

/**
 * `key` names the loaded model inside a worker (pack id + role + config): a worker builds the model
 * the first time it sees a key and keeps it for every later task with that key.
 */
interface TaskBase {
  key: string;
}

/**
 * Between a model's key and what a variant of it changes (a VAD threshold, a hotwords file): a
 * variant is built from the same files with other settings, and unloading the model's key
 * unloads its variants too.
 */
export const VARIANT_SEPARATOR = '\0';

interface AudioTaskBase extends TaskBase {
  /** Mono samples at the model's rate. A copy is sent; the caller keeps its array. */
  samples: Float32Array;
}

export interface VadTask extends AudioTaskBase {
  kind: 'vad';
  config: SherpaVadConfig;
  /** Capacity of sherpa's internal sample buffer; must exceed maxSpeechDuration. */
  bufferSeconds: number;
}

export interface OnlineAsrTask extends AudioTaskBase {
  kind: 'online-asr';
  config: SherpaOnlineRecognizerConfig;
  sampleRate: number;
  /** Silence appended before inputFinished() so the last frames are decoded (sherpa examples use 0.4-0.66 s). */
  tailPaddingSeconds: number;
  /** This decode's hotwords: "PHRASE :score" entries joined by "/" (the config decodes with modified beam search). */
  hotwords?: string;
  /** Give them through a hotwords file (a model per list) even where the stream could take them. */
  hotwordsFromFile?: boolean;
}

/**
 * One step of a live streaming recognition: the OnlineStream lives in one worker thread from
 * `open` to `finish` or `close`, and every task naming it runs on that thread (worker-pool.ts
 * routes them; the supervisor sends them to the process that opened it).
 * - open: creates the stream (loading the model on first use); no audio.
 * - accept: takes `samples`, decodes every chunk that is ready, returns the hypothesis so far.
 * - finish: appends `tailPaddingSeconds` of silence, marks the input finished, decodes the rest,
 *   returns the final hypothesis and drops the stream.
 * - close: drops the stream (no answer but done; unknown streams are fine).
 */
export interface OnlineStreamTask extends AudioTaskBase {
  kind: 'online-stream';
  config: SherpaOnlineRecognizerConfig;
  op: 'open' | 'accept' | 'finish' | 'close';
  /** Names the stream; unique across the server (a UUID). */
  stream: string;
  sampleRate: number;
  tailPaddingSeconds: number;
  /** The stream's hotwords, given at `open` (as in OnlineAsrTask). */
  hotwords?: string;
  hotwordsFromFile?: boolean;
}

export interface DiarizeTask extends AudioTaskBase {
  kind: 'diarize';
  config: SherpaDiarizationConfig;
  /** Applied with setConfig() before each run, so one loaded model serves every clustering setting. */
  clustering: SherpaClusteringConfig;
  /** Score each segment (embedding it again): only for callers that send the score. */
  withConfidence?: boolean;
}

export interface TaggingTask extends AudioTaskBase {
  kind: 'tagging';
  config: SherpaAudioTaggingConfig;
  sampleRate: number;
}

/** Loads a TTS model (if not yet loaded) and tells what it is. */
export interface TtsLoadTask extends TaskBase {
  kind: 'tts-load';
  config: SherpaOfflineTtsConfig;
}

/** The voice a zero-shot pack speaks in: a sample of it, and what the sample says. */
export interface TtsReference {
  /** Mono samples; they travel with every task (a clone's sample is at most ~15 s, ~1.4 MB). */
  samples: Float32Array;
  sampleRate: number;
  /** For packs that condition on the words of the sample too (the others ignore it). */
  text?: string;
}

/** One sentence or clause; audio comes back as progress, a piece per sherpa callback. */
export interface TtsTask extends TaskBase {
  kind: 'tts';
  config: SherpaOfflineTtsConfig;
  text: string;
  sid: number;
  speed: number;
  /** Zero-shot packs only: the voice to speak in. */
  reference?: TtsReference;
}

export interface OfflineAsrLoadTask extends TaskBase {
  kind: 'offline-asr-load';
  config: SherpaOfflineRecognizerConfig;
}

export interface OfflineAsrTask extends AudioTaskBase {
  kind: 'offline-asr';
  /** A recogniser whose language lives in its config gets the task's config applied before its decode. */
  config: SherpaOfflineRecognizerConfig;
  sampleRate: number;
  /** This decode's hotwords: "PHRASE :score" entries joined by "/" (the recogniser decodes with modified beam search). */
  hotwords?: string;
}

/** Punctuates a text: `OfflinePunctuation` (CT-Transformer) or `OnlinePunctuation` (CNN-BiLSTM, also restores case), by its config's model. */
export interface PunctuateTask extends TaskBase {
  kind: 'punctuate';
  config: SherpaOfflinePunctuationConfig | SherpaOnlinePunctuationConfig;
  text: string;
}

export type PoolTask = VadTask | OnlineAsrTask | OnlineStreamTask | DiarizeTask | TaggingTask | PunctuateTask;
export type InferenceTask = PoolTask | TtsLoadTask | TtsTask | OfflineAsrLoadTask | OfflineAsrTask;
export type TaskKind = InferenceTask['kind'];

export const POOL_TASK_KINDS: ReadonlySet<TaskKind> = new Set<PoolTask['kind']>(['vad', 'online-asr', 'online-stream', 'diarize', 'tagging', 'punctuate']);

export function isPoolTask(task: InferenceTask): task is PoolTask {
  return POOL_TASK_KINDS.has(task.kind);
}

export function isStreamTask(task: InferenceTask): task is OnlineStreamTask {
  return task.kind === 'online-stream';
}

/** Seconds of audio a task carries, or 0 (deadlines scale with it). */
export function taskAudioSeconds(task: InferenceTask): number {
  if ('samples' in task) return task.samples.length / ('sampleRate' in task ? task.sampleRate : (task.config as { sampleRate?: number }).sampleRate ?? 16_000);
  return 0;
}

/** Speech spans as [start, end) sample indices. */
export interface VadResult {
  spans: Array<[number, number]>;
}

export interface OnlineAsrResult {
  text: string;
  tokens: string[];
  /** Seconds from the start of the samples (of the stream), one per token. */
  timestamps: number[];
  /** Natural-log probability of each token where the model reports it (sherpa's ys_probs); else empty. */
  logProbs: number[];
}

/** What open and close answer: no recognition. */
export const NO_RECOGNITION: Readonly<OnlineAsrResult> = Object.freeze({ text: '', tokens: [], timestamps: [], logProbs: [] });

export interface DiarizeResult {
  /** confidence: how surely the segment is its speaker's, in [0, 1] (speaker-confidence.ts). */
  segments: Array<{ start: number; end: number; speaker: number; confidence?: number }>;
}

export interface TaggingResult {
  events: SherpaAudioEvent[];
}

export interface TtsModelInfo {
  numSpeakers: number;
  sampleRate: number;
}

export interface TaskResults {
  vad: VadResult;
  'online-asr': OnlineAsrResult;
  'online-stream': OnlineAsrResult;
  diarize: DiarizeResult;
  tagging: TaggingResult;
  punctuate: { text: string };
  'tts-load': TtsModelInfo;
  tts: { samples: number };
  'offline-asr-load': Record<string, never>;
  'offline-asr': SherpaOfflineResult;
}

/** What a task reports while it runs: the VAD sends each batch of spans as soon as it closes them, TTS each piece of audio. */
export interface TaskProgress {
  vad: VadResult;
  'online-asr': never;
  'online-stream': never;
  diarize: never;
  tagging: never;
  punctuate: never;
  'tts-load': never;
  tts: Float32Array;
  'offline-asr-load': never;
  'offline-asr': never;
}

export interface SubmitOptions<P> {
  signal?: AbortSignal;
  onProgress?: (data: P) => void;
}

/** Something that runs inference tasks: the worker pool (pool kinds), a core, or a supervised process. */
export interface TaskRunner<T extends InferenceTask = InferenceTask> {
  submit<K extends T>(task: K, options?: SubmitOptions<TaskProgress[K['kind']]>): Promise<TaskResults[K['kind']]>;
  /** Drops the model `key` wherever it is loaded (it is built again if a later task names it). */
  unload?(key: string): void;
}

export type WorkerRequest =
  | {
      type: 'run';
      id: number;
      task: PoolTask;
      /** Int32Array(1) over this buffer; the pool stores 1 to ask a running task to stop. */
      cancel: SharedArrayBuffer;
    }
  /** Drop a loaded model (it is built again if a later task names its key). */
  | { type: 'unload'; key: string };

export type WorkerReply =
  | { type: 'ready' }
  | { type: 'progress'; id: number; data: unknown }
  | { type: 'done'; id: number; result: unknown }
  | { type: 'error'; id: number; reason: 'aborted' | 'load' | 'run'; message: string };
