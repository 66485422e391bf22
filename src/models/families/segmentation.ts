/** pyannote segmentation: one model without tokens; test-loaded with a speaker-embedding pack. */
import { buildDiarizationConfig } from '../../engines/sherpa-diarizer.js';
import { loadSherpaOnnx } from '../../engines/sherpa-onnx.js';
import { testAudio, type ModelFamily } from './family.js';

export const segmentation: ModelFamily = {
  name: 'speaker segmentation',
  kinds: ['diarization-segmentation'],
  detect(folder) {
    if (folder.tokens) return undefined;
    const { model, modelType, error } = folder.single;
    if (!model || error || !(modelType.startsWith('pyannote') || /pyannote|segmentation/i.test(folder.lower))) return undefined;
    return { kind: 'diarization-segmentation', files: { model: folder.abs(model) }, languages: [], main: folder.abs(model) };
  },
  requiredMetadata: { 'diarization-segmentation': ['sample_rate', 'window_size', 'num_speakers', 'powerset_max_classes', 'num_classes'] },
  async testLoad(pack, context) {
    if (!context.partner) throw new Error('a segmentation pack is test-loaded with a speaker-embedding pack, and none was given');
    const diarizer = new (loadSherpaOnnx().OfflineSpeakerDiarization)(buildDiarizationConfig(pack, context.partner));
    const turns = diarizer.process(testAudio(2));
    return { sampleRate: diarizer.sampleRate, turns: Array.isArray(turns) ? turns.length : 0 };
  },
};
