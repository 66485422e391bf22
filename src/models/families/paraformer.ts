/** Paraformer: one model with tokens.txt, named so. */
import type { ModelFamily } from './family.js';
import { languagesFromName } from './languages.js';
import { offlineAsrTestLoad } from './test-loads.js';

export const paraformer: ModelFamily = {
  name: 'Paraformer',
  kinds: ['asr-paraformer'],
  detect(folder) {
    if (!folder.tokens || !/paraformer/i.test(folder.lower)) return undefined;
    const { model } = folder.single;
    if (!model) return undefined;
    const langs = languagesFromName(folder.id);
    return { kind: 'asr-paraformer', files: { model: folder.abs(model), tokens: folder.abs(folder.tokens) }, languages: langs.length ? langs : ['zh'], main: folder.abs(model) };
  },
  testLoad: offlineAsrTestLoad,
};
