/**
 * ZipVoice (zero-shot): encoder + flow-matching decoder + a Vocos vocoder, tokens.txt, lexicon.txt
 * and espeak-ng-data. Upstream's pack (sherpa-onnx-zipvoice-*) ships the vocoder separately
 * (vocoder-models/vocos_24khz.onnx); it belongs in the pack's folder, where `parley models pull` puts it.
 */
import { defineFamily } from './family.js';
import { languagesFromName } from './languages.js';
import { espeakUnlessOwnData, requireFile, zeroShotKind } from './tts-kinds.js';

/**
 * ZipVoice's flow-matching settings, upstream's defaults (offline-tts-zipvoice-model-config.h):
 * the prompt's log-mel scale, the timestep shift, the RMS a quiet prompt is raised to, and the
 * classifier-free guidance scale.
 */
const ZIPVOICE_DEFAULTS = { featScale: 0.1, tShift: 0.5, targetRms: 0.1, guidanceScale: 1.0 } as const;

export const zipvoice = defineFamily({
  id: 'zipvoice',
  name: 'ZipVoice',
  kinds: {
    // Every ZipVoice metadata key has a default in sherpa; the vocoder's model_type has none (it
    // is checked by the test load, which runs in a child process).
    'tts-zipvoice': zeroShotKind({
      usesSharedEspeak: espeakUnlessOwnData,
      engineName: 'zipvoice',
      // It conditions on what the reference sample says as well as on its sound.
      needsReferenceText: true,
      // Its frontend needs both its lexicon (Chinese, listed English words) and espeak-ng.
      model: (pack, espeakDataDir) => {
        const tokens = requireFile(pack, 'tokens');
        return {
          zipvoice: {
            tokens,
            encoder: requireFile(pack, 'encoder'),
            decoder: requireFile(pack, 'decoder'),
            vocoder: requireFile(pack, 'vocoder'),
            dataDir: pack.files.dataDir ?? espeakDataDir,
            lexicon: requireFile(pack, 'lexicon'),
            ...ZIPVOICE_DEFAULTS,
          },
        };
      },
    }),
  },
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
});
