/** pyannote segmentation: one model without tokens; test-loaded with a speaker-embedding pack. */
import { defineFamily, requirePackFiles } from './family.js';

export const segmentation = defineFamily({
  id: 'pyannote-segmentation',
  name: 'speaker segmentation',
  kinds: {
    'diarization-segmentation': {
      capability: 'segmentation',
      requiredMetadata: ['sample_rate', 'window_size', 'num_speakers', 'powerset_max_classes', 'num_classes'],
      engineConfig: (pack) => ({ pyannote: { model: requirePackFiles(pack, ['model']).model }, numThreads: 1, provider: 'cpu', debug: 0 }),
      traits: () => ({}),
    },
  },
  detect(folder) {
    if (folder.tokens) return undefined;
    const { model, modelType, error } = folder.single;
    if (!model || error || !(modelType.startsWith('pyannote') || /pyannote|segmentation/i.test(folder.lower))) return undefined;
    return { kind: 'diarization-segmentation', files: { model: folder.abs(model) }, languages: [], main: folder.abs(model) };
  },
});
