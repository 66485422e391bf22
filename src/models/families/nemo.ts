/** NeMo (Parakeet, Canary, FastConformer): transducers and CTC models. */
import { offlineAsrKind, offlineTransducerKind } from './asr-kinds.js';
import { defineFamily, requirePackFiles } from './family.js';
import { languagesFromName } from './languages.js';
import { isNemo, transducerFiles } from './transducer.js';

export const nemo = defineFamily({
  id: 'nemo',
  name: 'NeMo',
  kinds: {
    // Parakeet TDT transducers need the model type named (icefall ones are detected).
    'asr-nemo-transducer': offlineTransducerKind({ requiredMetadata: ['vocab_size'], modelType: 'nemo_transducer' }),
    'asr-nemo-ctc': offlineAsrKind({ model: (pack) => ({ nemoCtc: { model: requirePackFiles(pack, ['model']).model } }), tokenTimestamps: true }),
  },
  detect(folder) {
    const transducer = transducerFiles(folder);
    if (transducer && 'problem' in transducer) return isNemo(folder, undefined) ? transducer : undefined;
    if (transducer) {
      if (!isNemo(folder, transducer.metadata.model_type)) return undefined;
      let languages = languagesFromName(folder.id);
      if (/parakeet-tdt-0\.6b-v3/i.test(folder.lower)) languages = ['multi'];
      if (languages.length === 0) languages = ['en'];
      // Hotwords are spelt with an icefall BPE vocabulary, which NeMo packs do not have.
      return { kind: 'asr-nemo-transducer', files: transducer.files, languages, main: folder.abs(transducer.encoder), hotwords: false };
    }
    if (!folder.tokens) return undefined;
    const { model, metadata } = folder.single;
    if (!model) return undefined;
    if (!/nemo.*ctc|ctc.*nemo|fastconformer.*ctc|conformer.*ctc/i.test(folder.lower) && !/EncDecCTC/i.test(metadata.model_type ?? '')) return undefined;
    const langs = languagesFromName(folder.id);
    return { kind: 'asr-nemo-ctc', files: { model: folder.abs(model), tokens: folder.abs(folder.tokens) }, languages: langs.length ? langs : ['en'], main: folder.abs(model) };
  },
});
