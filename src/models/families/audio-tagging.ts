/** Audio tagging (CED, zipformer): a model and AudioSet's class list. */
import { ModelPackError } from '../../errors.js';
import { defineFamily, requirePackFiles } from './family.js';

/** compute() clamps top_k to the number of classes (527 for AudioSet), so this asks for them all. */
const ALL_CLASSES = 10_000;

export const audioTagging = defineFamily({
  id: 'audio-tagging',
  name: 'audio tagging',
  kinds: {
    'audio-tagging': {
      capability: 'tagging',
      engineConfig(pack, options) {
        const { model, labels } = requirePackFiles(pack, ['model', 'labels']);
        if (!/\.csv$/i.test(labels)) throw new ModelPackError(`model pack ${pack.id}: labels file ${labels} is not a class_labels_indices.csv`);
        // The architecture comes from the folder name, as the upstream release archives are named
        // (sherpa-onnx-zipformer-audio-tagging-2024-04-09, sherpa-onnx-ced-mini-audio-tagging-...).
        const architecture = /zipformer/i.test(pack.id) ? { zipformer: { model } } : { ced: model };
        return { model: { ...architecture, numThreads: options.numThreads, debug: 0, provider: 'cpu' }, labels, topK: ALL_CLASSES };
      },
      traits: () => ({}),
    },
  },
  detect(folder) {
    if (!folder.names.includes('class_labels_indices.csv')) return undefined;
    const model = folder.pickPreferred(folder.onnx);
    if (!model) return { problem: 'class_labels_indices.csv but no .onnx model (audio tagging pack?)' };
    return { kind: 'audio-tagging', files: { model: folder.abs(model), labels: folder.abs('class_labels_indices.csv') }, languages: [], main: folder.abs(model) };
  },
});
