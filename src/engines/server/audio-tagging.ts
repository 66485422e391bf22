/**
 * An audio-tagging pack (AudioSet classes) through sherpa-onnx's AudioTagging,
 * whose compute() is synchronous: it runs on a worker thread of the task runner.
 */
import { requireCapability, type EnginePack } from '../capabilities.js';
import { modelKey } from './sherpa-pack-files.js';
import type { PoolTask, TaskRunner } from '../sherpa-tasks.js';
import type { AudioTagger } from '../types.js';

export function createAudioTagger(runner: TaskRunner<PoolTask>, pack: EnginePack<'tagging'>): AudioTagger {
  requireCapability(pack, 'tagging', 'an audio tagging model');
  const { config } = pack;
  const key = modelKey([pack], 'tagging', config);
  return {
    async run(samples, sampleRate) {
      const { events } = await runner.submit({ kind: 'tagging', key, config, samples, sampleRate });
      return events;
    },
    async close() {
      runner.unload?.(key);
    },
  };
}
