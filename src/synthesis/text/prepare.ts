/**
 * The text side of synthesis, the one entry the use case calls: pronunciation dictionaries →
 * language detection (for "auto") → math operators (when asked) → numbers in their own language
 * (when asked) → normalisation → sentences.
 */
import { InvalidRequestError } from '../../errors.js';
import { baseLanguage } from '../languages.js';
import { detectLanguage } from './detect-language.js';
import { readMathOperators } from './math-notation.js';
import { collapseWhitespace, normalizeText, spellNumbers } from './normalize.js';
import { applyPronunciationDicts, type CompiledPronunciationDict } from './pronunciation.js';
import { splitSentences } from './sentences.js';

export interface PrepareTextOptions {
  /** "auto" or an ISO 639-1 code. */
  language: string;
  /** Languages "auto" may choose from (the voice's and the model's). */
  allowedLanguages: string[];
  /** In the order the request lists them; a later one wins. */
  dicts: readonly CompiledPronunciationDict[];
  /** False for engines that normalise text themselves (eSpeak NG); dictionaries still apply. */
  normalize: boolean;
  /** Longest piece handed to the engine at once. */
  maxSentenceChars?: number;
  /** Longest text after dictionaries and after normalisation; longer is an InvalidRequestError naming the limit. */
  maxChars?: number;
  /** The language numeric content is read in, when not the text's ("auto" or absent: the text's). */
  numberLanguage?: string;
  /** Read digit-flanked operators as words, in the number language. */
  mathNotation?: boolean;
}

export interface PreparedText {
  /** The language used, detected when "auto" was asked. */
  language: string;
  /** Sentences (or clauses of long ones) in order; never empty strings. */
  sentences: string[];
}

function checkLength(text: string, maxChars: number | undefined, after: string): void {
  if (maxChars !== undefined && text.length > maxChars) {
    throw new InvalidRequestError(`text is ${text.length} characters long after ${after}, more than the limit of ${maxChars}`);
  }
}

export function prepareText(text: string, options: PrepareTextOptions): PreparedText {
  const { text: replaced } = applyPronunciationDicts(text, options.dicts);
  // Checked before normalising, so a dictionary cannot make normalisation itself the long part.
  checkLength(replaced, options.maxChars, 'applying pronunciation_dicts');
  // Detection reads the original: respellings and IPA stand-ins are not words of any language.
  const language = options.language === 'auto' ? detectLanguage(text, options.allowedLanguages) : baseLanguage(options.language);
  const numberLanguage = options.numberLanguage === undefined || options.numberLanguage === 'auto' ? language : baseLanguage(options.numberLanguage);
  let spoken = options.mathNotation ? readMathOperators(replaced, numberLanguage) : replaced;
  // Numbers in another language are spelled here whatever the engine: its own reader would use the text's.
  if (numberLanguage !== language) spoken = spellNumbers(spoken, numberLanguage);
  const normalized = options.normalize ? normalizeText(spoken, language) : collapseWhitespace(spoken);
  checkLength(normalized, options.maxChars, 'normalisation (numbers, dates and symbols spelt out)');
  return { language, sentences: splitSentences(normalized, language, options.maxSentenceChars) };
}
