/** Piper, Coqui and MMS voices: one VITS model with tokens.txt, phonemised by espeak-ng or a lexicon. */
import type { ModelFamily } from './family.js';
import { languageCode, languagesFromName } from './languages.js';
import { espeakUnlessLexicon, ttsTestLoad } from './test-loads.js';

export const piperVits: ModelFamily = {
  name: 'Piper/VITS',
  kinds: ['tts-vits'],
  detect(folder) {
    if (!folder.tokens) return undefined;
    const { model, metadata, modelType } = folder.single;
    if (!model) return undefined;
    const vits = modelType === 'vits' || /piper|coqui|mms/i.test(metadata.comment ?? '') || /vits|piper|mms|coqui/i.test(folder.lower) || folder.dirs.includes('espeak-ng-data');
    if (!vits) return undefined;
    const dataDir = folder.dataDir;
    const files: Record<string, string> = { model: folder.abs(model), tokens: folder.abs(folder.tokens), ...dataDir };
    if (folder.names.includes('lexicon.txt') && !('dataDir' in dataDir)) files.lexicon = folder.abs('lexicon.txt');
    const lang = languageCode(metadata.language) ?? languagesFromName(folder.id)[0];
    return { kind: 'tts-vits', files, languages: lang ? [lang] : [], main: folder.abs(model) };
  },
  requiredMetadata: { 'tts-vits': ['sample_rate', 'n_speakers', 'language'] },
  usesSharedEspeak: espeakUnlessLexicon,
  testLoad: ttsTestLoad,
};
