/**
 * Pronunciation dictionaries: entries replace whole words,
 * case-insensitively, before normalisation; a later dictionary wins over an earlier one.
 *
 * A dictionary is compiled once into a trie of tokens (words, whitespace runs, single other
 * characters) and the text is matched token by token: the cost of a request grows with the length
 * of its text, not with the size of its dictionaries, and no pattern is built per request.
 */
import { ipaToRespelling } from './ipa-respelling.js';

export interface PronunciationEntry {
  word: string;
  /** A respelling in the dictionary's language, or IPA between slashes (`/təˈmɑːtoʊ/`). */
  pronunciation: string;
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

interface Replacement {
  text: string;
  ipa?: string;
}

interface TrieNode {
  next: Map<string, TrieNode>;
  replacement?: Replacement;
}

/** A dictionary ready to apply: build it once per saved version (compilePronunciationDict). */
export interface CompiledPronunciationDict {
  readonly root: TrieNode;
  /** Distinct words it replaces. */
  readonly size: number;
}

/**
 * Words are runs of letters, marks, digits and `_` (the Unicode-aware whole-word rule); every
 * whitespace run is one token, and any other character is a token of its own, so "C++" or "a.b"
 * match as written while "tomato" never matches inside "tomatoes".
 */
const TOKEN = /([\p{L}\p{M}\p{N}_]+)|(\s+)|([^])/gu;
const SPACE = ' ';

interface Token {
  /** Lower-cased word or character; SPACE for any whitespace run. */
  key: string;
  start: number;
  end: number;
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  for (const m of text.matchAll(TOKEN)) {
    const start = m.index!;
    tokens.push({ key: m[2] !== undefined ? SPACE : m[0].toLowerCase(), start, end: start + m[0].length });
  }
  return tokens;
}

function replacementOf(pronunciation: string): Replacement {
  const trimmed = pronunciation.normalize('NFC').trim();
  const ipa = /^\/(.+)\/$/su.exec(trimmed)?.[1];
  return ipa === undefined ? { text: trimmed } : { text: ipaToRespelling(ipa), ipa };
}

/** Builds a compiled dictionary entry by entry; a later entry for the same word (whatever its case or spacing) wins. */
export class PronunciationDictBuilder {
  private readonly root: TrieNode = { next: new Map() };
  private readonly words = new Set<TrieNode>();

  add(item: PronunciationEntry): void {
    const keys = tokenize(item.word.normalize('NFC').trim()).map((t) => t.key);
    if (keys.length === 0) return;
    let node = this.root;
    for (const key of keys) {
      let child = node.next.get(key);
      if (!child) node.next.set(key, (child = { next: new Map() }));
      node = child;
    }
    node.replacement = replacementOf(item.pronunciation);
    this.words.add(node);
  }

  build(): CompiledPronunciationDict {
    return { root: this.root, size: this.words.size };
  }
}

export function compilePronunciationDict(items: readonly PronunciationEntry[]): CompiledPronunciationDict {
  const builder = new PronunciationDictBuilder();
  for (const item of items) builder.add(item);
  return builder.build();
}

/** The longest entry of `dict` that matches the tokens from `from`: [end token index, replacement]. */
function longestMatch(dict: CompiledPronunciationDict, tokens: Token[], from: number): [number, Replacement] | null {
  let node = dict.root;
  let found: [number, Replacement] | null = null;
  for (let i = from; i < tokens.length; i++) {
    const child = node.next.get(tokens[i]!.key);
    if (!child) break;
    node = child;
    if (node.replacement) found = [i + 1, node.replacement];
  }
  return found;
}

/**
 * Replace dictionary words in `text`: at each word, the longest entry of any dictionary wins
 * ("New York City" over "New York"); for the same entry, the later dictionary.
 */
export function applyPronunciationDicts(text: string, dicts: readonly CompiledPronunciationDict[]): DictionaryResult {
  const input = text.normalize('NFC');
  if (dicts.every((d) => d.size === 0)) return { text: input, phonemeSpans: [] };

  const tokens = tokenize(input);
  const phonemeSpans: PhonemeSpan[] = [];
  let out = '';
  let copiedUpTo = 0;
  for (let i = 0; i < tokens.length; ) {
    let best: [number, Replacement] | null = null;
    if (tokens[i]!.key !== SPACE) {
      for (const dict of dicts) {
        const m = longestMatch(dict, tokens, i);
        if (m && (!best || m[0] >= best[0])) best = m;
      }
    }
    if (!best) {
      i++;
      continue;
    }
    const [end, replacement] = best;
    const start = tokens[i]!.start;
    const stop = tokens[end - 1]!.end;
    out += input.slice(copiedUpTo, start);
    if (replacement.ipa !== undefined) {
      phonemeSpans.push({ start: out.length, end: out.length + replacement.text.length, word: input.slice(start, stop), ipa: replacement.ipa });
    }
    out += replacement.text;
    copiedUpTo = stop;
    i = end;
  }
  return { text: out + input.slice(copiedUpTo), phonemeSpans };
}
