/**
 * Punctuation packs as sherpa-onnx runs them: `OfflinePunctuation` (CT-Transformer, Chinese and
 * English: adds punctuation to a whole text) and `OnlinePunctuation` (CNN-BiLSTM, English: adds
 * punctuation and restores case, written for streaming text). Only the configs are built here,
 * from a pack's files; what runs them is the family's test load.
 */
import type { ModelPack } from './model-pack.js';
import type { SherpaOfflinePunctuationConfig, SherpaOnlinePunctuationConfig } from './sherpa-onnx.js';
import { requirePackFiles, requirePackKind } from './sherpa-pack-files.js';

export function buildPunctuationConfig(pack: ModelPack, numThreads = 1): SherpaOfflinePunctuationConfig | SherpaOnlinePunctuationConfig {
  requirePackKind(pack, ['punctuation-ct-transformer', 'punctuation-cnn-bilstm'], 'a punctuation model');
  const common = { numThreads, provider: 'cpu', debug: 0 };
  if (pack.kind === 'punctuation-ct-transformer') return { model: { ctTransformer: requirePackFiles(pack, ['model']).model, ...common } };
  const f = requirePackFiles(pack, ['model', 'bpeVocab']);
  return { model: { cnnBilstm: f.model, bpeVocab: f.bpeVocab, ...common } };
}
