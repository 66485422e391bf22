/**
 * The one door to sherpa-onnx-node: its typed surface (the slice Parley uses, after the package's
 * lib/*.js and lib/types.js) and the loader. Nothing else imports the package (a test enforces
 * it), and only the code in inference/ (the inference processes and the pack test-load child)
 * calls loadSherpaOnnx(): sherpa ends the process on a malformed model instead of throwing.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { EngineError } from '../errors.js';

const require = createRequire(import.meta.url);

/* ---------------------------------------------------------------- configs */

/** `Vad` config (lib/types.js VadConfig), Silero only. */
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

/** `OnlineRecognizer` config (lib/types.js OnlineRecognizerConfig), transducer only. */
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
  /** One phrase per line, "PHRASE :score"; used by modified_beam_search only. */
  hotwordsFile?: string;
  hotwordsScore?: number;
}

/** `OfflineRecognizer` config (lib/types.js OfflineRecognizerConfig): the fields Parley fills. */
export interface SherpaOfflineRecognizerConfig {
  featConfig: { sampleRate: number; featureDim: number };
  modelConfig: {
    transducer?: { encoder: string; decoder: string; joiner: string };
    paraformer?: { model: string };
    nemoCtc?: { model: string };
    zipformerCtc?: { model: string };
    whisper?: { encoder: string; decoder: string; language: string; task: 'transcribe'; tailPaddings: number };
    senseVoice?: { model: string; language: string; useInverseTextNormalization: number };
    moonshine?: { preprocessor: string; encoder: string; uncachedDecoder: string; cachedDecoder: string };
    tokens: string;
    numThreads: number;
    provider: string;
    debug: number;
    modelType?: string;
    modelingUnit?: string;
    bpeVocab?: string;
  };
  /** modified_beam_search for transducers that take per-stream hotwords. */
  decodingMethod: 'greedy_search' | 'modified_beam_search';
  maxActivePaths?: number;
  hotwordsScore?: number;
}

/** `OfflineTts` config (lib/types.js OfflineTtsConfig): the fields Parley fills. */
export interface SherpaOfflineTtsConfig {
  model: {
    vits?: { model: string; tokens: string; lexicon?: string; dataDir?: string };
    matcha?: { acousticModel: string; vocoder: string; tokens: string; lexicon?: string; dataDir?: string };
    kokoro?: { model: string; voices: string; tokens: string; lexicon?: string; dataDir?: string };
    kitten?: { model: string; voices: string; tokens: string; dataDir?: string };
    /** Zero-shot: speaks in the voice of the reference audio each request brings (generationConfig). */
    zipvoice?: {
      tokens: string;
      encoder: string;
      decoder: string;
      vocoder: string;
      dataDir: string;
      lexicon: string;
      featScale?: number;
      tShift?: number;
      targetRms?: number;
      guidanceScale?: number;
    };
    /** Zero-shot from reference audio alone. */
    pocket?: { lmFlow: string; lmMain: string; encoder: string; decoder: string; textConditioner: string; vocabJson: string; tokenScoresJson: string };
    numThreads: number;
    provider: 'cpu';
    debug: boolean;
  };
  /** Comma-joined text-normalisation FSTs (Kokoro's Chinese phone numbers, dates, numbers). */
  ruleFsts?: string;
  /** 1 = sherpa hands back audio after every sentence. */
  maxNumSentences: number;
}

/** numClusters > 0 fixes the speaker count; -1 lets `threshold` (cosine distance) decide. */
export interface SherpaClusteringConfig {
  numClusters: number;
  threshold: number;
}

/** `OfflineSpeakerDiarization` config (lib/types.js OfflineSpeakerDiarizationConfig). */
export interface SherpaDiarizationConfig {
  segmentation: { pyannote: { model: string }; numThreads: number; provider: string; debug: number };
  embedding: { model: string; numThreads: number; provider: string; debug: number };
  clustering: SherpaClusteringConfig;
  minDurationOn: number;
  minDurationOff: number;
}

/** `AudioTagging` config (lib/types.js AudioTaggingConfig). */
export interface SherpaAudioTaggingConfig {
  model: { ced?: string; zipformer?: { model: string }; numThreads: number; debug: number; provider?: string };
  labels: string;
  topK: number;
}

export interface SherpaSpeakerEmbeddingConfig {
  model: string;
  numThreads: number;
  debug: number;
  provider: string;
}

/* ---------------------------------------------------------------- objects */

export interface SherpaWave {
  samples: Float32Array;
  sampleRate: number;
}

export interface SherpaVad {
  acceptWaveform(samples: Float32Array): void;
  isEmpty(): boolean;
  front(enableExternalBuffer?: boolean): { start: number; samples: Float32Array };
  pop(): void;
  clear(): void;
  reset(): void;
  flush(): void;
}

export interface SherpaOnlineStream {
  acceptWaveform(wave: SherpaWave): void;
  inputFinished(): void;
}

/** OnlineRecognizerResult (lib/types.js): the fields Parley reads. */
export interface SherpaOnlineResult {
  text: string;
  tokens: string[];
  timestamps: number[];
  /** Log-probability of each token as the transducer emitted it (greedy and beam search); may be absent or empty. */
  ys_probs?: number[];
}

export interface SherpaOnlineRecognizer {
  createStream(): SherpaOnlineStream;
  isReady(stream: SherpaOnlineStream): boolean;
  decode(stream: SherpaOnlineStream): void;
  getResult(stream: SherpaOnlineStream): SherpaOnlineResult;
}

export interface SherpaOfflineStream {
  acceptWaveform(wave: SherpaWave): void;
}

export interface SherpaOfflineResult {
  text?: string;
  tokens?: string[];
  timestamps?: number[];
  durations?: number[];
  lang?: string;
  emotion?: string;
  /** Natural-log probability of each token, where the model reports it (transducers); may be absent or empty. */
  ys_log_probs?: number[];
}

export interface SherpaOfflineRecognizer {
  /** `hotwords`: phrases separated by "/", each optionally "PHRASE :score" (modified_beam_search only). */
  createStream(hotwords?: string): SherpaOfflineStream;
  setConfig(config: SherpaOfflineRecognizerConfig): void;
  decode(stream: SherpaOfflineStream): void;
  getResult(stream: SherpaOfflineStream): SherpaOfflineResult;
  decodeAsync(stream: SherpaOfflineStream): Promise<SherpaOfflineResult>;
}

/** sherpa-onnx-node's GenerationConfig (lib/types.js): per-request settings of zero-shot packs. */
export interface SherpaGenerationConfig {
  speed?: number;
  sid?: number;
  numSteps?: number;
  referenceAudio?: Float32Array;
  referenceSampleRate?: number;
  referenceText?: string;
  extra?: Record<string, number | string>;
}

export interface SherpaOfflineTts {
  readonly numSpeakers: number;
  readonly sampleRate: number;
  generateAsync(request: {
    text: string;
    sid: number;
    speed: number;
    /** Zero-shot packs: the voice to speak in (sherpa's GenerationConfig). */
    generationConfig?: SherpaGenerationConfig;
    /** Returning 0 or false stops generation before the next sentence. */
    onProgress?: (info: { samples: Float32Array; progress: number }) => number | boolean;
  }): Promise<{ samples: Float32Array; sampleRate: number }>;
}

export interface SherpaDiarization {
  readonly sampleRate: number;
  process(samples: Float32Array): Array<{ start: number; end: number; speaker: number }>;
  setConfig(config: { clustering: SherpaClusteringConfig }): void;
}

export interface SherpaAudioEvent {
  name: string;
  prob: number;
  index: number;
}

export interface SherpaAudioTagging {
  createStream(): { acceptWaveform(wave: SherpaWave): void };
  compute(stream: unknown, topK?: number): SherpaAudioEvent[];
}

export interface SherpaSpeakerEmbeddingExtractor {
  readonly dim: number;
  createStream(): SherpaOnlineStream;
  /** Whether the stream holds enough audio for an embedding. */
  isReady(stream: SherpaOnlineStream): boolean;
  compute(stream: SherpaOnlineStream): Float32Array;
}

export interface SherpaOnnx {
  Vad: new (config: SherpaVadConfig, bufferSizeInSeconds: number) => SherpaVad;
  OnlineRecognizer: new (config: SherpaOnlineRecognizerConfig) => SherpaOnlineRecognizer;
  OfflineRecognizer: {
    new (config: SherpaOfflineRecognizerConfig): SherpaOfflineRecognizer;
    createAsync(config: SherpaOfflineRecognizerConfig): Promise<SherpaOfflineRecognizer>;
  };
  OfflineTts: { createAsync(config: SherpaOfflineTtsConfig): Promise<SherpaOfflineTts> };
  OfflineSpeakerDiarization: new (config: SherpaDiarizationConfig) => SherpaDiarization;
  AudioTagging: new (config: SherpaAudioTaggingConfig) => SherpaAudioTagging;
  SpeakerEmbeddingExtractor: new (config: SherpaSpeakerEmbeddingConfig) => SherpaSpeakerEmbeddingExtractor;
  OfflinePunctuation: new (config: SherpaOfflinePunctuationConfig) => SherpaPunctuation;
  OnlinePunctuation: new (config: SherpaOnlinePunctuationConfig) => SherpaPunctuation;
}

/** `OfflinePunctuation` config (lib/types.js OfflinePunctuationConfig): CT-Transformer, Chinese and English. */
export interface SherpaOfflinePunctuationConfig {
  model: { ctTransformer: string; numThreads: number; provider: string; debug: number };
}

/** `OnlinePunctuation` config (lib/types.js OnlinePunctuationConfig): CNN-BiLSTM with its BPE vocabulary, English; it also restores case. */
export interface SherpaOnlinePunctuationConfig {
  model: { cnnBilstm: string; bpeVocab: string; numThreads: number; provider: string; debug: number };
}

export interface SherpaPunctuation {
  addPunct(text: string): string;
}

let loaded: SherpaOnnx | undefined;

/** The native addon, loaded on first use so that importing this module costs nothing. */
export function loadSherpaOnnx(): SherpaOnnx {
  if (!loaded) {
    try {
      loaded = require('sherpa-onnx-node') as SherpaOnnx;
    } catch (error) {
      throw new EngineError(`cannot load sherpa-onnx-node (reinstall it with npm ci): ${(error as Error).message}`);
    }
  }
  return loaded;
}

/** The installed sherpa-onnx-node version, without loading the addon (verdict caches key on it). */
export function sherpaOnnxVersion(): string {
  const manifest = require('sherpa-onnx-node/package.json') as { version?: string };
  return manifest.version ?? 'unknown';
}

/**
 * sherpa-onnx's C library, the one the addon runs on (its platform package ships it beside the
 * addon), for the call the JS binding lacks (inference/sherpa-stream-hotwords.ts). Loads the addon.
 */
export function sherpaOnnxCLibraryPath(): string {
  loadSherpaOnnx();
  const name = process.platform === 'win32' ? 'sherpa-onnx-c-api.dll' : process.platform === 'darwin' ? 'libsherpa-onnx-c-api.dylib' : 'libsherpa-onnx-c-api.so';
  if (process.platform === 'linux') {
    // The very file the addon has mapped: another copy would be a second library with state of its own.
    const mapped = readFileSync('/proc/self/maps', 'utf8')
      .split('\n')
      .filter((line) => line.includes('/'))
      .map((line) => line.slice(line.indexOf('/')))
      .find((file) => path.basename(file) === name);
    if (mapped) return mapped;
  }
  const platform = process.platform === 'win32' ? 'win' : process.platform;
  const sherpaDir = path.dirname(require.resolve('sherpa-onnx-node/package.json'));
  const platformPackage = createRequire(path.join(sherpaDir, 'package.json')).resolve(`sherpa-onnx-${platform}-${process.arch}/package.json`);
  return path.join(path.dirname(platformPackage), name);
}
