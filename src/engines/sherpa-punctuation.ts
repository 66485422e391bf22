/**
 * Punctuation packs as sherpa-onnx runs them: `OfflinePunctuation` (CT-Transformer, Chinese and
 * English: adds punctuation to a whole text) and `OnlinePunctuation` (CNN-BiLSTM, English: adds
 * punctuation and restores case, written for streaming text). Both calls are synchronous, so they
 * run as `punctuate` tasks on the runner's worker threads.
 */
import type { ModelPack } from './model-pack.js';
import type { SherpaOfflinePunctuationConfig, SherpaOnlinePunctuationConfig } from './sherpa-onnx.js';
import { modelKey, requirePackFiles, requirePackKind } from './sherpa-pack-files.js';
import type { PoolTask, TaskRunner } from './sherpa-tasks.js';
import type { Punctuator } from './types.js';

export function buildPunctuationConfig(pack: ModelPack, numThreads = 1): SherpaOfflinePunctuationConfig | SherpaOnlinePunctuationConfig {
  requirePackKind(pack, ['punctuation-ct-transformer', 'punctuation-cnn-bilstm'], 'a punctuation model');
  const common = { numThreads, provider: 'cpu', debug: 0 };
  if (pack.kind === 'punctuation-ct-transformer') return { model: { ctTransformer: requirePackFiles(pack, ['model']).model, ...common } };
  const f = requirePackFiles(pack, ['model', 'bpeVocab']);
  return { model: { cnnBilstm: f.model, bpeVocab: f.bpeVocab, ...common } };
}

export function createPunctuator(runner: TaskRunner<PoolTask>, pack: ModelPack, numThreads = 1): Punctuator {
  const config = buildPunctuationConfig(pack, numThreads);
  const key = modelKey([pack], 'punctuate', config);
  return {
    id: pack.id,
    languages: pack.languages.length > 0 ? [...pack.languages] : ['en'],
    restoresCase: pack.kind === 'punctuation-cnn-bilstm',
    async punctuate(text, options = {}) {
      if (!text.trim()) return text;
      const result = await runner.submit({ kind: 'punctuate', key, config, text }, { signal: options.signal });
      return result.text;
    },
    async close() {
      runner.unload?.(key);
    },
  };
}
