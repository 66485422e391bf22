/**
 * The messages between the worker pool (worker-pool.ts) and its threads (sherpa-worker.ts): one
 * task kind per synchronous sherpa-onnx capability, with the plain-data config that builds its
 * model. Everything here crosses a thread boundary, so it is structured-clone data only.
 */

/** Config of sherpa's `Vad` (lib/types.js VadConfig), Silero only. */
export interface SherpaVadConfig {
  sileroVad: {
    model: string;
    threshold: number;
    minSilenceDuration: number;
    minSpeechDuration: number;
    windowSize: number;
    maxSpeechDuration: number;
  };
  sampleRate: number;
  numThreads: number;
  provider: string;
  debug: number;
}

/** Config of sherpa's `OnlineRecognizer` (lib/types.js OnlineRecognizerConfig), transducer only. */
export interface SherpaOnlineRecognizerConfig {
  featConfig: { sampleRate: number; featureDim: number };
  modelConfig: {
    transducer: { encoder: string; decoder: string; joiner: string };
    tokens: string;
    numThreads: number;
    provider: string;
    debug: number;
    modelingUnit?: string;
    bpeVocab?: string;
  };
  decodingMethod: 'greedy_search' | 'modified_beam_search';
  maxActivePaths?: number;
  enableEndpoint: number;
}

/** Config of sherpa's `OfflineSpeakerDiarization` (lib/types.js OfflineSpeakerDiarizationConfig). */
export interface SherpaDiarizationConfig {
  segmentation: { pyannote: { model: string }; numThreads: number; provider: string; debug: number };
  embedding: { model: string; numThreads: number; provider: string; debug: number };
  clustering: SherpaClusteringConfig;
  minDurationOn: number;
  minDurationOff: number;
}

/** numClusters > 0 fixes the speaker count; -1 lets `threshold` (cosine distance) decide. */
export interface SherpaClusteringConfig {
  numClusters: number;
  threshold: number;
}

/**
 * `key` names the loaded model inside a worker (pack id + role + config): a worker builds the model
 * the first time it sees a key and keeps it for every later task with that key.
 */
interface TaskBase {
  key: string;
  /** Mono samples at the model's rate. The pool sends a copy; the caller keeps its array. */
  samples: Float32Array;
}

export interface VadTask extends TaskBase {
  kind: 'vad';
  config: SherpaVadConfig;
  /** Capacity of sherpa's internal sample buffer; must exceed maxSpeechDuration. */
  bufferSeconds: number;
}

export interface OnlineAsrTask extends TaskBase {
  kind: 'online-asr';
  config: SherpaOnlineRecognizerConfig;
  sampleRate: number;
  /** Silence appended before inputFinished() so the last frames are decoded (sherpa examples use 0.4-0.66 s). */
  tailPaddingSeconds: number;
}

export interface DiarizeTask extends TaskBase {
  kind: 'diarize';
  config: SherpaDiarizationConfig;
  /** Applied with setConfig() before each run, so one loaded model serves every clustering setting. */
  clustering: SherpaClusteringConfig;
}

export type PoolTask = VadTask | OnlineAsrTask | DiarizeTask;
export type TaskKind = PoolTask['kind'];

/** Speech spans as [start, end) sample indices. */
export interface VadResult {
  spans: Array<[number, number]>;
}

export interface OnlineAsrResult {
  text: string;
  tokens: string[];
  /** Seconds from the start of the samples, one per token. */
  timestamps: number[];
}

export interface DiarizeResult {
  segments: Array<{ start: number; end: number; speaker: number }>;
}

export interface TaskResults {
  vad: VadResult;
  'online-asr': OnlineAsrResult;
  diarize: DiarizeResult;
}

/** What a task reports while it runs: the VAD sends each batch of spans as soon as it closes them. */
export interface TaskProgress {
  vad: VadResult;
  'online-asr': never;
  diarize: never;
}

export type WorkerRequest = {
  id: number;
  task: PoolTask;
  /** Int32Array(1) over this buffer; the pool stores 1 to ask a running task to stop. */
  cancel: SharedArrayBuffer;
};

export type WorkerReply =
  | { type: 'ready' }
  | { type: 'progress'; id: number; data: unknown }
  | { type: 'done'; id: number; result: unknown }
  | { type: 'error'; id: number; reason: 'aborted' | 'load' | 'run'; message: string };
