/** NeMo (Parakeet, Canary, FastConformer): transducers and CTC models. */
import type { ModelFamily } from './family.js';
import { languagesFromName } from './languages.js';
import { offlineAsrTestLoad } from './test-loads.js';
import { isNemo, transducerFiles } from './transducer.js';

export const nemo: ModelFamily = {
  name: 'NeMo',
  kinds: ['asr-nemo-transducer', 'asr-nemo-ctc'],
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
  requiredMetadata: { 'asr-nemo-transducer': ['vocab_size'] },
  testLoad: offlineAsrTestLoad,
};
