/** Matcha: an acoustic model (model-steps-N.onnx) and a vocoder (vocos, HiFi-GAN). */
import { defineFamily } from './family.js';
import { languageCode, languagesFromName } from './languages.js';
import { espeakUnlessLexicon, phonemizer, requireFile, ttsKind } from './tts-kinds.js';

export const matcha = defineFamily({
  id: 'matcha',
  name: 'Matcha',
  kinds: {
    'tts-matcha': ttsKind({
      requiredMetadata: ['sample_rate'],
      usesSharedEspeak: espeakUnlessLexicon,
      model: (pack, espeakDataDir) => {
        const tokens = requireFile(pack, 'tokens');
        return {
          matcha: { acousticModel: requireFile(pack, 'acousticModel'), vocoder: requireFile(pack, 'vocoder'), tokens, ...phonemizer(pack, espeakDataDir) },
        };
      },
    }),
  },
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
});
