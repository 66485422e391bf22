/** KittenTTS: model + voices.bin + tokens.txt, phonemised with espeak-ng; English only. */
import type { ModelFamily } from './family.js';
import { ttsTestLoad } from './test-loads.js';

export const kitten: ModelFamily = {
  name: 'Kitten',
  kinds: ['tts-kitten'],
  detect(folder) {
    if (!folder.names.includes('voices.bin') || !/kitten/i.test(folder.lower)) return undefined;
    const model = folder.pickPreferred(folder.onnx.filter((n) => !/^(preprocess|encoder|decoder)/i.test(n)));
    if (!model || !folder.tokens) return { problem: 'voices.bin without a model .onnx and tokens.txt (Kokoro/Kitten pack?)' };
    const files = { model: folder.abs(model), voices: folder.abs('voices.bin'), tokens: folder.abs(folder.tokens), ...folder.dataDir };
    return { kind: 'tts-kitten', files, languages: ['en'], main: folder.abs(model) };
  },
  requiredMetadata: { 'tts-kitten': ['sample_rate'] },
  usesSharedEspeak: (pack) => !pack.files.dataDir,
  testLoad: ttsTestLoad,
};
