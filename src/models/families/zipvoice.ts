/**
 * ZipVoice (zero-shot): encoder + flow-matching decoder + a Vocos vocoder, tokens.txt, lexicon.txt
 * and espeak-ng-data. Upstream's pack (sherpa-onnx-zipvoice-*) ships the vocoder separately
 * (vocoder-models/vocos_24khz.onnx); it belongs in the pack's folder, where `parley models pull` puts it.
 */
import type { ModelFamily } from './family.js';
import { languagesFromName } from './languages.js';
import { zeroShotTestLoad } from './test-loads.js';

export const zipvoice: ModelFamily = {
  name: 'ZipVoice',
  kinds: ['tts-zipvoice'],
  detect(folder) {
    const pick = (re: RegExp) => folder.pickPreferred(folder.onnx.filter((n) => re.test(n)));
    const encoder = pick(/^(text_)?encoder/i);
    const decoder = pick(/^(fm_)?decoder/i);
    const named = /zipvoice/i.test(folder.lower);
    if (!named && !(encoder && folder.metadataOf(encoder).metadata.model_type === 'zipvoice')) return undefined;
    const vocoder = pick(/vocos|vocoder|hifigan/i);
    if (!encoder || !decoder || !folder.tokens || !folder.names.includes('lexicon.txt')) {
      return { problem: 'ZipVoice pack needs encoder and decoder .onnx files, tokens.txt and lexicon.txt' };
    }
    if (!vocoder) {
      return { problem: 'ZipVoice pack without a vocoder: put vocos_24khz.onnx (sherpa-onnx release vocoder-models) in its folder' };
    }
    const langs = languagesFromName(folder.id);
    return {
      kind: 'tts-zipvoice',
      files: {
        encoder: folder.abs(encoder),
        decoder: folder.abs(decoder),
        vocoder: folder.abs(vocoder),
        tokens: folder.abs(folder.tokens),
        lexicon: folder.abs('lexicon.txt'),
        ...folder.dataDir,
      },
      languages: langs.length > 0 ? langs : ['en'],
      main: folder.abs(encoder),
    };
  },
  // Every ZipVoice metadata key has a default in sherpa; the vocoder's model_type has none (it
  // is checked by the test load, which runs in a child process).
  usesSharedEspeak: (pack) => !pack.files.dataDir,
  testLoad: zeroShotTestLoad,
};
