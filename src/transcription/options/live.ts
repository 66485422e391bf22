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
 *
 * Inverse text normalisation (`itn`) rewrites spoken numbers as digits on finals only: a partial
 * may end inside a number, and the final replaces it. Removing end marks and lower-casing
 * (`stripPunctuation`, `lowercase`) come last, on every message, so they also undo what the
 * recogniser itself wrote.
 */
import type { Hotword, Punctuator } from '../../engines/types.js';
import type { TranscriptionOptions } from '../types.js';
import { applyTextOptionsToUtterance, applyTextOptionsToUtteranceWithModels, textOptionsFor, type TextOptions, type TimedText } from './apply.js';
import { isPlaceholder } from './format.js';
import { applyKeywordCasing, applyKeywordCasingToText, hotwordsOf, type Keyword } from './keywords.js';

export interface LiveTranscriptionOptions {
  /** The text options, when any is set. */
  text?: TextOptions;
  /** Finals' own text options, when they differ from `text` (inverse text normalisation). */
  finalText?: TextOptions;
  /** Remove the marks . , ? ! that end words. */
  stripPunctuation?: boolean;
  /** Put every word in lower case (placeholders keep theirs). */
  lowercase?: boolean;
  /** The keywords as hotwords for the session's recognition streams, when any were given. */
  hotwords?: Hotword[];
  /** The keywords, whose casing the transcripts take. */
  keywords?: Keyword[];
  /** With keywords: whether the session's recogniser boosts them (sent as keywords_applied). */
  keywordsApplied?: boolean;
}

/** What a live session asks of its transcripts. */
export interface LiveTextRequest extends Pick<TranscriptionOptions, 'keywords' | 'numerals' | 'format' | 'redactPci' | 'redactPii'> {
  /** Spoken numbers as digits on finals (inverse text normalisation). */
  itn?: boolean;
  stripPunctuation?: boolean;
  lowercase?: boolean;
}

export function liveTranscriptionOptions(requested: LiveTextRequest, language: string, pauseSeconds: number): LiveTranscriptionOptions {
  const out: LiveTranscriptionOptions = {};
  if (requested.keywords?.length) {
    out.hotwords = hotwordsOf(requested.keywords);
    out.keywords = requested.keywords;
  }
  // With "multi" the language is only known after recognition: English number rules, the only ones so far.
  const textLanguage = language === 'multi' ? 'en' : language;
  const text = textOptionsFor(requested, textLanguage, pauseSeconds);
  if (text) out.text = text;
  if (requested.itn) out.finalText = textOptionsFor({ ...requested, numerals: true }, textLanguage, pauseSeconds);
  if (requested.stripPunctuation) out.stripPunctuation = true;
  if (requested.lowercase) out.lowercase = true;
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
  const textOptions = message.is_final ? (options.finalText ?? options.text) : options.text;
  if (!textOptions) return liveFields({ transcript: message.transcript, words: message.words }, options);
  const redacting = textOptions.redactPci || textOptions.redactPii;
  const text = redacting && !message.is_final ? { ...textOptions, redactDigitRunsFrom: PARTIAL_DIGITS_SHOWN + 1 } : textOptions;
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
  const text = options.finalText ?? options.text;
  if (!message.is_final || !text?.format || !models.punctuator) return applyToLiveTranscript(message, options);
  return liveFields(await applyTextOptionsToUtteranceWithModels(message, text, models), options);
}

function keywordsField(options: LiveTranscriptionOptions): { keywords_applied?: boolean } {
  return options.keywordsApplied === undefined ? {} : { keywords_applied: options.keywordsApplied };
}

/** A word with its end marks removed and/or in lower case, as asked; '' when nothing is left of it. */
function restyled(word: string, options: LiveTranscriptionOptions): string {
  if (isPlaceholder(word)) return options.stripPunctuation ? word.replace(/[.,?!]+$/, '') : word;
  let out = options.stripPunctuation ? word.replace(/[.,?!]+$/, '') : word;
  if (options.lowercase) out = out.toLowerCase();
  return out;
}

/** The message's fields, restyled as asked, the keywords' own casing put on its words last. */
function liveFields<W extends TimedText>(applied: { transcript: string; words: W[]; redactedEntities?: string[] }, options: LiveTranscriptionOptions): LiveFields<W> {
  const restyling = options.stripPunctuation || options.lowercase;
  const transcript = restyling ? applied.transcript.split(/\s+/).map((w) => restyled(w, options)).filter(Boolean).join(' ') : applied.transcript;
  const words = restyling ? applied.words.map((w) => ({ ...w, word: restyled(w.word, options) })).filter((w) => w.word) : applied.words;
  return {
    transcript: applyKeywordCasingToText(transcript, options.keywords),
    words: applyKeywordCasing(words, options.keywords),
    ...(applied.redactedEntities ? { redacted_entities: applied.redactedEntities } : {}),
    ...keywordsField(options),
  };
}
