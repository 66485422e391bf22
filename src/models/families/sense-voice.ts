/** SenseVoice: one model with tokens.txt; detects the language, tags emotion and events. */
import type { ModelFamily } from './family.js';
import { offlineAsrTestLoad } from './test-loads.js';

export const senseVoice: ModelFamily = {
  name: 'SenseVoice',
  kinds: ['asr-sense-voice'],
  detect(folder) {
    if (!folder.tokens) return undefined;
    const { model, metadata } = folder.single;
    if (!model || !(/sense-?voice/i.test(folder.lower) || ('lfr_window_size' in metadata && 'with_itn' in metadata))) return undefined;
    const files = { model: folder.abs(model), tokens: folder.abs(folder.tokens) };
    return { kind: 'asr-sense-voice', files, languages: ['multi', 'zh', 'en', 'ja', 'ko', 'yue'], main: folder.abs(model) };
  },
  requiredMetadata: { 'asr-sense-voice': ['lfr_window_size', 'lfr_window_shift'] },
  testLoad: offlineAsrTestLoad,
};
