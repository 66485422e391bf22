/** Paraformer: one model with tokens.txt, named so. */
import { offlineAsrKind } from './asr-kinds.js';
import { defineFamily, requirePackFiles } from './family.js';
import { languagesFromName } from './languages.js';

export const paraformer = defineFamily({
  id: 'paraformer',
  name: 'Paraformer',
  kinds: {
    'asr-paraformer': offlineAsrKind({ model: (pack) => ({ paraformer: { model: requirePackFiles(pack, ['model']).model } }), tokenTimestamps: false }),
  },
  detect(folder) {
    if (!folder.tokens || !/paraformer/i.test(folder.lower)) return undefined;
    const { model } = folder.single;
    if (!model) return undefined;
    const langs = languagesFromName(folder.id);
    return { kind: 'asr-paraformer', files: { model: folder.abs(model), tokens: folder.abs(folder.tokens) }, languages: langs.length ? langs : ['zh'], main: folder.abs(model) };
  },
});
