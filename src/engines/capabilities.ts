/**
 * What the engines know of a model pack: which capability it gives, the sherpa-onnx config that
 * loads it and the few facts the capability's adapter needs beside that config. The pack's family
 * (src/models/families) builds all three from a verified pack; the engines dispatch on the
 * capability alone and never learn which family a pack belongs to, so a new family that reuses an
 * existing capability touches nothing here.
 */
import { ModelPackError } from '../errors.js';
import type {
  SherpaAudioTaggingConfig,
  SherpaClusteringConfig,
  SherpaDiarizationConfig,
  SherpaOfflinePunctuationConfig,
  SherpaOfflineRecognizerConfig,
  SherpaOfflineTtsConfig,
  SherpaOnlinePunctuationConfig,
  SherpaOnlineRecognizerConfig,
  SherpaSpeakerEmbeddingConfig,
  SherpaVadConfig,
} from './sherpa-onnx.js';
import type { Gender } from './types.js';

/**
 * Every capability, in the order an engine set loads them: offline recognisers before streaming
 * ones (the accurate ones are preferred when a language has both).
 */
export const CAPABILITIES = [
  'tts',
  'zero-shot-tts',
  'vad',
  'offline-asr',
  'online-asr',
  'segmentation',
  'embedding',
  'tagging',
  'offline-punctuation',
  'online-punctuation',
] as const;

export type Capability = (typeof CAPABILITIES)[number];

/** The sherpa-onnx config each capability loads its model with. */
export interface EngineConfigs {
  tts: SherpaOfflineTtsConfig;
  'zero-shot-tts': SherpaOfflineTtsConfig;
  vad: SherpaVadConfig;
  'offline-asr': SherpaOfflineRecognizerConfig;
  'online-asr': SherpaOnlineRecognizerConfig;
  /** Loaded together with a speaker-embedding model (diarizationConfig). */
  'segmentation': SherpaDiarizationConfig['segmentation'];
  'embedding': SherpaSpeakerEmbeddingConfig;
  'tagging': SherpaAudioTaggingConfig;
  'offline-punctuation': SherpaOfflinePunctuationConfig;
  'online-punctuation': SherpaOnlinePunctuationConfig;
}

/** A voice a TTS pack declares for one speaker id; anything left out comes from the pack. */
export interface PackVoice {
  speakerId: number;
  id?: string;
  displayName?: string;
  gender?: Gender;
  accent?: string;
  languages?: string[];
  /**
   * Not offered: a speaker the pack has but cannot serve (one whose language the pack's
   * lexicons do not cover).
   */
  omit?: boolean;
}

type NoTraits = Record<never, never>;

/** What each capability's adapter needs to know about a pack beyond its config. */
export interface EngineTraits {
  tts: {
    /** The engine its voices name (Voice.engine). */
    engineName: string;
    /** Accent of the voices the pack does not describe. */
    defaultAccent: string;
    voices: PackVoice[];
    /** Other configs of the same model, for the voices of one accent (loaded by the first request of that accent). */
    accentConfigs: Record<string, SherpaOfflineTtsConfig>;
  };
  'zero-shot-tts': {
    /** The engine a clone records, and finds its engine by again. */
    engineName: string;
    /** The model conditions on what the reference sample says as well as on its sound. */
    needsReferenceText: boolean;
  };
  vad: NoTraits;
  'offline-asr': {
    /** Its results carry token times. */
    tokenTimestamps: boolean;
    /** Longest audio the model takes in one call, seconds; unset = no limit of its own. */
    windowSeconds?: number;
    /** It boosts a request's keywords (per-stream hotwords, decoded with modified beam search). */
    hotwords: boolean;
    /** The config for a request's language where the language is part of the config. */
    forLanguage?(config: SherpaOfflineRecognizerConfig, language: string): SherpaOfflineRecognizerConfig;
  };
  'online-asr': {
    /** It can boost a request's keywords (a second model, decoding with beam search, given them per stream). */
    hotwords: boolean;
  };
  'segmentation': NoTraits;
  'embedding': NoTraits;
  'tagging': NoTraits;
  'offline-punctuation': NoTraits;
  'online-punctuation': NoTraits;
}

/** A verified pack as an engine takes it. */
export interface EnginePack<C extends Capability = Capability> {
  /** The pack's folder name: what logs and /readyz call it. */
  id: string;
  /** What the pack's files are now: an unchanged revision is the same model, not loaded again. */
  revision?: string;
  /** ISO 639-1 codes; "multi" for recognisers that detect the language. */
  languages: string[];
  capability: C;
  config: EngineConfigs[C];
  traits: EngineTraits[C];
}

/** An engine pack of any capability, narrowed by its `capability`. */
export type AnyEnginePack = { [C in Capability]: EnginePack<C> }[Capability];

/** What a family's config builder takes besides the pack. */
export interface EngineBuildOptions {
  /** espeak-ng-data for TTS packs that ship none. */
  espeakDataDir: string;
  /** ONNX Runtime intra-op threads of the models that run on libuv's pool (TTS, offline recognition) and of tagging. */
  numThreads: number;
}

/** Where Debian's espeak-ng-data package puts the data TTS packs without their own phonemise with. */
export const debianEspeakDataDir = '/usr/lib/x86_64-linux-gnu/espeak-ng-data';

/** Fails with ModelPackError when a pack of another capability reaches an adapter. */
export function requireCapability<C extends Capability>(pack: EnginePack, capability: C, what: string): asserts pack is EnginePack<C> {
  if (pack.capability !== capability) throw new ModelPackError(`model pack ${pack.id} is a ${pack.capability} pack, not ${what}`);
}

export interface DiarizationOptions {
  /** Cosine-distance threshold of clustering when the speaker count is unknown; default 0.5. */
  threshold?: number;
  /** Known number of speakers; overrides `threshold`. */
  numClusters?: number;
  /** Turns shorter than this are dropped, seconds (sherpa example: 0.2). */
  minDurationOn?: number;
  /** Gaps shorter than this between turns of one speaker are closed, seconds (sherpa example: 0.5). */
  minDurationOff?: number;
}

/** Diarization loads a segmentation model and an embedding model as one: their configs joined. */
export function diarizationConfig(
  segmentation: EngineConfigs['segmentation'],
  embedding: EngineConfigs['embedding'],
  options: DiarizationOptions = {},
): SherpaDiarizationConfig {
  return {
    segmentation,
    embedding,
    clustering: clusteringOf(options),
    minDurationOn: options.minDurationOn ?? 0.2,
    minDurationOff: options.minDurationOff ?? 0.5,
  };
}

function clusteringOf(options: DiarizationOptions): SherpaClusteringConfig {
  const numClusters = options.numClusters && options.numClusters > 0 ? Math.floor(options.numClusters) : -1;
  return { numClusters, threshold: options.threshold ?? 0.5 };
}
