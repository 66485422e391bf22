/**
 * The text side of synthesis, the one entry the use case calls:
 * pronunciation dictionaries → language detection (for "auto") → normalisation → sentences.
 */
import { baseLanguage } from '../languages.js';
import { detectLanguage } from './detect-language.js';
import { collapseWhitespace, normalizeText } from './normalize.js';
import { applyPronunciationDicts, type PronunciationDictionary } from './pronunciation.js';
import { splitSentences } from './sentences.js';

export interface PrepareTextOptions {
  /** "auto" or an ISO 639-1 code. */
  language: string;
  /** Languages "auto" may choose from (the voice's and the model's). */
  allowedLanguages: string[];
  /** In the order the request lists them; a later one wins. */
  dicts: readonly PronunciationDictionary[];
  /** False for engines that normalise text themselves (eSpeak NG); dictionaries still apply. */
  normalize: boolean;
  /** Longest piece handed to the engine at once. */
  maxSentenceChars?: number;
}

export interface PreparedText {
  /** The language used, detected when "auto" was asked. */
  language: string;
  /** Sentences (or clauses of long ones) in order; never empty strings. */
  sentences: string[];
}

export function prepareText(text: string, options: PrepareTextOptions): PreparedText {
  const { text: replaced } = applyPronunciationDicts(text, options.dicts);
  // Detection reads the original: respellings and IPA stand-ins are not words of any language.
  const language = options.language === 'auto' ? detectLanguage(text, options.allowedLanguages) : baseLanguage(options.language);
  const normalized = options.normalize ? normalizeText(replaced, language) : collapseWhitespace(replaced);
  return { language, sentences: splitSentences(normalized, language, options.maxSentenceChars) };
}
