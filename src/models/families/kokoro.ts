/** Kokoro: model + voices.bin + tokens.txt, with lexicons, rule FSTs and jieba's dict for Chinese. */
import { defineFamily, type PackFolder } from './family.js';
import { languageCode, languagesFromName } from './languages.js';
import { espeakUnlessOwnData, requireFile, ttsKind } from './tts-kinds.js';

/**
 * Kokoro's lexicons and rule FSTs, comma-joined as sherpa takes them and in upstream's order
 * (sherpa-onnx scripts/kokoro): the first lexicon that knows a word wins, so American voices use
 * `lexicon-us-en.txt,lexicon-zh.txt` and British voices `lexicon-gb-en.txt,lexicon-zh.txt`
 * (role lexiconGb); the FSTs normalise Chinese phone numbers, dates and numbers.
 */
function kokoroTextFiles(folder: PackFolder): Record<string, string> {
  const present = (...candidates: string[]) => candidates.filter((n) => folder.names.includes(n)).map((n) => folder.abs(n));
  const known = ['lexicon-us-en.txt', 'lexicon-gb-en.txt', 'lexicon-zh.txt'];
  const others = folder.names.filter((n) => /^lexicon.*\.txt$/i.test(n) && !known.includes(n)).map((n) => folder.abs(n));
  const zh = present('lexicon-zh.txt');
  const us = [...present('lexicon-us-en.txt'), ...others, ...zh];
  const gb = present('lexicon-gb-en.txt');
  // Without a US lexicon the British one serves everyone rather than nobody.
  const main = us.length > zh.length || gb.length === 0 ? us : [...gb, ...zh];
  const out: Record<string, string> = {};
  if (main.length > 0) out.lexicon = main.join(',');
  if (gb.length > 0 && main[0] !== gb[0]) out.lexiconGb = [...gb, ...zh].join(',');
  const fsts = present('phone-zh.fst', 'date-zh.fst', 'number-zh.fst');
  if (fsts.length > 0) out.ruleFsts = fsts.join(',');
  return out;
}

export const kokoro = defineFamily({
  id: 'kokoro',
  name: 'Kokoro',
  kinds: {
    'tts-kokoro': ttsKind({
      requiredMetadata: ['sample_rate'],
      // Kokoro needs espeak-ng data beside its lexicons (English words they miss).
      usesSharedEspeak: espeakUnlessOwnData,
      // Multilingual Kokoro needs both its lexicons and espeak-ng-data, so both are passed; the
      // British voices get the gb lexicon first.
      model: (pack, espeakDataDir, accent) => ({
        kokoro: {
          model: requireFile(pack, 'model'),
          voices: requireFile(pack, 'voices'),
          tokens: requireFile(pack, 'tokens'),
          dataDir: pack.files.dataDir ?? espeakDataDir,
          ...(pack.files.lexicon ? { lexicon: (accent === 'gb' && pack.files.lexiconGb) || pack.files.lexicon } : {}),
        },
      }),
      accents: (pack) => (pack.files.lexiconGb ? ['gb'] : []),
    }),
  },
  detect(folder) {
    if (!folder.names.includes('voices.bin') || /kitten/i.test(folder.lower)) return undefined;
    const model = folder.pickPreferred(folder.onnx.filter((n) => !/^(preprocess|encoder|decoder)/i.test(n)));
    if (!model || !folder.tokens) return { problem: 'voices.bin without a model .onnx and tokens.txt (Kokoro/Kitten pack?)' };
    const files: Record<string, string> = {
      model: folder.abs(model),
      voices: folder.abs('voices.bin'),
      tokens: folder.abs(folder.tokens),
      ...folder.dataDir,
      ...kokoroTextFiles(folder),
    };
    // Multilingual Kokoro's jieba dictionary (Chinese); recorded for adapters that pass it on.
    if (folder.dirs.includes('dict')) files.dictDir = folder.abs('dict');
    const { metadata } = folder.metadataOf(model);
    let languages = languagesFromName(folder.id).filter((l) => l !== 'multi');
    if (/multi-lang|multi/i.test(folder.lower) || folder.names.some((n) => /^lexicon.*zh.*\.txt$/i.test(n))) languages = ['en', 'zh'];
    else if (languages.length === 0) languages = [languageCode(metadata.language) ?? 'en'];
    return { kind: 'tts-kokoro', files, languages, main: folder.abs(model) };
  },
});
