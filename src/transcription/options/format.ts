/**
 * `format=true` without a punctuation pack: the rule-based fallback.
 * What it does:
 * - a sentence ends where the recogniser put . ? or !, or where the speaker paused at least the
 *   utterance pause (0.8 s by default), and at the end;
 * - every sentence starts with a capital letter and ends with "." — or "?" when its first word
 *   asks (what, who, where, when, why, how, which, is, are, do, does, did, can, could, would,
 *   will, should, shall, may, have, has);
 * - all-capitals output (streaming zipformers write so) is put in lower case first, keeping "I"
 *   and its contractions, and placeholders such as [CREDITCARDNUMBER_1], as they are.
 * What it does not do: commas, quotes or other marks inside a sentence; proper nouns (names stay
 * lower case in all-capitals output); sentence ends without a pause.
 */
export interface FormattableWord {
  word: string;
  start: number;
  end: number;
}

const QUESTION_STARTS = new Set([
  'what', 'who', 'whom', 'whose', 'where', 'when', 'why', 'how', 'which', 'is', 'are', 'am', 'was', 'were', 'do', 'does', 'did',
  'can', 'could', 'would', 'will', 'should', 'shall', 'may', 'have', 'has', "isn't", "aren't", "don't", "doesn't", "didn't", "can't", "won't",
]);
const PLACEHOLDER = /^\[[A-Z]+_\d+\][.,!?]*$/;
const END_MARK = /[.?!]["')\]]*$/;

function lowerKeepingI(word: string): string {
  if (PLACEHOLDER.test(word)) return word;
  const lower = word.toLowerCase();
  return /^i('|’|$)/.test(lower) ? `I${lower.slice(1)}` : lower;
}

function capitalise(word: string): string {
  if (PLACEHOLDER.test(word)) return word;
  return word.replace(/\p{L}/u, (c) => c.toUpperCase());
}

/** The words with sentence case and end punctuation; times and other fields untouched. */
export function formatWords<T extends FormattableWord>(words: readonly T[], pauseSeconds: number): T[] {
  const text = words.map((w) => w.word).join(' ');
  const allCaps = /\p{Lu}/u.test(text) && !/\p{Ll}/u.test(text);
  const out = words.map((w) => ({ ...w, word: allCaps ? lowerKeepingI(w.word) : w.word }));
  let sentenceStart = 0;
  out.forEach((w, i) => {
    if (i === sentenceStart) w.word = capitalise(w.word);
    const next = out[i + 1];
    const ends = !next || END_MARK.test(w.word) || next.start - w.end >= pauseSeconds;
    if (!ends) return;
    if (!END_MARK.test(w.word)) {
      const first = out[sentenceStart]!.word.toLowerCase().replace(/[^\p{L}'’]/gu, '');
      w.word = w.word.replace(/[,;:]+$/, '') + (QUESTION_STARTS.has(first) ? '?' : '.');
    }
    sentenceStart = i + 1;
  });
  return out;
}
