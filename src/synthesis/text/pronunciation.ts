/**
 * Pronunciation dictionaries (decisions.md points 13 and 14): entries replace whole words,
 * case-insensitively, before normalisation; a later dictionary wins over an earlier one.
 */
import { ipaToRespelling } from './ipa-respelling.js';

export interface PronunciationEntry {
  word: string;
  /** A respelling in the dictionary's language, or IPA between slashes (`/təˈmɑːtoʊ/`). */
  pronunciation: string;
}

export interface PronunciationDictionary {
  items: readonly PronunciationEntry[];
}

/** Where an IPA entry was used, in the returned text (before normalisation moves things). */
export interface PhonemeSpan {
  start: number;
  end: number;
  /** The word as it appeared in the input. */
  word: string;
  /** The IPA without its slashes, for an engine that takes phonemes. */
  ipa: string;
}

export interface DictionaryResult {
  text: string;
  phonemeSpans: PhonemeSpan[];
}

const WORD_CHAR = '[\\p{L}\\p{M}\\p{N}_]';

function keyOf(word: string): string {
  return word.normalize('NFC').toLowerCase().replace(/\s+/g, ' ').trim();
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** One entry's pattern; boundaries only where the entry starts or ends with a word character. */
function entryPattern(word: string): string {
  const body = word.split(' ').map(escape).join('\\s+');
  const start = new RegExp(`^${WORD_CHAR}`, 'u').test(word) ? `(?<!${WORD_CHAR})` : '';
  const end = new RegExp(`${WORD_CHAR}$`, 'u').test(word) ? `(?!${WORD_CHAR})` : '';
  return start + body + end;
}

export function applyPronunciationDicts(text: string, dicts: readonly PronunciationDictionary[]): DictionaryResult {
  const input = text.normalize('NFC');
  const entries = new Map<string, string>();
  // Later dictionaries overwrite earlier ones, and a later item overwrites an earlier one.
  for (const dict of dicts) {
    for (const item of dict.items) {
      const key = keyOf(item.word);
      if (key) entries.set(key, item.pronunciation.normalize('NFC').trim());
    }
  }
  if (entries.size === 0) return { text: input, phonemeSpans: [] };

  // Longest first, so that "New York City" wins over "New York".
  const words = [...entries.keys()].sort((a, b) => b.length - a.length);
  const pattern = new RegExp(words.map(entryPattern).join('|'), 'giu');

  let out = '';
  let last = 0;
  const phonemeSpans: PhonemeSpan[] = [];
  for (const m of input.matchAll(pattern)) {
    const pronunciation = entries.get(keyOf(m[0]));
    if (pronunciation === undefined) continue;
    out += input.slice(last, m.index);
    const ipa = /^\/(.+)\/$/su.exec(pronunciation)?.[1];
    const replacement = ipa === undefined ? pronunciation : ipaToRespelling(ipa);
    if (ipa !== undefined) phonemeSpans.push({ start: out.length, end: out.length + replacement.length, word: m[0], ipa });
    out += replacement;
    last = m.index! + m[0].length;
  }
  return { text: out + input.slice(last), phonemeSpans };
}
