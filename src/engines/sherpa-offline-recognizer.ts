/**
 * Non-streaming recognisers (Whisper, SenseVoice, Moonshine, NeMo CTC, NeMo transducer/Parakeet,
 * zipformer transducer and CTC, Paraformer) through sherpa-onnx's OfflineRecognizer, run by a
 * TaskRunner (a supervised inference process in the server) with sherpa's createAsync/decodeAsync.
 *
 * Config shapes follow sherpa-onnx-node's lib/types.js and nodejs-addon-examples
 * (test_asr_non_streaming_*.js). No offline model could be obtained for this project, so only the
 * config building is tested; the decode path has not run against a real model here.
 */
import { EngineError, ModelPackError, ParleyError } from '../errors.js';
import type { ModelPack, PackKind } from './model-pack.js';
import type { SherpaOfflineRecognizerConfig, SherpaOfflineResult } from './sherpa-onnx.js';
import { bpeVocabOf, hotwordLines, tokensAreUpperCase } from './sherpa-hotwords.js';
import { modelKey, requirePackFiles, requirePackKind } from './sherpa-pack-files.js';
import type { TaskRunner } from './sherpa-tasks.js';
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

export type { SherpaOfflineRecognizerConfig };

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
const WHISPER_WINDOW_SECONDS = 30;

/** Whisper's language token: ISO 639-1, "" to let the model detect it. */
function whisperLanguage(language: string | undefined): string {
  return !language || language === 'multi' ? '' : language;
}

export function buildOfflineRecognizerConfig(pack: ModelPack, options: OfflineRecognizerOptions = {}): SherpaOfflineRecognizerConfig {
  requirePackKind(pack, offlinePackKinds, 'an offline speech recogniser');
  const kind = pack.kind as OfflinePackKind;
  const { tokens } = requirePackFiles(pack, ['tokens']);
  const base = { tokens, numThreads: options.numThreads ?? 1, provider: 'cpu', debug: 0 };
  const bpeVocab = bpeVocabOf(pack.files);
  const hotwordVocab = bpeVocab ? { modelingUnit: 'bpe', bpeVocab } : {};
  const config = (modelConfig: Omit<SherpaOfflineRecognizerConfig['modelConfig'], keyof typeof base>): SherpaOfflineRecognizerConfig => ({
    featConfig: { sampleRate: SAMPLE_RATE, featureDim: 80 },
    modelConfig: { ...modelConfig, ...base },
    decodingMethod: 'greedy_search',
  });
  switch (kind) {
    case 'asr-offline-transducer':
    case 'asr-nemo-transducer': {
      const f = requirePackFiles(pack, ['encoder', 'decoder', 'joiner']);
      const built = config({
        transducer: { encoder: f.encoder, decoder: f.decoder, joiner: f.joiner },
        // NeMo (Parakeet TDT) transducers need the type named; zipformer ones are detected.
        ...(kind === 'asr-nemo-transducer' ? { modelType: 'nemo_transducer' } : {}),
        ...hotwordVocab,
      });
      // Hotwords are taken per stream, and only by modified beam search: a pack that can boost
      // always decodes that way, so a request with keywords costs no second model.
      return offlineHotwords(pack, built) ? { ...built, decodingMethod: 'modified_beam_search', maxActivePaths: 4 } : built;
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

/** Whether an offline pack boosts hotwords: a transducer its family declares able (or, unset, one with a BPE vocabulary). */
function offlineHotwords(pack: ModelPack, config: SherpaOfflineRecognizerConfig): boolean {
  if (pack.kind !== 'asr-offline-transducer' && pack.kind !== 'asr-nemo-transducer') return false;
  return pack.hotwords ?? Boolean(config.modelConfig.bpeVocab);
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
export function segmentFromOfflineResult(result: SherpaOfflineResult): RecognizedSegment {
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

/**
 * Loads the pack in the runner and returns it as a Recognizer (a pack that does not load rejects
 * with ModelPackError). Decodes on one recogniser run one at a time in its process.
 */
export async function createOfflineRecognizer(runner: TaskRunner, pack: ModelPack, options: OfflineRecognizerOptions = {}): Promise<Recognizer> {
  const config = buildOfflineRecognizerConfig(pack, options);
  const kind = pack.kind as OfflinePackKind;
  const key = modelKey([pack], 'offline-asr', config);
  try {
    await runner.submit({ kind: 'offline-asr-load', key, config });
  } catch (error) {
    if (error instanceof ModelPackError) throw new ModelPackError(`could not load recogniser ${pack.id}: ${error.message}`);
    throw error;
  }
  let closed = false;
  const supportsHotwords = offlineHotwords(pack, config);
  const upperCase = supportsHotwords && tokensAreUpperCase(config.modelConfig.tokens);

  /** Whisper's language is part of its config; the other families ignore the request's. */
  const configFor = (language: string): SherpaOfflineRecognizerConfig => {
    const whisper = config.modelConfig.whisper;
    if (kind !== 'asr-whisper' || !whisper || whisper.language === whisperLanguage(language)) return config;
    return { ...config, modelConfig: { ...config.modelConfig, whisper: { ...whisper, language: whisperLanguage(language) } } };
  };

  return {
    id: pack.id,
    languages: [...pack.languages],
    sampleRate: SAMPLE_RATE,
    hasTokenTimestamps: WITH_TOKEN_TIMES.has(kind),
    // Whisper's encoder takes exactly 30 s of audio (sherpa pads shorter input, longer is refused).
    ...(kind === 'asr-whisper' ? { windowSeconds: WHISPER_WINDOW_SECONDS } : {}),
    supportsHotwords,
    async recognize(samples, { language, signal, hotwords }) {
      if (closed) throw new EngineError(`recogniser ${pack.id} is closed`);
      // sherpa's per-stream list: phrases separated by "/", each "PHRASE :score".
      const streamHotwords = supportsHotwords && hotwords?.length ? { hotwords: hotwordLines(hotwords, upperCase).join('/') } : {};
      try {
        const result = await runner.submit({ kind: 'offline-asr', key, config: configFor(language), samples, sampleRate: SAMPLE_RATE, ...streamHotwords }, { signal });
        return segmentFromOfflineResult(result);
      } catch (error) {
        if (error instanceof ParleyError) throw error;
        throw new EngineError(`recogniser ${pack.id} failed: ${(error as Error).message}`);
      }
    },
    async close() {
      closed = true;
      runner.unload?.(key);
    },
  };
}
