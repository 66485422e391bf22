/**
 * Non-streaming recognisers (Whisper, SenseVoice, Moonshine, NeMo CTC, NeMo transducer/Parakeet,
 * zipformer transducer and CTC, Paraformer) through sherpa-onnx's OfflineRecognizer. Its
 * createAsync/decodeAsync run on libuv's thread pool, so these stay on the main thread without
 * blocking it; the worker pool is not involved.
 *
 * Config shapes follow sherpa-onnx-node's lib/types.js and nodejs-addon-examples
 * (test_asr_non_streaming_*.js). No offline model could be obtained for this project, so only the
 * config building is tested; the decode path has not run against a real model here.
 */
import { createRequire } from 'node:module';
import { AbortedError, EngineError, ModelPackError } from '../errors.js';
import type { ModelPack, PackKind } from '../models/pack.js';
import { requirePackFiles, requirePackKind } from './sherpa-pack-files.js';
import type { RecognizedSegment, Recognizer } from './types.js';

export type OfflinePackKind = Extract<
  PackKind,
  | 'asr-offline-transducer'
  | 'asr-nemo-transducer'
  | 'asr-nemo-ctc'
  | 'asr-zipformer-ctc'
  | 'asr-whisper'
  | 'asr-sense-voice'
  | 'asr-moonshine'
  | 'asr-paraformer'
>;

export const offlinePackKinds: readonly OfflinePackKind[] = [
  'asr-offline-transducer',
  'asr-nemo-transducer',
  'asr-nemo-ctc',
  'asr-zipformer-ctc',
  'asr-whisper',
  'asr-sense-voice',
  'asr-moonshine',
  'asr-paraformer',
];

/** The subset of sherpa's OfflineRecognizerConfig (lib/types.js) that Parley fills in. */
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
  decodingMethod: 'greedy_search';
}

export interface OfflineRecognizerOptions {
  numThreads?: number;
  /**
   * Whisper only: the language to start with ("" or "multi" = detect). Each request's language is
   * applied with setConfig before its decode.
   */
  language?: string;
}

/** Token times exist for these kinds (CTC alignments or transducer emission frames). */
const WITH_TOKEN_TIMES = new Set<OfflinePackKind>([
  'asr-offline-transducer',
  'asr-nemo-transducer',
  'asr-nemo-ctc',
  'asr-zipformer-ctc',
  'asr-sense-voice',
]);

const SAMPLE_RATE = 16_000;

/** Whisper's language token: ISO 639-1, "" to let the model detect it. */
function whisperLanguage(language: string | undefined): string {
  return !language || language === 'multi' ? '' : language;
}

export function buildOfflineRecognizerConfig(pack: ModelPack, options: OfflineRecognizerOptions = {}): SherpaOfflineRecognizerConfig {
  requirePackKind(pack, offlinePackKinds, 'an offline speech recogniser');
  const kind = pack.kind as OfflinePackKind;
  const { tokens } = requirePackFiles(pack, ['tokens']);
  const base = { tokens, numThreads: options.numThreads ?? 1, provider: 'cpu', debug: 0 };
  const hotwordVocab = pack.files.bpeVocab ? { modelingUnit: 'bpe', bpeVocab: pack.files.bpeVocab } : {};
  const config = (modelConfig: Omit<SherpaOfflineRecognizerConfig['modelConfig'], keyof typeof base>): SherpaOfflineRecognizerConfig => ({
    featConfig: { sampleRate: SAMPLE_RATE, featureDim: 80 },
    modelConfig: { ...modelConfig, ...base },
    decodingMethod: 'greedy_search',
  });
  switch (kind) {
    case 'asr-offline-transducer':
    case 'asr-nemo-transducer': {
      const f = requirePackFiles(pack, ['encoder', 'decoder', 'joiner']);
      return config({
        transducer: { encoder: f.encoder, decoder: f.decoder, joiner: f.joiner },
        // NeMo (Parakeet TDT) transducers need the type named; zipformer ones are detected.
        ...(kind === 'asr-nemo-transducer' ? { modelType: 'nemo_transducer' } : {}),
        ...hotwordVocab,
      });
    }
    case 'asr-nemo-ctc':
      return config({ nemoCtc: { model: requirePackFiles(pack, ['model']).model } });
    case 'asr-zipformer-ctc':
      return config({ zipformerCtc: { model: requirePackFiles(pack, ['model']).model } });
    case 'asr-paraformer':
      return config({ paraformer: { model: requirePackFiles(pack, ['model']).model } });
    case 'asr-whisper': {
      const f = requirePackFiles(pack, ['encoder', 'decoder']);
      // tailPaddings -1: sherpa's default padding (the examples' value).
      return config({
        whisper: { encoder: f.encoder, decoder: f.decoder, language: whisperLanguage(options.language), task: 'transcribe', tailPaddings: -1 },
      });
    }
    case 'asr-sense-voice':
      // Language "" = auto: SenseVoice tags each segment with the language it heard; ITN on for digits.
      return config({ senseVoice: { model: requirePackFiles(pack, ['model']).model, language: '', useInverseTextNormalization: 1 } });
    case 'asr-moonshine': {
      const f = requirePackFiles(pack, ['preprocessor', 'encoder', 'uncachedDecoder', 'cachedDecoder']);
      return config({
        moonshine: { preprocessor: f.preprocessor, encoder: f.encoder, uncachedDecoder: f.uncachedDecoder, cachedDecoder: f.cachedDecoder },
      });
    }
  }
}

/** Whisper's language ids that are not ISO 639-1 codes. */
const LANGUAGE_ALIASES: Record<string, string> = { jw: 'jv', iw: 'he' };

/**
 * "<|en|>" (SenseVoice, Whisper), "en" → "en". Undefined for an empty tag or SenseVoice's
 * "nospeech"/"unk".
 */
export function languageFromTag(tag: string | undefined): string | undefined {
  const code = (tag ?? '').replace(/^<\|/, '').replace(/\|>$/, '').trim().toLowerCase();
  if (!code || code === 'nospeech' || code === 'unk' || code === 'unknown') return undefined;
  return LANGUAGE_ALIASES[code] ?? code;
}

/** "<|HAPPY|>" → "HAPPY"; SenseVoice's "EMO_UNKNOWN" and empty tags give undefined. */
export function emotionFromTag(tag: string | undefined): string | undefined {
  const emotion = (tag ?? '').replace(/^<\|/, '').replace(/\|>$/, '').trim().toUpperCase();
  return emotion && emotion !== 'EMO_UNKNOWN' ? emotion : undefined;
}

/** Maps one sherpa offline result (lib/types.js OfflineRecognizerResult) to a RecognizedSegment. */
export function segmentFromOfflineResult(result: {
  text?: string;
  tokens?: string[];
  timestamps?: number[];
  durations?: number[];
  lang?: string;
  emotion?: string;
}): RecognizedSegment {
  const tokens = result.tokens ?? [];
  const timestamps = result.timestamps?.length === tokens.length ? result.timestamps : [];
  const durations = timestamps.length > 0 && result.durations?.length === tokens.length ? result.durations : [];
  const segment: RecognizedSegment = { text: (result.text ?? '').trim(), tokens, timestamps, durations };
  const language = languageFromTag(result.lang);
  if (language) segment.language = language;
  const emotion = emotionFromTag(result.emotion);
  if (emotion) segment.emotion = emotion;
  return segment;
}

interface SherpaOfflineStream {
  acceptWaveform(wave: { samples: Float32Array; sampleRate: number }): void;
}
interface SherpaOfflineRecognizer {
  createStream(): SherpaOfflineStream;
  setConfig(config: SherpaOfflineRecognizerConfig): void;
  decodeAsync(stream: SherpaOfflineStream): Promise<Parameters<typeof segmentFromOfflineResult>[0]>;
}
interface SherpaOfflineModule {
  OfflineRecognizer: { createAsync(config: SherpaOfflineRecognizerConfig): Promise<SherpaOfflineRecognizer> };
}

/**
 * Loads the pack (asynchronously) and returns it as a Recognizer. Decodes run one at a time per
 * recogniser: Whisper's language is part of the recogniser's config, and switching it under a
 * running decode would be a race.
 */
export async function createOfflineRecognizer(pack: ModelPack, options: OfflineRecognizerOptions = {}): Promise<Recognizer> {
  let config = buildOfflineRecognizerConfig(pack, options);
  const kind = pack.kind as OfflinePackKind;
  const sherpa = createRequire(import.meta.url)('sherpa-onnx-node') as SherpaOfflineModule;
  let recognizer: SherpaOfflineRecognizer;
  try {
    recognizer = await sherpa.OfflineRecognizer.createAsync(config);
  } catch (error) {
    throw new ModelPackError(`could not load recogniser ${pack.id}: ${error instanceof Error ? error.message : String(error)}`);
  }
  let tail: Promise<unknown> = Promise.resolve();
  let closed = false;

  async function decode(samples: Float32Array, language: string, signal?: AbortSignal): Promise<RecognizedSegment> {
    if (closed) throw new EngineError(`recogniser ${pack.id} is closed`);
    if (signal?.aborted) throw new AbortedError();
    if (kind === 'asr-whisper' && config.modelConfig.whisper && config.modelConfig.whisper.language !== whisperLanguage(language)) {
      config = { ...config, modelConfig: { ...config.modelConfig, whisper: { ...config.modelConfig.whisper, language: whisperLanguage(language) } } };
      recognizer.setConfig(config);
    }
    const stream = recognizer.createStream();
    stream.acceptWaveform({ samples, sampleRate: SAMPLE_RATE });
    try {
      return segmentFromOfflineResult(await recognizer.decodeAsync(stream));
    } catch (error) {
      throw new EngineError(`recogniser ${pack.id} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  return {
    id: pack.id,
    languages: [...pack.languages],
    sampleRate: SAMPLE_RATE,
    hasTokenTimestamps: WITH_TOKEN_TIMES.has(kind),
    recognize(samples, { language, signal }) {
      const run = tail.then(() => decode(samples, language, signal));
      tail = run.catch(() => undefined);
      return run;
    },
    async close() {
      closed = true;
      await tail;
    },
  };
}
