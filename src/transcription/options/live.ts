/**
 * The transcription options on a live socket. A session is set up once (liveTranscriptionOptions)
 * and each transcript message, partial or final, goes through applyToLiveTranscript before it is
 * sent: the numbers, placeholders and formatting of that one utterance. Nothing of an utterance
 * is kept after its message is made, so placeholders are numbered per message.
 */
import type { Hotword } from '../../engines/types.js';
import type { TranscriptionOptions } from '../types.js';
import { applyTextOptionsToUtterance, textOptionsFor, type TextOptions, type TimedText } from './apply.js';

export interface LiveTranscriptionOptions {
  /** The text options, when any is set. */
  text?: TextOptions;
  /** The keywords as hotwords for the session's recognition streams, when any were given. */
  hotwords?: Hotword[];
  /** With keywords: whether the session's recogniser boosts them (sent as keywords_applied). */
  keywordsApplied?: boolean;
}

export function liveTranscriptionOptions(
  requested: Pick<TranscriptionOptions, 'keywords' | 'numerals' | 'format' | 'redactPci' | 'redactPii'>,
  language: string,
  pauseSeconds: number,
): LiveTranscriptionOptions {
  const out: LiveTranscriptionOptions = {};
  if (requested.keywords?.length) out.hotwords = requested.keywords.map((k) => ({ phrase: k.word, score: k.weight }));
  // With "multi" the language is only known after recognition: English number rules, the only ones so far.
  const text = textOptionsFor(requested, language === 'multi' ? 'en' : language, pauseSeconds);
  if (text) out.text = text;
  return out;
}

/** Digits a partial may show when redacting: fewer cannot be the start of a card or account number worth hiding. */
const PARTIAL_DIGITS_SHOWN = 3;

/**
 * The fields of a live transcript message after the options: transcript, words, and
 * redacted_entities when redacting. A partial's digit runs of 4 or more are redacted as [NUMBER_n]
 * too: the number may be unfinished, and its final form decides what it is.
 */
export function applyToLiveTranscript<W extends TimedText>(
  message: { transcript: string; words: W[]; start: number; end: number; is_final: boolean },
  options: LiveTranscriptionOptions,
): { transcript: string; words: W[]; redacted_entities?: string[]; keywords_applied?: boolean } {
  const keywords = options.keywordsApplied === undefined ? {} : { keywords_applied: options.keywordsApplied };
  if (!options.text) return { transcript: message.transcript, words: message.words, ...keywords };
  const redacting = options.text.redactPci || options.text.redactPii;
  const text = redacting && !message.is_final ? { ...options.text, redactDigitRunsFrom: PARTIAL_DIGITS_SHOWN + 1 } : options.text;
  const applied = applyTextOptionsToUtterance(message, text);
  return { transcript: applied.transcript, words: applied.words, ...(applied.redactedEntities ? { redacted_entities: applied.redactedEntities } : {}), ...keywords };
}
