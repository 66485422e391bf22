/**
 * Guessing the language of a text (`language: "auto"`), among the languages the chosen voice
 * and model allow.
 */
import { detectAll } from 'tinyld';

/**
 * Scripts used by one language (or, for Devanagari, first by Hindi) among those Parley speaks.
 * Checked before the n-gram model: a script is a surer sign than statistics on a short text.
 */
const SCRIPTS: [RegExp, string[]][] = [
  [/\p{Script=Devanagari}/u, ['hi', 'mr', 'ne']],
  [/\p{Script=Tamil}/u, ['ta']],
  [/\p{Script=Kannada}/u, ['kn']],
  [/\p{Script=Bengali}/u, ['bn', 'as']],
  [/\p{Script=Gujarati}/u, ['gu']],
  [/\p{Script=Malayalam}/u, ['ml']],
  [/\p{Script=Telugu}/u, ['te']],
  [/\p{Script=Gurmukhi}/u, ['pa']],
  [/\p{Script=Oriya}/u, ['or']],
  [/\p{Script=Arabic}/u, ['ar', 'fa', 'ur']],
  [/\p{Script=Hebrew}/u, ['he']],
  [/\p{Script=Cyrillic}/u, ['ru', 'uk', 'bg']],
  [/\p{Script=Greek}/u, ['el']],
  [/\p{Script=Hangul}/u, ['ko']],
  [/[\p{Script=Hiragana}\p{Script=Katakana}]/u, ['ja']],
  [/\p{Script=Han}/u, ['zh', 'ja']],
  [/\p{Script=Thai}/u, ['th']],
];

/** Below this many letters n-gram statistics are mostly noise. */
const MIN_LETTERS = 12;
/**
 * tinyld's accuracy is spread over all candidates: a guess is trusted when it is high enough
 * on its own, or clearly ahead of the runner-up (a Dutch pangram scores 0.076 against 0.043 for
 * French).
 */
const SURE_ACCURACY = 0.1;
const LEAD_RATIO = 1.5;

/**
 * The ISO 639-1 code of `text`, always one of `allowed` (when `allowed` is not empty).
 * Falls back to English, or to the first allowed language, for short or ambiguous text.
 */
export function detectLanguage(text: string, allowed: string[]): string {
  const candidates = [...new Set(allowed.map((l) => l.toLowerCase()))];
  const fallback = candidates.length === 0 || candidates.includes('en') ? 'en' : candidates[0]!;
  if (candidates.length === 1) return candidates[0]!;
  const isAllowed = (l: string) => candidates.length === 0 || candidates.includes(l);

  const letters = [...text.matchAll(/\p{L}/gu)].map((m) => m[0]);
  if (letters.length === 0) return fallback;

  // The script most letters are written in decides when it belongs to an allowed language.
  const counts = new Map<number, number>();
  for (const ch of letters) {
    const i = SCRIPTS.findIndex(([re]) => re.test(ch));
    if (i >= 0) counts.set(i, (counts.get(i) ?? 0) + 1);
  }
  const latin = letters.length - [...counts.values()].reduce((a, b) => a + b, 0);
  const [topScript, topCount] = [...counts.entries()].sort((a, b) => b[1] - a[1])[0] ?? [-1, 0];
  if (topCount > latin) {
    const language = SCRIPTS[topScript]![1].find(isAllowed);
    if (language) return language;
  }

  if (letters.length < MIN_LETTERS) return fallback;
  const guesses = detectAll(text, candidates.length ? { only: candidates } : {});
  const [best, second] = guesses.filter((g) => isAllowed(g.lang));
  if (!best) return fallback;
  const sure = best.accuracy >= SURE_ACCURACY || best.accuracy >= LEAD_RATIO * (second?.accuracy ?? 0);
  return sure ? best.lang : fallback;
}
