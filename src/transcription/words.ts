/**
 * Tokens of one recognised segment → timed words.
 *
 * A word starts at a token that begins with "▁" (SentencePiece BPE) or a space (Whisper-style
 * byte-level tokens, and sherpa's streaming results, which turn ▁ into a space); other tokens
 * continue the current word, so "▁FE LL OW" and " FE LL OW" both give FELLOW and a trailing "," sticks
 * to its word. Han and kana characters are words of their own, as CJK text has no spaces.
 *
 * Times: a word starts at its first token's time; it ends at the next word's start, at the end of
 * its last token when the model gives durations (NeMo TDT), and never later than its last token's
 * time + `maxTokenSeconds` (a token time marks where the model emitted it, and nothing says how
 * long the sound lasts). Words are clamped to the segment, so they stay ordered, non-overlapping
 * and inside the audio.
 *
 * A model without token times (Whisper, Moonshine in sherpa-onnx) gets estimated times instead:
 * the segment is shared among its words in proportion to their length in characters. That is the
 * only place times are spread, and it is an estimate.
 */
import type { RecognizedSegment, TimeSpan } from '../engines/types.js';

export interface TimedWord {
  word: string;
  start: number;
  end: number;
  /** wordConfidences()'s value; unset (or null) when the recogniser gave no per-token probabilities. */
  confidence?: number | null;
}

export interface WordAssemblyOptions {
  /** Longest a word may last past its last token's time when nothing else bounds it; default 0.6 s. */
  maxTokenSeconds?: number;
}

/** Whisper/SenseVoice control tokens such as <|en|>, <|HAPPY|>, <|notimestamps|>. */
const SPECIAL_TOKEN = /^<\|.*\|>$/;
const WORD_MARKER = /^[▁\s]/;
const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]/;

interface TokenGroup {
  text: string;
  first: number;
  last: number;
}

function groupTokens(tokens: string[]): TokenGroup[] {
  const groups: TokenGroup[] = [];
  let current: TokenGroup | undefined;
  let previousWasCjk = false;
  tokens.forEach((token, index) => {
    if (SPECIAL_TOKEN.test(token.trim())) return;
    const text = token.replace(/▁/g, ' ');
    const body = text.trim();
    const isCjk = CJK.test(body.charAt(0));
    const opens = !current || WORD_MARKER.test(token) || isCjk || previousWasCjk;
    previousWasCjk = isCjk;
    if (opens) {
      if (current && current.text) groups.push(current);
      current = { text: body, first: index, last: index };
    } else {
      current!.text += body;
      current!.last = index;
    }
  });
  if (current && current.text) groups.push(current);
  return groups;
}

/**
 * Words of `segment`, placed in `span` (the segment's position in the audio, seconds). Token times
 * in `segment` are relative to the segment start.
 */
export function assembleWords(segment: RecognizedSegment, span: TimeSpan, options: WordAssemblyOptions = {}): TimedWord[] {
  const maxTokenSeconds = options.maxTokenSeconds ?? 0.6;
  const groups = groupTokens(segment.tokens);
  const textWords = segment.text.split(/\s+/).filter(Boolean);
  // The decoded text is the better spelling (whole UTF-8 characters, inverse text normalisation);
  // use it whenever it has exactly one word per token group.
  const spellings = textWords.length === groups.length ? textWords : groups.map((g) => g.text);
  if (groups.length === 0) {
    return textWords.length > 0 ? spreadByLength(textWords, span) : [];
  }
  const confidences = wordConfidences(segment);
  const withConfidence = (words: TimedWord[]): TimedWord[] =>
    words.map((w, i) => {
      const confidence = confidences[i];
      return typeof confidence === 'number' ? { ...w, confidence } : w;
    });
  const times = segment.timestamps;
  if (times.length !== segment.tokens.length) return withConfidence(spreadByLength(spellings, span));

  const words: TimedWord[] = [];
  const starts = groups.map((g) => clamp(span.start + times[g.first]!, span.start, span.end));
  for (let i = 0; i < groups.length; i++) {
    const group = groups[i]!;
    const previousEnd = words.length > 0 ? words[words.length - 1]!.end : span.start;
    const start = Math.max(starts[i]!, previousEnd);
    const lastTokenStart = span.start + times[group.last]!;
    const tokenEnd =
      segment.durations.length === segment.tokens.length
        ? lastTokenStart + segment.durations[group.last]!
        : lastTokenStart + maxTokenSeconds;
    const nextStart = i + 1 < groups.length ? Math.max(starts[i + 1]!, start) : span.end;
    const end = Math.max(start, Math.min(tokenEnd, nextStart, span.end));
    words.push({ word: spellings[i]!, start, end });
  }
  return withConfidence(words);
}

/**
 * A confidence in [0, 1] for each word assembleWords() gives `segment`, in the same order: the
 * geometric mean of its tokens' probabilities, exp(mean of their log-probabilities), so a word's
 * confidence does not fall just because it is spelt with more tokens. Null for every word when the
 * model gives no per-token probabilities (Whisper, SenseVoice, CTC models).
 */
export function wordConfidences(segment: RecognizedSegment): (number | null)[] {
  const groups = groupTokens(segment.tokens);
  const logProbs = segment.tokenLogProbs;
  if (!logProbs || logProbs.length !== segment.tokens.length) return groups.map(() => null);
  return groups.map((g) => {
    let sum = 0;
    for (let i = g.first; i <= g.last; i++) sum += logProbs[i]!;
    const p = Math.exp(sum / (g.last - g.first + 1));
    return Number.isFinite(p) ? Math.round(Math.min(1, Math.max(0, p)) * 1000) / 1000 : null;
  });
}

/** Estimated times for a model without token times: the span shared by word length. */
function spreadByLength(words: string[], span: TimeSpan): TimedWord[] {
  const weights = words.map((w) => Array.from(w).length + 1);
  const total = weights.reduce((a, b) => a + b, 0);
  const length = Math.max(0, span.end - span.start);
  const out: TimedWord[] = [];
  let at = span.start;
  words.forEach((word, i) => {
    const end = i === words.length - 1 ? span.end : at + (length * weights[i]!) / total;
    out.push({ word, start: at, end });
    at = end;
  });
  return out;
}

function clamp(value: number, low: number, high: number): number {
  return Math.min(high, Math.max(low, value));
}

/** Words (or texts) joined with spaces, except between two CJK characters, which are written together. */
export function joinWords(parts: string[]): string {
  let out = '';
  for (const raw of parts) {
    const part = raw.trim();
    if (!part) continue;
    const together = out !== '' && CJK.test(out.charAt(out.length - 1)) && CJK.test(part.charAt(0));
    out += out === '' || together ? part : ` ${part}`;
  }
  return out;
}
