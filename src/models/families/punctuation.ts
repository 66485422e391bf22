/**
 * sherpa-onnx punctuation models, told apart by their release names:
 * - sherpa-onnx-punct-ct-transformer-zh-en-* (CT-Transformer, `OfflinePunctuation`): one model.onnx;
 * - sherpa-onnx-online-punct-en-* (CNN-BiLSTM, `OnlinePunctuation`): model.onnx and its bpe.vocab.
 * `format=true` punctuates with the first one installed (engine-set.ts); without one, the rule-based fallback formats.
 */
import { loadSherpaOnnx, type SherpaOfflinePunctuationConfig, type SherpaOnlinePunctuationConfig } from '../../engines/sherpa-onnx.js';
import { buildPunctuationConfig } from '../../engines/sherpa-punctuation.js';
import type { ModelFamily } from './family.js';

export const punctuation: ModelFamily = {
  name: 'punctuation',
  kinds: ['punctuation-ct-transformer', 'punctuation-cnn-bilstm'],
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
  async testLoad(pack) {
    const sherpa = loadSherpaOnnx();
    const config = buildPunctuationConfig(pack);
    const model =
      pack.kind === 'punctuation-ct-transformer'
        ? new sherpa.OfflinePunctuation(config as SherpaOfflinePunctuationConfig)
        : new sherpa.OnlinePunctuation(config as SherpaOnlinePunctuationConfig);
    return { text: model.addPunct('hello how are you i am fine thank you') };
  },
};
