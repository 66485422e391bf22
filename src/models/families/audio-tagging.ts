/** Audio tagging (CED, zipformer): a model and AudioSet's class list. */
import { buildAudioTaggingConfig } from '../../engines/audio-tagging.js';
import { loadSherpaOnnx } from '../../engines/sherpa-onnx.js';
import { TEST_SAMPLE_RATE, testAudio, type ModelFamily } from './family.js';

export const audioTagging: ModelFamily = {
  name: 'audio tagging',
  kinds: ['audio-tagging'],
  detect(folder) {
    if (!folder.names.includes('class_labels_indices.csv')) return undefined;
    const model = folder.pickPreferred(folder.onnx);
    if (!model) return { problem: 'class_labels_indices.csv but no .onnx model (audio tagging pack?)' };
    return { kind: 'audio-tagging', files: { model: folder.abs(model), labels: folder.abs('class_labels_indices.csv') }, languages: [], main: folder.abs(model) };
  },
  async testLoad(pack) {
    const tagger = new (loadSherpaOnnx().AudioTagging)({ ...buildAudioTaggingConfig(pack), topK: 3 });
    const stream = tagger.createStream();
    stream.acceptWaveform({ samples: testAudio(), sampleRate: TEST_SAMPLE_RATE });
    return { events: tagger.compute(stream, 3).length };
  },
};
