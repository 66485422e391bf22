/**
 * `keywords=word:intensifier,…`: words and phrases the client expects (names, products, jargon),
 * each with how strongly to favour it. A keyword without an intensifier gets DEFAULT_INTENSIFIER;
 * 1 to 3 is the working range, and above 5 the boost stops growing (hotwordBoost), so a large
 * intensifier cannot push the recogniser into writing the keyword where it was not said.
 *
 * Bounded so one session cannot make decoding or parsing expensive: at most MAX_KEYWORDS entries,
 * each at most MAX_KEYWORD_LENGTH characters, the whole list at most MAX_KEYWORDS_CHARACTERS, and
 * intensifiers from 0 (listed, never boosted) to MAX_INTENSIFIER.
 *
 * Case: the keyword's casing is what the transcript shows. The recogniser is asked for the keyword
 * as its vocabulary spells it (an all-capitals vocabulary gets it in capitals), and where the
 * transcript then holds a word of a keyword written with capitals (Blackwell, NVIDIA, iPhone), in
 * any case, it is written as the keyword writes it (applyKeywordCasing). A keyword all in lower
 * case leaves the transcript's own casing: sentence case, or an all-capitals recogniser's output.
 * Two keywords that differ only in case boost the same sounds; the first one listed with
 * capitals gives the casing.
 */
import type { Hotword } from '../../engines/types.js';
import { InvalidRequestError } from '../../errors.js';

export interface Keyword {
  /** The word or phrase as the client wrote it (trimmed, inner spaces collapsed). */
  word: string;
  /** How strongly to favour it, on the service's intensifier scale. */
  weight: number;
  /** false: boosted only, the transcript keeps its own casing (the words of an OpenAI prompt, which is prose). */
  casing?: false;
}

export const MAX_KEYWORDS = 10_000;
export const MAX_KEYWORD_LENGTH = 100;
/** The whole list as one comma-separated text: 10,000 keywords of 16 characters with their intensifiers. */
export const MAX_KEYWORDS_CHARACTERS = 200_000;
export const MAX_INTENSIFIER = 100;
export const DEFAULT_INTENSIFIER = 1;

/**
 * The recogniser's boost (sherpa-onnx hotword score: added to the log-probability of each token of
 * a keyword while the decode follows it) for an intensifier: BOOST_CEILING × tanh(intensifier /
 * INTENSIFIER_SCALE): 1 → 1.75, 2 → 2.61, 3 → 2.89, 5 and above → 3.0 at most.
 * Calibrated by bench/keywords.ts on the calibration half of the corpus's English recordings,
 * boosting the words each plain decode missed, and boosting words not said, with the shared
 * streaming zipformer. Boost 1 / 2 / 2.5 / 3 recovered 17 / 23 / 31 / 34% of the missed words and
 * no unspoken word came out; from 3.25 unspoken words came out (2, 4, 7 of 72 at 3.25, 3.5, 3.75)
 * while recall gained nothing. So the ceiling is 3, and intensifier 2 lands past 2.5.
 */
const BOOST_CEILING = 3;
const INTENSIFIER_SCALE = 1.5;

export function hotwordBoost(intensifier: number): number {
  return Math.round(1000 * BOOST_CEILING * Math.tanh(intensifier / INTENSIFIER_SCALE)) / 1000;
}

/** The keywords as the recogniser's hotwords: each boosted by hotwordBoost; those at intensifier 0 left out. */
export function hotwordsOf(keywords: readonly Keyword[]): Hotword[] {
  return keywords.filter((k) => k.weight > 0).map((k) => ({ phrase: k.word, score: hotwordBoost(k.weight) }));
}

/** Letters of any script, digits, and the apostrophes, hyphens, dots and spaces inside words. */
const KEYWORD = /^[\p{L}\p{N}][\p{L}\p{N}\p{M}'’. -]*$/u;
const INTENSIFIER = /^\d+(\.\d+)?$/;

/** The keywords of a query value; InvalidRequestError naming the broken rule otherwise. */
export function parseKeywords(value: string): Keyword[] {
  if (value.length > MAX_KEYWORDS_CHARACTERS) {
    throw new InvalidRequestError(`keywords may be at most ${MAX_KEYWORDS_CHARACTERS} characters in all (got ${value.length})`);
  }
  const entries = value.split(',').map((e) => e.trim());
  if (entries.some((e) => e === '')) throw new InvalidRequestError('keywords must be comma-separated word:intensifier entries with no empty entry');
  if (entries.length > MAX_KEYWORDS) throw new InvalidRequestError(`keywords may list at most ${MAX_KEYWORDS} entries (got ${entries.length})`);
  return entries.map((entry) => {
    const colon = entry.lastIndexOf(':');
    const word = (colon === -1 ? entry : entry.slice(0, colon)).trim().replace(/\s+/g, ' ');
    const intensifierText = colon === -1 ? undefined : entry.slice(colon + 1).trim();
    if (word.length === 0 || word.length > MAX_KEYWORD_LENGTH) {
      throw new InvalidRequestError(`each keyword must be 1 to ${MAX_KEYWORD_LENGTH} characters long`);
    }
    if (!KEYWORD.test(word)) throw new InvalidRequestError(`keyword "${word}" may hold only letters, digits, spaces, apostrophes, hyphens and dots`);
    let weight = DEFAULT_INTENSIFIER;
    if (intensifierText !== undefined) {
      weight = INTENSIFIER.test(intensifierText) ? Number(intensifierText) : NaN;
      if (!(weight >= 0 && weight <= MAX_INTENSIFIER)) {
        throw new InvalidRequestError(`keyword intensifiers must be numbers from 0 to ${MAX_INTENSIFIER} (got "${intensifierText}" for "${word}")`);
      }
    }
    return { word, weight };
  });
}

/** Most words an OpenAI-style `prompt` gives as keywords: a prompt is prose, not a keyword list. */
export const MAX_PROMPT_KEYWORDS = 100;

/** The words of an OpenAI-style `prompt` as keywords: distinct words of 3+ letters, in order, within the bounds. */
export function keywordsFromPrompt(prompt: string): Keyword[] {
  const seen = new Set<string>();
  const out: Keyword[] = [];
  for (const match of prompt.matchAll(/[\p{L}\p{N}][\p{L}\p{N}\p{M}'’-]*/gu)) {
    const word = match[0].slice(0, MAX_KEYWORD_LENGTH);
    const key = word.toLowerCase();
    if (word.length < 3 || seen.has(key)) continue;
    seen.add(key);
    out.push({ word, weight: DEFAULT_INTENSIFIER, casing: false });
    if (out.length === MAX_PROMPT_KEYWORDS) break;
  }
  return out;
}

/** A word's letters and digits in lower case: what two spellings of one word share. */
const wordKey = (word: string) => word.toLowerCase().replace(/[^\p{L}\p{N}'’]/gu, '').replace(/’/g, "'");

/** The keywords' words by their key, each with the casing of the first keyword that has it; phrases split into words. */
function keywordSpellings(keywords: readonly Keyword[]): Map<string, string> {
  const spellings = new Map<string, string>();
  for (const k of keywords) {
    if (k.casing === false) continue;
    for (const word of k.word.split(' ')) {
      const key = wordKey(word);
      // A word in lower case asks for no casing: it would only break up all-capitals output.
      if (key && !spellings.has(key) && /\p{Lu}/u.test(word)) spellings.set(key, word.replace(/[.]+$/, ''));
    }
  }
  return spellings;
}

/** One word in the keyword's casing, marks around it kept. */
function recased(word: string, spellings: Map<string, string>): string {
  const [, before, core, after] = /^([^\p{L}\p{N}]*)(.*?)([^\p{L}\p{N}]*)$/u.exec(word)!;
  const spelling = spellings.get(wordKey(core!));
  return spelling === undefined || spelling === core ? word : `${before}${spelling}${after}`;
}

/**
 * The words with every word a keyword holds written in the keyword's casing ("BLACKWELL" or
 * "blackwell" with the keyword Blackwell: "Blackwell"). Words are matched one by one, so the
 * words of a phrase keyword take its casing wherever they stand.
 */
export function applyKeywordCasing<T extends { word: string }>(words: readonly T[], keywords: readonly Keyword[] | undefined): T[] {
  if (!keywords?.length) return [...words];
  const spellings = keywordSpellings(keywords);
  return words.map((w) => {
    const word = recased(w.word, spellings);
    return word === w.word ? w : { ...w, word };
  });
}

/** applyKeywordCasing on a transcript's text (words separated by spaces). */
export function applyKeywordCasingToText(text: string, keywords: readonly Keyword[] | undefined): string {
  if (!keywords?.length) return text;
  const spellings = keywordSpellings(keywords);
  return text.split(' ').map((word) => recased(word, spellings)).join(' ');
}
