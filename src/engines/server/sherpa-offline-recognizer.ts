/**
 * Non-streaming recogniser packs through sherpa-onnx's OfflineRecognizer, run by a TaskRunner (a
 * supervised inference process in the server) with sherpa's createAsync/decodeAsync. The config
 * comes from the pack's family; what differs between families (token times, a window of their
 * own, hotwords, a language in the config) comes as the pack's traits.
 */
import { EngineError, ModelPackError, ParleyError } from '../../errors.js';
import { requireCapability, type EnginePack } from '../capabilities.js';
import type { SherpaOfflineRecognizerConfig, SherpaOfflineResult } from '../sherpa-onnx.js';
import { hotwordLines, tokensAreUpperCase } from '../sherpa-hotwords.js';
import { modelKey } from './sherpa-pack-files.js';
import type { TaskRunner } from '../sherpa-tasks.js';
import type { RecognizedSegment, Recognizer } from '../types.js';

export type { SherpaOfflineRecognizerConfig };

const SAMPLE_RATE = 16_000;

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
  if (tokens.length > 0 && result.ys_log_probs?.length === tokens.length) segment.tokenLogProbs = result.ys_log_probs;
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
export async function createOfflineRecognizer(runner: TaskRunner, pack: EnginePack<'offline-asr'>): Promise<Recognizer> {
  requireCapability(pack, 'offline-asr', 'an offline speech recogniser');
  const { config, traits } = pack;
  const key = modelKey([pack], 'offline-asr', config);
  try {
    await runner.submit({ kind: 'offline-asr-load', key, config });
  } catch (error) {
    if (error instanceof ModelPackError) throw new ModelPackError(`could not load recogniser ${pack.id}: ${error.message}`);
    throw error;
  }
  let closed = false;
  const supportsHotwords = traits.hotwords;
  const upperCase = supportsHotwords && tokensAreUpperCase(config.modelConfig.tokens);
  /** The config of a request's language, where the family keeps the language in the config; the others ignore it. */
  const configFor = (language: string): SherpaOfflineRecognizerConfig => traits.forLanguage?.(config, language) ?? config;

  return {
    id: pack.id,
    languages: [...pack.languages],
    sampleRate: SAMPLE_RATE,
    hasTokenTimestamps: traits.tokenTimestamps,
    ...(traits.windowSeconds !== undefined ? { windowSeconds: traits.windowSeconds } : {}),
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
