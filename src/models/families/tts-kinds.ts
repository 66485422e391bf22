/**
 * What the TTS families share: sherpa's OfflineTtsConfig around each family's model part, the
 * phonemiser data choice, and the traits of voiced and zero-shot packs.
 */
import type { EngineBuildOptions, EngineTraits } from '../../engines/capabilities.js';
import type { ModelPack } from '../model-pack.js';
import type { SherpaOfflineTtsConfig } from '../../engines/sherpa-onnx.js';
import { EngineError } from '../../errors.js';
import type { KindDefinition } from './family.js';

/** The model part of sherpa's OfflineTtsConfig that names the family's files. */
export type TtsModelPart = Omit<SherpaOfflineTtsConfig['model'], 'numThreads' | 'provider' | 'debug'>;

export function requireFile(pack: ModelPack, role: string): string {
  const path = pack.files[role];
  if (!path) throw new EngineError(`TTS pack ${pack.id} (${pack.kind}) has no "${role}" file`);
  return path;
}

/**
 * Phonemiser data for a pack: its own espeak-ng-data first; none when it has a lexicon instead
 * (sherpa ignores the lexicon when dataDir is set); else the shared espeak-ng-data.
 */
export function phonemizer(pack: ModelPack, espeakDataDir: string): { lexicon?: string; dataDir?: string } {
  if (pack.files.dataDir) return { dataDir: pack.files.dataDir };
  if (pack.files.lexicon) return { lexicon: pack.files.lexicon };
  return { dataDir: espeakDataDir };
}

/** TTS packs that phonemise with espeak-ng need the shared data unless they bring their own or a lexicon. */
export function espeakUnlessLexicon(pack: ModelPack): boolean {
  return !pack.files.dataDir && !pack.files.lexicon;
}

/** Packs that always phonemise with espeak-ng need the shared data unless they bring their own. */
export function espeakUnlessOwnData(pack: ModelPack): boolean {
  return !pack.files.dataDir;
}

function offlineTtsConfig(pack: ModelPack, options: EngineBuildOptions, model: TtsModelPart): SherpaOfflineTtsConfig {
  return {
    model: { numThreads: options.numThreads, provider: 'cpu', debug: false, ...model },
    maxNumSentences: 1,
    ...(pack.files.ruleFsts ? { ruleFsts: pack.files.ruleFsts } : {}),
  };
}

/** Accent for packs that declare none, from the espeak voice Piper records in its metadata. */
function defaultAccent(pack: ModelPack): string {
  const espeakVoice = (pack.metadata.voice ?? '').toLowerCase();
  if (espeakVoice === 'en-us') return 'american';
  if (espeakVoice === 'en-gb' || espeakVoice === 'en-gb-x-rp') return 'british';
  return 'neutral';
}

export interface TtsKindSpec {
  requiredMetadata?: readonly string[];
  usesSharedEspeak?(pack: ModelPack): boolean;
  /** The model part of the config; `accent` is one of accents(pack). */
  model(pack: ModelPack, espeakDataDir: string, accent?: string): TtsModelPart;
  /** Accents whose voices are served by a config of their own. */
  accents?(pack: ModelPack): string[];
}

/** A TTS kind with voices of its own (one per speaker id). Its voices name the engine "sherpa-<kind without tts->". */
export function ttsKind(spec: TtsKindSpec): KindDefinition<'tts'> {
  const build = (pack: ModelPack, options: EngineBuildOptions, accent?: string) => offlineTtsConfig(pack, options, spec.model(pack, options.espeakDataDir, accent));
  return {
    capability: 'tts',
    ...(spec.requiredMetadata ? { requiredMetadata: spec.requiredMetadata } : {}),
    ...(spec.usesSharedEspeak ? { usesSharedEspeak: spec.usesSharedEspeak } : {}),
    engineConfig: (pack, options) => build(pack, options),
    traits: (pack, _config, options): EngineTraits['tts'] => ({
      engineName: `sherpa-${pack.kind.replace(/^tts-/, '')}`,
      defaultAccent: defaultAccent(pack),
      voices: pack.voices,
      accentConfigs: Object.fromEntries((spec.accents?.(pack) ?? []).map((accent) => [accent, build(pack, options, accent)])),
    }),
  };
}

export interface ZeroShotKindSpec extends Omit<TtsKindSpec, 'accents' | 'model'> {
  model(pack: ModelPack, espeakDataDir: string): TtsModelPart;
  /** The engine a clone records (kept in the database: never renamed). */
  engineName: string;
  needsReferenceText: boolean;
}

/** A zero-shot TTS kind: no voices of its own, each request brings a reference sample. */
export function zeroShotKind(spec: ZeroShotKindSpec): KindDefinition<'zero-shot-tts'> {
  return {
    capability: 'zero-shot-tts',
    ...(spec.requiredMetadata ? { requiredMetadata: spec.requiredMetadata } : {}),
    ...(spec.usesSharedEspeak ? { usesSharedEspeak: spec.usesSharedEspeak } : {}),
    engineConfig: (pack, options) => offlineTtsConfig(pack, options, spec.model(pack, options.espeakDataDir)),
    traits: () => ({ engineName: spec.engineName, needsReferenceText: spec.needsReferenceText }),
  };
}
