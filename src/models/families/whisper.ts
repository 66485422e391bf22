/** Whisper: <size>-encoder(.int8).onnx, <size>-decoder(.int8).onnx, <size>-tokens.txt. */
import type { SherpaOfflineRecognizerConfig } from '../../engines/sherpa-onnx.js';
import { offlineAsrKind } from './asr-kinds.js';
import { defineFamily, requirePackFiles } from './family.js';
import { WHISPER_LANGUAGES } from './languages.js';

/** Whisper's language token: ISO 639-1, "" to let the model detect it. */
function whisperLanguage(language: string | undefined): string {
  return !language || language === 'multi' ? '' : language;
}

/** The language is part of Whisper's config: each request's is applied with setConfig before its decode. */
function forLanguage(config: SherpaOfflineRecognizerConfig, language: string): SherpaOfflineRecognizerConfig {
  const whisper = config.modelConfig.whisper;
  if (!whisper || whisper.language === whisperLanguage(language)) return config;
  return { ...config, modelConfig: { ...config.modelConfig, whisper: { ...whisper, language: whisperLanguage(language) } } };
}

export const whisper = defineFamily({
  id: 'whisper',
  name: 'Whisper',
  kinds: {
    'asr-whisper': offlineAsrKind({
      requiredMetadata: ['n_text_layer', 'n_text_ctx', 'sot', 'eot'],
      model: (pack) => {
        const f = requirePackFiles(pack, ['encoder', 'decoder']);
        // Language "" = detect; tailPaddings -1: sherpa's default padding (the examples' value).
        return { whisper: { encoder: f.encoder, decoder: f.decoder, language: '', task: 'transcribe', tailPaddings: -1 } };
      },
      tokenTimestamps: false,
      // Whisper's encoder takes exactly 30 s of audio (sherpa pads shorter input, longer is refused).
      windowSeconds: 30,
      forLanguage,
    }),
  },
  // The catalogue lists a multilingual Whisper as ["multi"]: it decodes every language of its tokenizer.
  cataloguedLanguages: (languages) => (languages.includes('multi') ? ['multi', ...WHISPER_LANGUAGES] : [...languages]),
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
});
