/** Moonshine: preprocess, encode, uncached_decode and cached_decode models with tokens.txt. */
import { offlineAsrKind } from './asr-kinds.js';
import { defineFamily, requirePackFiles } from './family.js';
import { languagesFromName } from './languages.js';

export const moonshine = defineFamily({
  id: 'moonshine',
  name: 'Moonshine',
  kinds: {
    'asr-moonshine': offlineAsrKind({
      model: (pack) => {
        const f = requirePackFiles(pack, ['preprocessor', 'encoder', 'uncachedDecoder', 'cachedDecoder']);
        return { moonshine: { preprocessor: f.preprocessor, encoder: f.encoder, uncachedDecoder: f.uncachedDecoder, cachedDecoder: f.cachedDecoder } };
      },
      tokenTimestamps: false,
    }),
  },
  detect(folder) {
    const pick = (re: RegExp) => folder.pickPreferred(folder.onnx.filter((n) => re.test(n)));
    const pre = pick(/^preprocess/i);
    if (!pre) return undefined;
    const encode = pick(/^encode[._]/i);
    const uncached = pick(/^uncached_decode/i);
    const cached = pick(/^cached_decode/i);
    if (!encode || !uncached || !cached || !folder.tokens) {
      return { problem: 'Moonshine pack needs preprocess, encode, uncached_decode, cached_decode .onnx files and tokens.txt' };
    }
    const langs = languagesFromName(folder.id);
    const abs = (n: string) => folder.abs(n);
    return {
      kind: 'asr-moonshine',
      files: { preprocessor: abs(pre), encoder: abs(encode), uncachedDecoder: abs(uncached), cachedDecoder: abs(cached), tokens: abs(folder.tokens) },
      languages: langs.length > 0 ? langs : ['en'],
      main: abs(encode),
    };
  },
});
