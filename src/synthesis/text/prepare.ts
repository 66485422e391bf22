/**
 * The text side of synthesis, the one entry the use case calls:
 * pronunciation dictionaries → language detection (for "auto") → normalisation → sentences.
 */
import { InvalidRequestError } from '../../errors.js';
import { baseLanguage } from '../languages.js';
import { detectLanguage } from './detect-language.js';
import { collapseWhitespace, normalizeText } from './normalize.js';
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
  const normalized = options.normalize ? normalizeText(replaced, language) : collapseWhitespace(replaced);
  checkLength(normalized, options.maxChars, 'normalisation (numbers, dates and symbols spelt out)');
  return { language, sentences: splitSentences(normalized, language, options.maxSentenceChars) };
}
