/**
 * Pocket TTS (zero-shot, English): lm_flow, lm_main, encoder, decoder and text_conditioner models
 * with vocab.json and token_scores.json. It conditions on reference audio alone.
 */
import { defineFamily } from './family.js';
import { requireFile, zeroShotKind } from './tts-kinds.js';

export const pocket = defineFamily({
  id: 'pocket',
  name: 'Pocket TTS',
  kinds: {
    // A SentencePiece-style vocabulary instead of tokens.txt, and no phonemiser.
    'tts-pocket': zeroShotKind({
      engineName: 'pocket-tts',
      needsReferenceText: false,
      model: (pack) => ({
        pocket: {
          lmFlow: requireFile(pack, 'lmFlow'),
          lmMain: requireFile(pack, 'lmMain'),
          encoder: requireFile(pack, 'encoder'),
          decoder: requireFile(pack, 'decoder'),
          textConditioner: requireFile(pack, 'textConditioner'),
          vocabJson: requireFile(pack, 'vocabJson'),
          tokenScoresJson: requireFile(pack, 'tokenScoresJson'),
        },
      }),
    }),
  },
  detect(folder) {
    if (!folder.names.includes('token_scores.json') && !/pocket/i.test(folder.lower)) return undefined;
    const pick = (re: RegExp) => folder.pickPreferred(folder.onnx.filter((n) => re.test(n)));
    const parts = {
      lmFlow: pick(/^lm_flow/i),
      lmMain: pick(/^lm_main/i),
      encoder: pick(/^encoder/i),
      decoder: pick(/^decoder/i),
      textConditioner: pick(/^text_conditioner/i),
    };
    const missing = Object.entries(parts).filter(([, f]) => !f).map(([role]) => role);
    if (missing.length > 0 || !folder.names.includes('vocab.json') || !folder.names.includes('token_scores.json')) {
      return { problem: 'Pocket TTS pack needs lm_flow, lm_main, encoder, decoder and text_conditioner .onnx files, vocab.json and token_scores.json' };
    }
    const files: Record<string, string> = { vocabJson: folder.abs('vocab.json'), tokenScoresJson: folder.abs('token_scores.json') };
    for (const [role, name] of Object.entries(parts)) files[role] = folder.abs(name!);
    return { kind: 'tts-pocket', files, languages: ['en'], main: files.encoder };
  },
});
