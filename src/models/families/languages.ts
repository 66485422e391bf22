/** Language codes as packs name them: Whisper's list, Piper's English names, folder names. */

/** Whisper's languages (ISO 639-1 where one exists), the order of its tokenizer. */
export const WHISPER_LANGUAGES = [
  'en', 'zh', 'de', 'es', 'ru', 'ko', 'fr', 'ja', 'pt', 'tr', 'pl', 'ca', 'nl', 'ar', 'sv', 'it', 'id', 'hi', 'fi', 'vi',
  'he', 'uk', 'el', 'ms', 'cs', 'ro', 'da', 'hu', 'ta', 'no', 'th', 'ur', 'hr', 'bg', 'lt', 'la', 'mi', 'ml', 'cy', 'sk',
  'te', 'fa', 'lv', 'bn', 'sr', 'az', 'sl', 'kn', 'et', 'mk', 'br', 'eu', 'is', 'hy', 'ne', 'mn', 'bs', 'kk', 'sq', 'sw',
  'gl', 'mr', 'pa', 'si', 'km', 'sn', 'yo', 'so', 'af', 'oc', 'ka', 'be', 'tg', 'sd', 'gu', 'am', 'yi', 'lo', 'uz', 'fo',
  'ht', 'ps', 'tk', 'nn', 'mt', 'sa', 'lb', 'my', 'bo', 'tl', 'mg', 'as', 'tt', 'haw', 'ln', 'ha', 'ba', 'jv', 'su',
];

/** English language names (Piper's `language` metadata) → ISO 639-1. */
const LANGUAGE_NAMES: Record<string, string> = {
  english: 'en', spanish: 'es', french: 'fr', german: 'de', italian: 'it', dutch: 'nl', polish: 'pl', russian: 'ru',
  swedish: 'sv', arabic: 'ar', malayalam: 'ml', telugu: 'te', hindi: 'hi', portuguese: 'pt', chinese: 'zh',
  japanese: 'ja', korean: 'ko', turkish: 'tr', ukrainian: 'uk', czech: 'cs', danish: 'da', finnish: 'fi', greek: 'el',
  hungarian: 'hu', icelandic: 'is', norwegian: 'no', romanian: 'ro', slovak: 'sk', slovenian: 'sl', serbian: 'sr',
  swahili: 'sw', vietnamese: 'vi', catalan: 'ca', welsh: 'cy', persian: 'fa', farsi: 'fa', georgian: 'ka',
  kazakh: 'kk', luxembourgish: 'lb', latvian: 'lv', nepali: 'ne', indonesian: 'id', bengali: 'bn', tamil: 'ta',
  marathi: 'mr', gujarati: 'gu', kannada: 'kn', punjabi: 'pa', urdu: 'ur', hebrew: 'he', bulgarian: 'bg',
  croatian: 'hr', lithuanian: 'lt', estonian: 'et', albanian: 'sq', macedonian: 'mk', thai: 'th', malay: 'ms',
};

/** "English", "en-us", "en_US", "es" → "en"/"es"; undefined when unknown. */
export function languageCode(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const v = value.trim().toLowerCase();
  const named = LANGUAGE_NAMES[v] ?? LANGUAGE_NAMES[v.split(/[\s(]/)[0] ?? ''];
  if (named) return named;
  const m = /^([a-z]{2,3})(?:[-_][a-z0-9]+)*$/.exec(v);
  return m ? m[1] : undefined;
}

/** Languages named in a folder name like "...-zh-en-...", "...-en-..." or a Piper "xx_YY". */
export function languagesFromName(id: string): string[] {
  const lower = id.toLowerCase();
  const piper = /(?:^|[-_])([a-z]{2,3})_([A-Z]{2})(?:[-_.]|$)/.exec(id);
  if (piper) return [piper[1]!];
  const found: string[] = [];
  const known = new Set(['en', 'zh', 'ja', 'ko', 'yue', 'de', 'fr', 'es', 'ru', 'it', 'pt', 'nl', 'pl', 'ar', 'hi', 'vi', 'th', 'sv', 'uk', 'tr']);
  for (const part of lower.split(/[-_.]/)) if (known.has(part) && !found.includes(part)) found.push(part);
  if (found.length === 0 && /gigaspeech|librispeech|ljspeech|libritts|giga/.test(lower)) found.push('en');
  return found;
}
