/**
 * `keywords=word:weight,…`: words and phrases the client expects (names, products, jargon), each
 * with how strongly to favour it. Bounded so one request cannot make decoding expensive: at most
 * MAX_KEYWORDS entries of at most MAX_KEYWORD_LENGTH characters, weights in (0, MAX_WEIGHT].
 * A keyword without a weight gets DEFAULT_WEIGHT.
 */
import { InvalidRequestError } from '../../errors.js';

export interface Keyword {
  /** The word or phrase as the client wrote it (trimmed, inner spaces collapsed). */
  word: string;
  weight: number;
}

export const MAX_KEYWORDS = 100;
export const MAX_KEYWORD_LENGTH = 50;
export const MAX_WEIGHT = 10;
export const DEFAULT_WEIGHT = 2;

/** Letters of any script, digits, and the apostrophes, hyphens, dots and spaces inside words. */
const KEYWORD = /^[\p{L}\p{N}][\p{L}\p{N}\p{M}'’. -]*$/u;

/** The keywords of a query value; InvalidRequestError naming the broken rule otherwise. */
export function parseKeywords(value: string): Keyword[] {
  const entries = value.split(',').map((e) => e.trim());
  if (entries.some((e) => e === '')) throw new InvalidRequestError('keywords must be comma-separated word:weight entries with no empty entry');
  if (entries.length > MAX_KEYWORDS) throw new InvalidRequestError(`keywords may list at most ${MAX_KEYWORDS} entries (got ${entries.length})`);
  return entries.map((entry) => {
    const colon = entry.lastIndexOf(':');
    const word = (colon === -1 ? entry : entry.slice(0, colon)).trim().replace(/\s+/g, ' ');
    const weightText = colon === -1 ? undefined : entry.slice(colon + 1).trim();
    if (word.length === 0 || word.length > MAX_KEYWORD_LENGTH) {
      throw new InvalidRequestError(`each keyword must be 1 to ${MAX_KEYWORD_LENGTH} characters long`);
    }
    if (!KEYWORD.test(word)) throw new InvalidRequestError(`keyword "${word}" may hold only letters, digits, spaces, apostrophes, hyphens and dots`);
    let weight = DEFAULT_WEIGHT;
    if (weightText !== undefined) {
      weight = /^\d+(\.\d+)?$/.test(weightText) ? Number(weightText) : NaN;
      if (!(weight > 0 && weight <= MAX_WEIGHT)) {
        throw new InvalidRequestError(`keyword weights must be numbers greater than 0 and at most ${MAX_WEIGHT} (got "${weightText}" for "${word}")`);
      }
    }
    return { word, weight };
  });
}

/** The words of an OpenAI-style `prompt` as keywords: distinct words of 3+ letters, in order, within the bounds. */
export function keywordsFromPrompt(prompt: string): Keyword[] {
  const seen = new Set<string>();
  const out: Keyword[] = [];
  for (const match of prompt.matchAll(/[\p{L}\p{N}][\p{L}\p{N}\p{M}'’-]*/gu)) {
    const word = match[0].slice(0, MAX_KEYWORD_LENGTH);
    const key = word.toLowerCase();
    if (word.length < 3 || seen.has(key)) continue;
    seen.add(key);
    out.push({ word, weight: DEFAULT_WEIGHT });
    if (out.length === MAX_KEYWORDS) break;
  }
  return out;
}
