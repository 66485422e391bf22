/** The inverse normaliser of each language that has one (one module per language). */
import { englishInverseNumbers } from './en.js';
import type { InverseNumberWords } from './types.js';

export type { InverseNumberWords, NormalisedToken } from './types.js';

const BY_LANGUAGE: Record<string, InverseNumberWords> = { en: englishInverseNumbers };

/** The normaliser for an ISO 639-1 code, or undefined when the language has none yet. */
export function inverseNumberWordsFor(language: string): InverseNumberWords | undefined {
  // Own keys only: a language named like what every object inherits has no normaliser.
  return Object.hasOwn(BY_LANGUAGE, language) ? BY_LANGUAGE[language] : undefined;
}
