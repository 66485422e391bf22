/** Moonshine: preprocess, encode, uncached_decode and cached_decode models with tokens.txt. */
import type { ModelFamily } from './family.js';
import { languagesFromName } from './languages.js';
import { offlineAsrTestLoad } from './test-loads.js';

export const moonshine: ModelFamily = {
  name: 'Moonshine',
  kinds: ['asr-moonshine'],
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
  testLoad: offlineAsrTestLoad,
};
