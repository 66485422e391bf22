/**
 * Joins the words of two decoding windows that overlap, so that a cut through speech neither
 * drops nor repeats a word.
 *
 * Both windows heard the overlap, but each is least reliable at its own edge: the earlier one
 * near its end (the model has no right context there), the later one near its start (no left
 * context). So the join is made at a word both windows recognised, at about the same time, as
 * close to the middle of the overlap as possible: the earlier window's words up to and including
 * that word, then the later window's words after it. Matching words are found by the longest
 * common subsequence of the two overlap word lists (spelling compared case- and
 * punctuation-blind, times within `toleranceSeconds`). When the windows agree on no word there, the
 * join falls back to the middle of the overlap, each word going to the side its midpoint is on.
 */
import type { TimeSpan } from '../engines/types.js';
import type { TimedWord } from './words.js';

export interface StitchOptions {
  /** Two recognitions of one word may differ in time by this much and still be the same word; default 0.5 s. */
  toleranceSeconds?: number;
}

const key = (word: string) => word.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');
const middle = (w: TimedWord) => (w.start + w.end) / 2;

/**
 * `earlier` and `later` are the words (ordered, absolute times) of two windows whose audio
 * overlaps on `overlap`. Returns one ordered word list holding each word once.
 */
export function stitchWords(earlier: TimedWord[], later: TimedWord[], overlap: TimeSpan, options: StitchOptions = {}): TimedWord[] {
  const tolerance = options.toleranceSeconds ?? 0.5;
  const centre = (overlap.start + overlap.end) / 2;
  // Words that may have been heard by both windows (a little slack for words straddling an edge).
  const a0 = firstIndex(earlier, (w) => w.end > overlap.start - tolerance);
  const b1 = firstIndex(later, (w) => w.start >= overlap.end + tolerance);
  const a = earlier.slice(a0);
  const b = later.slice(0, b1);
  const pairs = commonWords(a, b, tolerance);
  if (pairs.length > 0) {
    let best = pairs[0]!;
    let bestDistance = Infinity;
    for (const pair of pairs) {
      const distance = Math.abs(middle(a[pair[0]]!) - centre);
      if (distance < bestDistance) {
        best = pair;
        bestDistance = distance;
      }
    }
    return ordered([...earlier.slice(0, a0 + best[0] + 1), ...later.slice(best[1] + 1)]);
  }
  return ordered([...earlier.filter((w) => middle(w) < centre), ...later.filter((w) => middle(w) >= centre)]);
}

function firstIndex(words: TimedWord[], test: (w: TimedWord) => boolean): number {
  const index = words.findIndex(test);
  return index < 0 ? words.length : index;
}

/** Index pairs of a longest common subsequence of `a` and `b` (same spelling, close in time). */
function commonWords(a: TimedWord[], b: TimedWord[], tolerance: number): Array<[number, number]> {
  const same = (i: number, j: number) => key(a[i]!.word) !== '' && key(a[i]!.word) === key(b[j]!.word) && Math.abs(a[i]!.start - b[j]!.start) <= tolerance;
  // lengths[i][j]: LCS length of a[i..] and b[j..]; the overlap holds a few words, so this is tiny.
  const lengths = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lengths[i]![j] = same(i, j) ? lengths[i + 1]![j + 1]! + 1 : Math.max(lengths[i + 1]![j]!, lengths[i]![j + 1]!);
    }
  }
  const pairs: Array<[number, number]> = [];
  for (let i = 0, j = 0; i < a.length && j < b.length; ) {
    if (same(i, j) && lengths[i]![j] === lengths[i + 1]![j + 1]! + 1) {
      pairs.push([i, j]);
      i++;
      j++;
    } else if (lengths[i + 1]![j]! >= lengths[i]![j + 1]!) i++;
    else j++;
  }
  return pairs;
}

/** Keeps times monotonic where the two windows disagree slightly about the join. */
function ordered(words: TimedWord[]): TimedWord[] {
  const out: TimedWord[] = [];
  for (const w of words) {
    const previousEnd = out.length > 0 ? out[out.length - 1]!.end : -Infinity;
    const start = Math.max(w.start, previousEnd);
    out.push({ ...w, start, end: Math.max(start, w.end) });
  }
  return out;
}
