/**
 * An audio-tagging pack (CED or Zipformer, AudioSet classes) through sherpa-onnx's AudioTagging,
 * whose compute() is synchronous: it runs on a worker thread of the task runner.
 */
import { ModelPackError } from '../errors.js';
import type { ModelPack } from './model-pack.js';
import type { SherpaAudioTaggingConfig } from './sherpa-onnx.js';
import { modelKey, requirePackFiles, requirePackKind } from './sherpa-pack-files.js';
import type { PoolTask, TaskRunner } from './sherpa-tasks.js';
import type { AudioTagger } from './types.js';

/** compute() clamps top_k to the number of classes (527 for AudioSet), so this asks for them all. */
const ALL_CLASSES = 10_000;

/**
 * The family comes from the folder name, as the upstream release archives are named
 * (sherpa-onnx-zipformer-audio-tagging-2024-04-09, sherpa-onnx-ced-mini-audio-tagging-...).
 */
export function buildAudioTaggingConfig(pack: ModelPack, numThreads = 1): SherpaAudioTaggingConfig {
  requirePackKind(pack, ['audio-tagging'], 'an audio tagging model');
  const { model, labels } = requirePackFiles(pack, ['model', 'labels']);
  if (!/\.csv$/i.test(labels)) throw new ModelPackError(`model pack ${pack.id}: labels file ${labels} is not a class_labels_indices.csv`);
  const family = /zipformer/i.test(pack.id) ? { zipformer: { model } } : { ced: model };
  return { model: { ...family, numThreads, debug: 0, provider: 'cpu' }, labels, topK: ALL_CLASSES };
}

export function createAudioTagger(runner: TaskRunner<PoolTask>, pack: ModelPack, numThreads = 1): AudioTagger {
  const config = buildAudioTaggingConfig(pack, numThreads);
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
