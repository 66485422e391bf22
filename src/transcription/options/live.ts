/**
 * The transcription options on a live socket. A session is set up once (liveTranscriptionOptions)
 * and each transcript message, partial or final, goes through applyToLiveTranscript before it is
 * sent: the numbers, placeholders and formatting of that one utterance. Nothing of an utterance
 * is kept after its message is made, so placeholders are numbered per message.
 *
 * `format` on a final uses the punctuation pack as batch transcription does (numerals, then
 * redaction, then the model's marks; the rules when no pack fits, when its answer does not map
 * back, when it fails, or when it takes longer than the wait given). Partials keep the rules: they
 * come several times a second, a model call each would compete with recognition for the same
 * worker threads and hold partials back, and the final replaces them anyway.
 */
import type { Hotword, Punctuator } from '../../engines/types.js';
import type { TranscriptionOptions } from '../types.js';
import { applyTextOptionsToUtterance, applyTextOptionsToUtteranceWithModels, textOptionsFor, type TextOptions, type TimedText } from './apply.js';
import { applyKeywordCasing, applyKeywordCasingToText, hotwordsOf, type Keyword } from './keywords.js';

export interface LiveTranscriptionOptions {
  /** The text options, when any is set. */
  text?: TextOptions;
  /** The keywords as hotwords for the session's recognition streams, when any were given. */
  hotwords?: Hotword[];
  /** The keywords, whose casing the transcripts take. */
  keywords?: Keyword[];
  /** With keywords: whether the session's recogniser boosts them (sent as keywords_applied). */
  keywordsApplied?: boolean;
}

export function liveTranscriptionOptions(
  requested: Pick<TranscriptionOptions, 'keywords' | 'numerals' | 'format' | 'redactPci' | 'redactPii'>,
  language: string,
  pauseSeconds: number,
): LiveTranscriptionOptions {
  const out: LiveTranscriptionOptions = {};
  if (requested.keywords?.length) {
    out.hotwords = hotwordsOf(requested.keywords);
    out.keywords = requested.keywords;
  }
  // With "multi" the language is only known after recognition: English number rules, the only ones so far.
  const text = textOptionsFor(requested, language === 'multi' ? 'en' : language, pauseSeconds);
  if (text) out.text = text;
  return out;
}

/** Digits a partial may show when redacting: fewer cannot be the start of a card or account number worth hiding. */
const PARTIAL_DIGITS_SHOWN = 3;

type LiveMessage<W> = { transcript: string; words: W[]; start: number; end: number; is_final: boolean };
type LiveFields<W> = { transcript: string; words: W[]; redacted_entities?: string[]; keywords_applied?: boolean };

/**
 * The fields of a live transcript message after the options: transcript, words, and
 * redacted_entities when redacting. A partial's digit runs of 4 or more are redacted as [NUMBER_n]
 * too: the number may be unfinished, and its final form decides what it is. Formatting is the rules'.
 */
export function applyToLiveTranscript<W extends TimedText>(message: LiveMessage<W>, options: LiveTranscriptionOptions): LiveFields<W> {
  if (!options.text) return liveFields(message, options);
  const redacting = options.text.redactPci || options.text.redactPii;
  const text = redacting && !message.is_final ? { ...options.text, redactDigitRunsFrom: PARTIAL_DIGITS_SHOWN + 1 } : options.text;
  return liveFields(applyTextOptionsToUtterance(message, text), options);
}

/**
 * applyToLiveTranscript, with a final's `format` done by `punctuator` when it covers the language
 * (see the top of this file); waits at most `waitMs` for it. Throws AbortedError once `signal`
 * aborts (the socket went away).
 */
export async function applyToLiveTranscriptWithModels<W extends TimedText>(
  message: LiveMessage<W>,
  options: LiveTranscriptionOptions,
  models: { punctuator?: Punctuator; signal?: AbortSignal; waitMs: number },
): Promise<LiveFields<W>> {
  if (!message.is_final || !options.text?.format || !models.punctuator) return applyToLiveTranscript(message, options);
  return liveFields(await applyTextOptionsToUtteranceWithModels(message, options.text, models), options);
}

function keywordsField(options: LiveTranscriptionOptions): { keywords_applied?: boolean } {
  return options.keywordsApplied === undefined ? {} : { keywords_applied: options.keywordsApplied };
}

/** The message's fields, the keywords' casing put on its words last (after sentence case). */
function liveFields<W extends TimedText>(applied: { transcript: string; words: W[]; redactedEntities?: string[] }, options: LiveTranscriptionOptions): LiveFields<W> {
  return {
    transcript: applyKeywordCasingToText(applied.transcript, options.keywords),
    words: applyKeywordCasing(applied.words, options.keywords),
    ...(applied.redactedEntities ? { redacted_entities: applied.redactedEntities } : {}),
    ...keywordsField(options),
  };
}
