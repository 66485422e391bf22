/** Whisper: <size>-encoder(.int8).onnx, <size>-decoder(.int8).onnx, <size>-tokens.txt. */
import type { ModelFamily } from './family.js';
import { WHISPER_LANGUAGES } from './languages.js';
import { offlineAsrTestLoad } from './test-loads.js';

export const whisper: ModelFamily = {
  name: 'Whisper',
  kinds: ['asr-whisper'],
  detect(folder) {
    const encoders = folder.onnx.filter((n) => /-encoder(\.int8)?\.onnx$/i.test(n));
    const tokens = folder.names.filter((n) => /-tokens\.txt$/i.test(n));
    if (encoders.length === 0 || tokens.length === 0) return undefined;
    const encoder = folder.pickPreferred(encoders)!;
    const prefix = encoder.replace(/-encoder(\.int8)?\.onnx$/i, '');
    const decoder = folder.pickPreferred(folder.onnx.filter((n) => n.startsWith(`${prefix}-decoder`)));
    const tok = tokens.find((n) => n.startsWith(`${prefix}-`)) ?? tokens[0]!;
    if (!decoder) return { problem: `Whisper encoder ${encoder} without a matching ${prefix}-decoder*.onnx` };
    const englishOnly = /\.en$/i.test(prefix) || /whisper-[a-z0-9]+\.en(\b|$)/i.test(folder.lower) || /distil.*\.en/i.test(folder.lower);
    return {
      kind: 'asr-whisper',
      files: { encoder: folder.abs(encoder), decoder: folder.abs(decoder), tokens: folder.abs(tok) },
      languages: englishOnly ? ['en'] : ['multi', ...WHISPER_LANGUAGES],
      main: folder.abs(encoder),
    };
  },
  requiredMetadata: { 'asr-whisper': ['n_text_layer', 'n_text_ctx', 'sot', 'eot'] },
  testLoad: offlineAsrTestLoad,
};
