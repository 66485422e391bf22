/**
 * The text options of a transcription (`numerals`, `redact_pci`, `redact_pii`, `format`) applied
 * to timed words, in that order: spoken numbers become digits (always, when redacting, so that
 * spoken digits are found; the digits are only kept when `numerals` is set), found entities become
 * numbered placeholders, and the result is put in sentence case with end punctuation.
 *
 * Times are kept: a number or placeholder over several words starts at the first one's start and
 * ends at the last one's end. A placeholder's number is stable for the same value within one
 * call: the same card number said twice is [CREDITCARDNUMBER_1] both times. Nothing here keeps
 * the unredacted words after it returns.
 */
import { inverseNumberWordsFor, type NormalisedToken } from '../../text/inverse-number-words/index.js';
import type { Punctuator } from '../../engines/types.js';
import { AbortedError } from '../../errors.js';
import { formatWords, punctuateWords } from './format.js';
import { findEntities, type EntitySpan } from './redact.js';

export interface TextOptions {
  /** ISO 639-1 code of the words; numbers are rewritten only in languages with an inverse normaliser. */
  language: string;
  numerals: boolean;
  format: boolean;
  redactPci: boolean;
  redactPii: boolean;
  /** A pause this long ends a sentence for `format`. */
  pauseSeconds: number;
  /** Live partials: when redacting, any digit run this long is redacted too (it may be an unfinished card number). */
  redactDigitRunsFrom?: number;
}

/**
 * The text options as a request gives them; unset means off. `numerals: 'auto'` (the API's
 * default) means digits wherever the language has an inverse normaliser, words elsewhere.
 */
export type RequestedTextOptions = Partial<Pick<TextOptions, 'format' | 'redactPci' | 'redactPii'>> & { numerals?: boolean | 'auto' };

export interface TimedText {
  word: string;
  start: number;
  end: number;
  confidence?: number | null;
}

export interface TextOptionsOutcome<T> {
  words: T[];
  /** The placeholders put in, in order of first appearance; set when redacting. */
  redactedEntities?: string[];
  /** false when PII redaction was asked for: names need a named-entity pack, and none is installed. */
  namesRedacted?: false;
}

/** Whether numbers in `language` become digits: `auto` turns them into digits where the language has an inverse normaliser. */
export function numeralsFor(requested: boolean | 'auto' | undefined, language: string): boolean {
  return requested === 'auto' ? inverseNumberWordsFor(language) !== undefined : Boolean(requested);
}

export function wantsTextOptions(options: RequestedTextOptions, language: string): boolean {
  return Boolean(numeralsFor(options.numerals, language) || options.format || options.redactPci || options.redactPii);
}

/** The text options of a request for words in `language`, or undefined when none is set. */
export function textOptionsFor(requested: RequestedTextOptions | undefined, language: string, pauseSeconds: number): TextOptions | undefined {
  if (!requested || !wantsTextOptions(requested, language)) return undefined;
  return {
    language,
    pauseSeconds,
    numerals: numeralsFor(requested.numerals, language),
    format: Boolean(requested.format),
    redactPci: Boolean(requested.redactPci),
    redactPii: Boolean(requested.redactPii),
  };
}

/**
 * applyTextOptions, with `format` done by the punctuation model when one is installed for the
 * language (the rules when none is, when its answer cannot be used, when the model fails, or when
 * it takes longer than `waitMs`: the transcript itself is done, and formatting alone must not lose
 * or hold it). A client that left still stops it.
 */
export async function applyTextOptionsWithModels<T extends TimedText>(
  words: readonly T[],
  options: TextOptions,
  models: { punctuator?: Punctuator; signal?: AbortSignal; waitMs?: number },
): Promise<TextOptionsOutcome<T>> {
  const { punctuator, waitMs } = models;
  if (!options.format || !punctuator?.languages.includes(options.language)) return applyTextOptions(words, options);
  const outcome = applyTextOptions(words, { ...options, format: false });
  let punctuated: T[] | undefined;
  const late = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  try {
    const call = punctuateWords(outcome.words, punctuator, models.signal ? AbortSignal.any([models.signal, late.signal]) : late.signal);
    call.catch(() => undefined); // a call left behind by the wait below is stopped, and its error not wanted
    punctuated = await (waitMs === undefined
      ? call
      : Promise.race([
          call,
          new Promise<undefined>((resolve) => {
            timer = setTimeout(() => {
              late.abort();
              resolve(undefined);
            }, waitMs);
          }),
        ]));
  } catch (err) {
    if (err instanceof AbortedError || models.signal?.aborted) throw err;
  } finally {
    clearTimeout(timer);
  }
  outcome.words = punctuated ?? formatWords(outcome.words, options.pauseSeconds);
  return outcome;
}

/** A piece of output: its text and the inclusive range of input words it replaces. */
interface Piece {
  text: string;
  from: number;
  to: number;
}

export function applyTextOptions<T extends TimedText>(words: readonly T[], options: TextOptions): TextOptionsOutcome<T> {
  const redacting = options.redactPci || options.redactPii;
  const outcome: TextOptionsOutcome<T> = { words: [...words] };
  if (redacting) outcome.redactedEntities = [];
  if (options.redactPii) outcome.namesRedacted = false;
  if (words.length === 0) return outcome;

  const normaliser = options.numerals || redacting ? inverseNumberWordsFor(options.language) : undefined;
  const identity = (): NormalisedToken[] => words.map((w, i) => ({ text: w.word, from: i, to: i, numeric: false }));
  const normalised = normaliser ? normaliser.normalise(words.map((w) => w.word)) : identity();
  let pieces: Piece[] = options.numerals ? normalised : identity();

  if (redacting) {
    const spans = findEntities(
      normalised.map((t) => t.text),
      { pci: options.redactPci, pii: options.redactPii, ...(options.redactDigitRunsFrom ? { digitRunsFrom: options.redactDigitRunsFrom } : {}) },
    ).map((s) => ({ ...s, from: normalised[s.from]!.from, to: normalised[s.to]!.to }));
    pieces = replaceSpans(pieces, spans, outcome.redactedEntities!);
  }

  let out = pieces.map((p) => mergedWord(words, p));
  if (options.format) out = formatWords(out, options.pauseSeconds);
  outcome.words = out;
  return outcome;
}

/** Pieces with each span (over input word indices) replaced by its numbered placeholder. */
function replaceSpans(pieces: Piece[], spans: EntitySpan[], placeholders: string[]): Piece[] {
  const numbers = new Map<string, number>();
  const counts = new Map<string, number>();
  const out: Piece[] = [];
  let lastSpan: EntitySpan | undefined;
  let s = 0;
  for (const piece of pieces) {
    while (s < spans.length && spans[s]!.to < piece.from) s++;
    const span = spans[s];
    if (!span || span.from > piece.to) {
      out.push(piece);
      continue;
    }
    // Pieces of one span become one placeholder covering them all.
    if (span === lastSpan) {
      const last = out.at(-1)!;
      last.to = Math.max(last.to, piece.to);
      last.text = last.text.replace(/[.,!?;:]*$/, trailingMarks(piece.text)); // the marks after the span's last word
      continue;
    }
    lastSpan = span;
    const key = `${span.type}\u0000${span.value}`;
    let n = numbers.get(key);
    if (n === undefined) {
      n = (counts.get(span.type) ?? 0) + 1;
      counts.set(span.type, n);
      numbers.set(key, n);
      placeholders.push(`[${span.type}_${n}]`);
    }
    out.push({ text: `[${span.type}_${n}]${trailingMarks(piece.text)}`, from: Math.min(piece.from, span.from), to: Math.max(piece.to, span.to) });
  }
  return out;
}

function trailingMarks(text: string): string {
  return /[.,!?;:]+$/.exec(text)?.[0] ?? '';
}

function mergedWord<T extends TimedText>(words: readonly T[], piece: Piece): T {
  const first = words[piece.from]!;
  if (piece.from === piece.to) return first.word === piece.text ? first : { ...first, word: piece.text };
  const merged: T = { ...first, word: piece.text, end: words[piece.to]!.end };
  if ('confidence' in first) {
    const all = words.slice(piece.from, piece.to + 1).map((w) => w.confidence);
    merged.confidence = all.every((c) => typeof c === 'number') ? Math.min(...(all as number[])) : null;
  }
  return merged;
}

type TimedUtterance<T> = { transcript: string; words: T[]; start: number; end: number };
type UtteranceOutcome<T> = { transcript: string; words: T[]; redactedEntities?: string[]; namesRedacted?: false };

/**
 * The options applied to one finished (or partial) utterance of a live session: its transcript
 * and words. Without word times (word_timestamps off) the transcript's words are processed with
 * the utterance's span and only the transcript comes back changed.
 */
export function applyTextOptionsToUtterance<T extends TimedText>(utterance: TimedUtterance<T>, options: TextOptions): UtteranceOutcome<T> {
  return utteranceOutcome(utterance, applyTextOptions(wordsOf(utterance), options));
}

/** applyTextOptionsToUtterance with the models of applyTextOptionsWithModels (a punctuation pack for `format`). */
export async function applyTextOptionsToUtteranceWithModels<T extends TimedText>(
  utterance: TimedUtterance<T>,
  options: TextOptions,
  models: Parameters<typeof applyTextOptionsWithModels>[2],
): Promise<UtteranceOutcome<T>> {
  return utteranceOutcome(utterance, await applyTextOptionsWithModels(wordsOf(utterance), options, models));
}

/** The utterance's timed words, or without them its transcript's words, each with the utterance's span. */
function wordsOf<T extends TimedText>(utterance: TimedUtterance<T>): T[] {
  if (utterance.words.length > 0) return utterance.words;
  return utterance.transcript.split(/\s+/).filter(Boolean).map((word) => ({ word, start: utterance.start, end: utterance.end }) as T);
}

function utteranceOutcome<T extends TimedText>(utterance: TimedUtterance<T>, outcome: TextOptionsOutcome<T>): UtteranceOutcome<T> {
  const { words, ...rest } = outcome;
  return { ...rest, transcript: words.map((w) => w.word).join(' '), words: utterance.words.length > 0 ? words : [] };
}
