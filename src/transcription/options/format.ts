/**
 * `format=true`. With a punctuation pack (punctuateWords): the model puts the marks after the
 * words, and sentence case follows its sentence ends. Without one: the rule-based fallback
 * (formatWords).
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
import type { Punctuator } from '../../engines/types.js';

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

/** Whether a word is a redaction placeholder such as [CREDITCARDNUMBER_1] (with any marks after it). */
export function isPlaceholder(word: string): boolean {
  return PLACEHOLDER.test(word);
}
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

/** The marks a punctuation model writes, as English writes them (the CT-Transformer writes Chinese ones). */
const MARKS: Record<string, string> = { '，': ',', '、': ',', '。': '.', '？': '?', '！': '!', '；': ';', '：': ':', ',': ',', '.': '.', '?': '?', '!': '!', ';': ';', ':': ':' };

/**
 * The words punctuated by `punctuator`, then put in sentence case (a capital at the start and after
 * each . ? !, "I" kept; all-capitals output lowered first, as the fallback does; a model that
 * restores case also gives names their capital and acronyms their capitals), each ending with
 * the model's mark after it; times and other fields untouched. The model is given one plain token
 * per word (its letters and digits: "$25" as 25, a placeholder by its letters), so its answer maps
 * back word for word. Undefined, for the fallback to format instead, when the words already carry
 * end marks (the recogniser punctuates) or the model's answer does not map back.
 */
export async function punctuateWords<T extends FormattableWord>(words: readonly T[], punctuator: Punctuator, signal?: AbortSignal): Promise<T[] | undefined> {
  if (words.length === 0) return [];
  if (words.some((w) => !PLACEHOLDER.test(w.word) && END_MARK.test(w.word))) return undefined;
  const text = words.map((w) => w.word).join(' ');
  const allCaps = /\p{Lu}/u.test(text) && !/\p{Ll}/u.test(text);
  const out = words.map((w) => ({ ...w, word: (allCaps ? lowerKeepingI(w.word) : w.word).replace(/[,;:]+$/, '') }));
  const tokens = out.map((w) => w.word.replace(/[^\p{L}\p{N}]/gu, '') || 'x');
  const answer = await punctuator.punctuate(tokens.join(' '), { signal });
  const lower = answer.toLowerCase();
  // Where each token starts in the answer, and what lies between it and the next (its marks).
  const starts: number[] = [];
  let at = 0;
  for (const token of tokens) {
    const found = lower.indexOf(token.toLowerCase(), at);
    if (found < 0 || !isGap(answer.slice(at, found))) return undefined;
    starts.push(found);
    at = found + token.length;
  }
  if (!isGap(answer.slice(at))) return undefined;
  let sentenceStart = true;
  out.forEach((w, i) => {
    const gap = answer.slice(starts[i]! + tokens[i]!.length, starts[i + 1] ?? answer.length);
    const mark = [...gap].map((c) => MARKS[c]).find(Boolean) ?? (i === out.length - 1 ? '.' : '');
    if (punctuator.restoresCase && !PLACEHOLDER.test(w.word)) w.word = casedAs(w.word, answer.slice(starts[i]!, starts[i]! + tokens[i]!.length));
    if (sentenceStart) w.word = capitalise(w.word);
    w.word += mark;
    sentenceStart = /[.?!]$/.test(mark);
  });
  return out;
}

/** `word` in the case the model gave its token: all capitals (an acronym, two letters or more), or a capital first letter. */
function casedAs(word: string, token: string): string {
  if (/\p{Lu}.*\p{Lu}/u.test(token) && !/\p{Ll}/u.test(token)) return word.toUpperCase();
  return /^\p{Lu}/u.test(token) ? capitalise(word) : word;
}

/** Only spaces and marks: what may lie between two of the words in a model's answer. */
function isGap(text: string): boolean {
  return [...text].every((c) => /\s/u.test(c) || c in MARKS);
}
