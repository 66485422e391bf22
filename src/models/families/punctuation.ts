/**
 * sherpa-onnx punctuation models, told apart by their release names:
 * - sherpa-onnx-punct-ct-transformer-zh-en-* (CT-Transformer, `OfflinePunctuation`): one model.onnx;
 * - sherpa-onnx-online-punct-en-* (CNN-BiLSTM, `OnlinePunctuation`): model.onnx and its bpe.vocab.
 * `format=true` punctuates with the first one installed (engine-set.ts); without one, the rule-based fallback formats.
 */
import { defineFamily, requirePackFiles } from './family.js';

export const punctuation = defineFamily({
  id: 'sherpa-punctuation',
  name: 'punctuation',
  kinds: {
    'punctuation-ct-transformer': {
      capability: 'offline-punctuation',
      engineConfig: (pack, options) => ({ model: { ctTransformer: requirePackFiles(pack, ['model']).model, numThreads: options.numThreads, provider: 'cpu', debug: 0 } }),
      traits: () => ({}),
    },
    'punctuation-cnn-bilstm': {
      capability: 'online-punctuation',
      engineConfig(pack, options) {
        const f = requirePackFiles(pack, ['model', 'bpeVocab']);
        return { model: { cnnBilstm: f.model, bpeVocab: f.bpeVocab, numThreads: options.numThreads, provider: 'cpu', debug: 0 } };
      },
      traits: () => ({}),
    },
  },
  detect(folder) {
    if (!/punct/.test(folder.lower)) return undefined;
    const model = folder.pickPreferred(folder.onnx);
    if (!model) return { problem: 'a punctuation pack needs its model .onnx file' };
    if (/ct-transformer/.test(folder.lower)) {
      return { kind: 'punctuation-ct-transformer', files: { model: folder.abs(model) }, languages: ['zh', 'en'], main: folder.abs(model) };
    }
    if (/online-punct|cnn|bilstm/.test(folder.lower)) {
      if (!folder.bpeVocab.bpeVocab) return { problem: 'an online punctuation pack needs its bpe.vocab' };
      return { kind: 'punctuation-cnn-bilstm', files: { model: folder.abs(model), ...folder.bpeVocab }, languages: ['en'], main: folder.abs(model) };
    }
    return { problem: 'a punctuation pack whose kind could not be told from its name (ct-transformer or online-punct)' };
  },
});
