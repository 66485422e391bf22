/** icefall zipformer (and other k2) models: streaming and offline transducers, and CTC. */
import type { KindDefinition } from './family.js';
import type { ModelPack } from '../model-pack.js';
import { bpeVocabOf } from '../../engines/sherpa-hotwords.js';
import type { SherpaOnlineRecognizerConfig } from '../../engines/sherpa-onnx.js';
import { ASR_SAMPLE_RATE, offlineAsrKind, offlineTransducerKind, transducerHotwords } from './asr-kinds.js';
import { defineFamily, requirePackFiles } from './family.js';
import { languagesFromName } from './languages.js';
import { transducerFiles } from './transducer.js';

/**
 * A streaming transducer decoding greedily, one intra-op thread (it runs on a worker thread of
 * the pool, beside others). Requests with hotwords decode on a second model from this config
 * (modified beam search), loaded once, each stream given its own list.
 */
function onlineTransducerConfig(pack: ModelPack): SherpaOnlineRecognizerConfig {
  const files = requirePackFiles(pack, ['encoder', 'decoder', 'joiner', 'tokens']);
  const bpeVocab = bpeVocabOf(pack.files);
  return {
    featConfig: { sampleRate: ASR_SAMPLE_RATE, featureDim: 80 },
    modelConfig: {
      transducer: { encoder: files.encoder, decoder: files.decoder, joiner: files.joiner },
      tokens: files.tokens,
      numThreads: 1,
      provider: 'cpu',
      debug: 0,
      // Only needed for hotwords written as words; harmless otherwise.
      ...(bpeVocab ? { modelingUnit: 'bpe', bpeVocab } : {}),
    },
    decodingMethod: 'greedy_search',
    // The pipeline hands over VAD segments; endpointing inside one would only split it.
    enableEndpoint: 0,
  };
}

const onlineTransducer: KindDefinition<'online-asr'> = {
  capability: 'online-asr',
  engineConfig: (pack) => onlineTransducerConfig(pack),
  traits: (pack, config) => ({ hotwords: transducerHotwords(pack, config.modelConfig.bpeVocab) }),
};

export const zipformer = defineFamily({
  id: 'zipformer',
  name: 'zipformer',
  kinds: {
    'asr-online-transducer': onlineTransducer,
    'asr-offline-transducer': offlineTransducerKind({}),
    'asr-zipformer-ctc': offlineAsrKind({ model: (pack) => ({ zipformerCtc: { model: requirePackFiles(pack, ['model']).model } }), tokenTimestamps: true }),
  },
  detect(folder) {
    const transducer = transducerFiles(folder);
    if (transducer && 'problem' in transducer) return transducer;
    if (transducer) {
      const { metadata, encoder } = transducer;
      const online =
        /streaming|kws|online/i.test(folder.lower) || /chunk/i.test(encoder) || 'decode_chunk_len' in metadata || /streaming/i.test(metadata.comment ?? '');
      // Icefall transducers boost hotwords (modified beam search) when their BPE vocabulary is there to spell them.
      const hotwords = Boolean(transducer.files.bpeVocab ?? transducer.files.bpeModel);
      return {
        kind: online ? 'asr-online-transducer' : 'asr-offline-transducer',
        files: transducer.files,
        languages: languagesFromName(folder.id),
        main: folder.abs(encoder),
        hotwords,
      };
    }
    if (!folder.tokens || !/zipformer.*ctc|ctc.*zipformer/i.test(folder.lower)) return undefined;
    const { model } = folder.single;
    if (!model) return undefined;
    const files = { model: folder.abs(model), tokens: folder.abs(folder.tokens), ...folder.bpeVocab };
    return { kind: 'asr-zipformer-ctc', files, languages: languagesFromName(folder.id), main: folder.abs(model) };
  },
});
