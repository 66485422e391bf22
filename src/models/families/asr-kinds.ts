/**
 * What the offline recogniser families share: sherpa's OfflineRecognizerConfig around each
 * family's model part, and the transducer layout (NeMo and icefall), which boosts hotwords when a
 * BPE vocabulary can spell them.
 */
import type { EngineBuildOptions, EngineTraits } from '../../engines/capabilities.js';
import type { ModelPack } from '../model-pack.js';
import { bpeVocabOf } from '../../engines/sherpa-hotwords.js';
import type { SherpaOfflineRecognizerConfig } from '../../engines/sherpa-onnx.js';
import { requirePackFiles, type KindDefinition } from './family.js';

/** Every recogniser Parley runs takes 16 kHz audio with 80 fbank features. */
export const ASR_SAMPLE_RATE = 16_000;

type ModelPart = Omit<SherpaOfflineRecognizerConfig['modelConfig'], 'tokens' | 'numThreads' | 'provider' | 'debug'>;

export interface OfflineAsrKindSpec {
  requiredMetadata?: readonly string[];
  /** The model part of the config (the files of the family's layout). */
  model(pack: ModelPack): ModelPart;
  /** Its results carry token times (CTC alignments or transducer emission frames). */
  tokenTimestamps: boolean;
  /** Longest audio the model takes in one call, seconds. */
  windowSeconds?: number;
  forLanguage?: EngineTraits['offline-asr']['forLanguage'];
}

function offlineConfig(pack: ModelPack, options: EngineBuildOptions, model: (pack: ModelPack) => ModelPart): SherpaOfflineRecognizerConfig {
  const { tokens } = requirePackFiles(pack, ['tokens']);
  return {
    featConfig: { sampleRate: ASR_SAMPLE_RATE, featureDim: 80 },
    modelConfig: { ...model(pack), tokens, numThreads: options.numThreads, provider: 'cpu', debug: 0 },
    decodingMethod: 'greedy_search',
  };
}

/** An offline recogniser kind that decodes greedily and boosts nothing. */
export function offlineAsrKind(spec: OfflineAsrKindSpec): KindDefinition<'offline-asr'> {
  return {
    capability: 'offline-asr',
    ...(spec.requiredMetadata ? { requiredMetadata: spec.requiredMetadata } : {}),
    engineConfig: (pack, options) => offlineConfig(pack, options, spec.model),
    traits: () => ({
      tokenTimestamps: spec.tokenTimestamps,
      ...(spec.windowSeconds !== undefined ? { windowSeconds: spec.windowSeconds } : {}),
      hotwords: false,
      ...(spec.forLanguage ? { forLanguage: spec.forLanguage } : {}),
    }),
  };
}

/** Whether a transducer pack boosts hotwords: its family says so, else (a pack.json pack) it has a BPE vocabulary to spell them with. */
export function transducerHotwords(pack: ModelPack, bpeVocab: string | undefined): boolean {
  return pack.hotwords ?? Boolean(bpeVocab);
}

/**
 * An offline transducer (encoder, decoder, joiner). Hotwords are taken per stream, and only by
 * modified beam search: a pack that can boost always decodes that way, so a request with
 * keywords costs no second model.
 */
export function offlineTransducerKind(spec: { requiredMetadata?: readonly string[]; modelType?: string }): KindDefinition<'offline-asr'> {
  const model = (pack: ModelPack): ModelPart => {
    const f = requirePackFiles(pack, ['encoder', 'decoder', 'joiner']);
    const bpeVocab = bpeVocabOf(pack.files);
    return {
      transducer: { encoder: f.encoder, decoder: f.decoder, joiner: f.joiner },
      ...(spec.modelType ? { modelType: spec.modelType } : {}),
      ...(bpeVocab ? { modelingUnit: 'bpe', bpeVocab } : {}),
    };
  };
  return {
    capability: 'offline-asr',
    ...(spec.requiredMetadata ? { requiredMetadata: spec.requiredMetadata } : {}),
    engineConfig: (pack, options) => {
      const built = offlineConfig(pack, options, model);
      return transducerHotwords(pack, built.modelConfig.bpeVocab) ? { ...built, decodingMethod: 'modified_beam_search', maxActivePaths: 4 } : built;
    },
    traits: (pack, config) => ({ tokenTimestamps: true, hotwords: transducerHotwords(pack, config.modelConfig.bpeVocab) }),
  };
}
