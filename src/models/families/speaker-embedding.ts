/** Speaker embeddings (3D-Speaker, WeSpeaker, NeMo TitaNet): one model without tokens. */
import { defineFamily, requirePackFiles } from './family.js';

export const speakerEmbedding = defineFamily({
  id: 'speaker-embedding',
  name: 'speaker embedding',
  kinds: {
    'speaker-embedding': {
      capability: 'embedding',
      requiredMetadata: ['sample_rate', 'output_dim'],
      engineConfig: (pack) => ({ model: requirePackFiles(pack, ['model']).model, numThreads: 1, provider: 'cpu', debug: 0 }),
      traits: () => ({}),
    },
  },
  detect(folder) {
    if (folder.tokens) return undefined;
    const { model, metadata, error } = folder.single;
    if (!model || error) return undefined;
    const named = /speaker|wespeaker|3dspeaker|titanet|campplus|eres2net|ecapa/i.test(folder.lower + model);
    if (!('framework' in metadata || 'output_dim' in metadata || named)) return undefined;
    return { kind: 'speaker-embedding', files: { model: folder.abs(model) }, languages: [], main: folder.abs(model) };
  },
});
