/** KittenTTS: model + voices.bin + tokens.txt, phonemised with espeak-ng; English only. */
import { defineFamily } from './family.js';
import { espeakUnlessOwnData, requireFile, ttsKind } from './tts-kinds.js';

export const kitten = defineFamily({
  id: 'kitten',
  name: 'Kitten',
  kinds: {
    'tts-kitten': ttsKind({
      requiredMetadata: ['sample_rate'],
      usesSharedEspeak: espeakUnlessOwnData,
      model: (pack, espeakDataDir) => ({
        kitten: {
          model: requireFile(pack, 'model'),
          voices: requireFile(pack, 'voices'),
          tokens: requireFile(pack, 'tokens'),
          dataDir: pack.files.dataDir ?? espeakDataDir,
        },
      }),
    }),
  },
  detect(folder) {
    if (!folder.names.includes('voices.bin') || !/kitten/i.test(folder.lower)) return undefined;
    const model = folder.pickPreferred(folder.onnx.filter((n) => !/^(preprocess|encoder|decoder)/i.test(n)));
    if (!model || !folder.tokens) return { problem: 'voices.bin without a model .onnx and tokens.txt (Kokoro/Kitten pack?)' };
    const files = { model: folder.abs(model), voices: folder.abs('voices.bin'), tokens: folder.abs(folder.tokens), ...folder.dataDir };
    return { kind: 'tts-kitten', files, languages: ['en'], main: folder.abs(model) };
  },
});
