/** Speaker embeddings (3D-Speaker, WeSpeaker, NeMo TitaNet): one model without tokens. */
import { loadSherpaOnnx } from '../../engines/sherpa-onnx.js';
import { TEST_SAMPLE_RATE, testAudio, type ModelFamily } from './family.js';

export const speakerEmbedding: ModelFamily = {
  name: 'speaker embedding',
  kinds: ['speaker-embedding'],
  detect(folder) {
    if (folder.tokens) return undefined;
    const { model, metadata, error } = folder.single;
    if (!model || error) return undefined;
    const named = /speaker|wespeaker|3dspeaker|titanet|campplus|eres2net|ecapa/i.test(folder.lower + model);
    if (!('framework' in metadata || 'output_dim' in metadata || named)) return undefined;
    return { kind: 'speaker-embedding', files: { model: folder.abs(model) }, languages: [], main: folder.abs(model) };
  },
  requiredMetadata: { 'speaker-embedding': ['sample_rate', 'output_dim'] },
  async testLoad(pack) {
    const extractor = new (loadSherpaOnnx().SpeakerEmbeddingExtractor)({ model: pack.files.model!, numThreads: 1, debug: 0, provider: 'cpu' });
    const stream = extractor.createStream();
    stream.acceptWaveform({ samples: testAudio(2), sampleRate: TEST_SAMPLE_RATE });
    stream.inputFinished();
    return { dim: extractor.dim, embedding: extractor.compute(stream).length };
  },
};
