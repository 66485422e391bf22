/** Piper, Coqui and MMS voices: one VITS model with tokens.txt, phonemised by espeak-ng or a lexicon. */
import { defineFamily } from './family.js';
import { languageCode, languagesFromName } from './languages.js';
import { espeakUnlessLexicon, phonemizer, requireFile, ttsKind } from './tts-kinds.js';

/** One VITS model with its tokens and a phonemiser (own or shared espeak-ng data, or a lexicon). */
export const vitsKind = ttsKind({
  requiredMetadata: ['sample_rate', 'n_speakers', 'language'],
  usesSharedEspeak: espeakUnlessLexicon,
  model: (pack, espeakDataDir) => ({
    vits: { model: requireFile(pack, 'model'), tokens: requireFile(pack, 'tokens'), ...phonemizer(pack, espeakDataDir) },
  }),
});

export const piperVits = defineFamily({
  id: 'piper-vits',
  name: 'Piper/VITS',
  kinds: { 'tts-vits': vitsKind },
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
  languagesFromMetadata(metadata) {
    const lang = languageCode(metadata.language);
    return lang ? [lang] : [];
  },
});
