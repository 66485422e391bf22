/**
 * Splitting text into sentences so that the first one can be synthesised and streamed while
 * the rest wait, and no piece is longer than an engine handles well.
 */
import { collapseWhitespace } from './normalize.js';

/**
 * Words that a full stop follows without ending the sentence. Titles come before a name, the
 * others are Latin or common short forms; all are compared in lower case without the stop.
 */
const ABBREVIATIONS = new Set([
  // en
  'mr', 'mrs', 'ms', 'dr', 'prof', 'st', 'mt', 'jr', 'sr', 'vs', 'no', 'approx', 'fig', 'vol', 'ch', 'ed',
  'jan', 'feb', 'mar', 'apr', 'jun', 'jul', 'aug', 'sep', 'sept', 'oct', 'nov', 'dec', 'inc', 'ltd', 'co', 'corp',
  // de
  'nr', 'hr', 'fr', 'bzw', 'ca', 'vgl', 'str', 'mio', 'mrd', 'evtl', 'ggf', 'inkl', 'zzgl',
  // fr
  'm', 'mm', 'mme', 'mlle', 'env', 'cf',
  // es
  'sra', 'srta', 'dra', 'ud', 'uds', 'núm', 'pág', 'aprox',
]);

/** Abbreviations that often end a sentence: they end one when a capital letter follows. */
const MAY_END = new Set(['etc', 'usw', 'inc', 'ltd', 'co', 'corp', 'jr', 'sr', 'str']);

/**
 * Where a sentence may end: a run of terminal punctuation with closing quotes/brackets, then
 * whitespace or the end. Danda, Arabic and CJK stops end a sentence even without a space after.
 */
const END = /([.!?…]+|[।॥؟。！？]+)(["'”’»)\]]*)(?=\s|$)|([।॥؟。！？]+)(["'”’»)\]」』]*)/gu;

export function splitSentences(text: string, language: string, maxChars = 400): string[] {
  const clean = collapseWhitespace(text);
  const sentences: string[] = [];
  let start = 0;
  for (const m of clean.matchAll(END)) {
    const end = m.index! + m[0].length;
    if (!endsSentence(clean, m.index!, m[0], end, language)) continue;
    sentences.push(clean.slice(start, end).trim());
    start = end;
  }
  sentences.push(clean.slice(start).trim());
  return sentences.filter((s) => s.length > 0).flatMap((s) => splitLong(s, maxChars));
}

function endsSentence(text: string, at: number, stop: string, end: number, language: string): boolean {
  if (!stop.startsWith('.')) {
    // "Wait... what?": an ellipsis followed by a lower-case word goes on.
    if (stop.startsWith('…')) return !/^\s*\p{Ll}/u.test(text.slice(end));
    return true;
  }
  if (/^\.{2,}/.test(stop)) return !/^\s*\p{Ll}/u.test(text.slice(end));
  const next = text.slice(end).trimStart();
  // The word before the stop (a bounded look back keeps this linear on long text).
  const word = /([\p{L}\p{N}.'’-]*)$/u.exec(text.slice(Math.max(0, at - 64), at))![1]!;
  const bare = word.toLowerCase().replace(/^['’-]+/, '');
  const nextIsCapital = /^["'“‘«(]?\p{Lu}/u.test(next);
  if (MAY_END.has(bare)) return nextIsCapital || next === '';
  // "Mr. Smith", "e.g. this", "U.S. law", "J. R. R. Tolkien": the stop belongs to the word.
  if (ABBREVIATIONS.has(bare)) return next === '';
  if (/^(?:\p{L}\.)+\p{L}$/u.test(bare) || /^\p{Lu}$/u.test(word)) return next === '';
  // A lower-case word after the stop continues the sentence ("approx. five", "3. juni").
  if (/^\p{Ll}/u.test(next)) return false;
  // German ordinals ("am 2. Juni") look like numbers ending a sentence; keep them together.
  if (language.startsWith('de') && /^\d{1,4}$/.test(word) && next !== '') return false;
  return true;
}

const CLAUSE_STRONG = /[;:](?=\s)|\s[—–]\s|[；：]/gu;
const CLAUSE_WEAK = /[,،](?=\s)|[，、]|\s[-]\s/gu;

/** Cut a sentence longer than maxChars at clause boundaries, then at spaces, then anywhere. */
function splitLong(sentence: string, maxChars: number): string[] {
  const pieces: string[] = [];
  let rest = sentence;
  while (rest.length > maxChars) {
    const cut = lastBoundary(rest, maxChars);
    const piece = rest.slice(0, cut).trim();
    if (piece) pieces.push(piece);
    rest = rest.slice(cut).trim();
  }
  if (rest) pieces.push(rest);
  return pieces;
}

function lastBoundary(text: string, maxChars: number): number {
  const window = text.slice(0, maxChars + 1);
  // A clause cut too near the start would leave tiny pieces; a third of the limit is the minimum.
  const minimum = Math.floor(maxChars / 3);
  for (const pattern of [CLAUSE_STRONG, CLAUSE_WEAK]) {
    let best = -1;
    for (const m of window.matchAll(pattern)) {
      const after = m.index! + m[0].trimEnd().length;
      if (after <= maxChars && after >= minimum) best = after;
    }
    if (best > 0) return best;
  }
  const space = window.lastIndexOf(' ');
  if (space > 0) return space;
  // No space at all (CJK, a very long token): cut, but not inside a surrogate pair or before a mark.
  let cut = maxChars;
  while (cut > 1 && /[\uDC00-\uDFFF]|\p{M}/u.test(text[cut]!)) cut--;
  return cut;
}
