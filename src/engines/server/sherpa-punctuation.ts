/**
 * Punctuation packs as sherpa-onnx runs them: `OfflinePunctuation` (a CT-Transformer: adds marks
 * to a whole text) and `OnlinePunctuation` (a CNN-BiLSTM: adds marks and restores case, written
 * for streaming text). Both calls are synchronous, so they run as `punctuate` tasks on the
 * runner's worker threads.
 */
import type { EnginePack } from '../capabilities.js';
import { modelKey } from './sherpa-pack-files.js';
import type { PoolTask, TaskRunner } from '../sherpa-tasks.js';
import type { Punctuator } from '../types.js';

type PunctuationCapability = 'offline-punctuation' | 'online-punctuation';

export function createPunctuator(runner: TaskRunner<PoolTask>, pack: EnginePack<PunctuationCapability>): Punctuator {
  const { config } = pack;
  const key = modelKey([pack], 'punctuate', config);
  return {
    id: pack.id,
    languages: pack.languages.length > 0 ? [...pack.languages] : ['en'],
    restoresCase: pack.capability === 'online-punctuation',
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
