/** Matcha: an acoustic model (model-steps-N.onnx) and a vocoder (vocos, HiFi-GAN). */
import type { ModelFamily } from './family.js';
import { languageCode, languagesFromName } from './languages.js';
import { espeakUnlessLexicon, ttsTestLoad } from './test-loads.js';

export const matcha: ModelFamily = {
  name: 'Matcha',
  kinds: ['tts-matcha'],
  detect(folder) {
    const acoustic = folder.pickPreferred(folder.onnx.filter((n) => /^model-steps|matcha/i.test(n) && !/vocos|hifigan|vocoder/i.test(n)));
    if (!acoustic || !(/matcha/i.test(folder.lower) || /^model-steps/i.test(acoustic))) return undefined;
    const vocoder = folder.pickPreferred(folder.onnx.filter((n) => /vocos|hifigan|vocoder/i.test(n)));
    if (!vocoder) return { problem: `Matcha acoustic model ${acoustic} without a vocoder (vocos-*.onnx or hifigan*.onnx) in the folder` };
    if (!folder.tokens) return { problem: 'Matcha pack without tokens.txt' };
    const files: Record<string, string> = { acousticModel: folder.abs(acoustic), vocoder: folder.abs(vocoder), tokens: folder.abs(folder.tokens), ...folder.dataDir };
    if (folder.names.includes('lexicon.txt')) files.lexicon = folder.abs('lexicon.txt');
    const { metadata } = folder.metadataOf(acoustic);
    const langs = languagesFromName(folder.id);
    return { kind: 'tts-matcha', files, languages: langs.length > 0 ? langs : [languageCode(metadata.language) ?? 'en'], main: folder.abs(acoustic) };
  },
  requiredMetadata: { 'tts-matcha': ['sample_rate'] },
  usesSharedEspeak: espeakUnlessLexicon,
  testLoad: ttsTestLoad,
};
