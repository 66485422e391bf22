/** SenseVoice: one model with tokens.txt; detects the language, tags emotion and events. */
import { offlineAsrKind } from './asr-kinds.js';
import { defineFamily, requirePackFiles } from './family.js';

export const senseVoice = defineFamily({
  id: 'sense-voice',
  name: 'SenseVoice',
  kinds: {
    'asr-sense-voice': offlineAsrKind({
      requiredMetadata: ['lfr_window_size', 'lfr_window_shift'],
      // Language "" = auto: SenseVoice tags each segment with the language it heard; ITN on for digits.
      model: (pack) => ({ senseVoice: { model: requirePackFiles(pack, ['model']).model, language: '', useInverseTextNormalization: 1 } }),
      tokenTimestamps: true,
    }),
  },
  detect(folder) {
    if (!folder.tokens) return undefined;
    const { model, metadata } = folder.single;
    if (!model || !(/sense-?voice/i.test(folder.lower) || ('lfr_window_size' in metadata && 'with_itn' in metadata))) return undefined;
    const files = { model: folder.abs(model), tokens: folder.abs(folder.tokens) };
    return { kind: 'asr-sense-voice', files, languages: ['multi', 'zh', 'en', 'ja', 'ko', 'yue'], main: folder.abs(model) };
  },
});
