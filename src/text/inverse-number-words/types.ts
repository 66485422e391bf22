/**
 * Inverse text normalisation: spoken number words as a recogniser writes them ("twenty three",
 * "nineteen eighty four") turned into digits ("23", "1984"). The opposite direction of
 * src/synthesis/text/number-words/. Works on words, not on a string, so the caller can keep each
 * word's time: every output token says which input words it stands for.
 */

/** One output token: its text, and the inclusive range of input words it replaces. */
export interface NormalisedToken {
  text: string;
  /** Index of the first input word it stands for. */
  from: number;
  /** Index of the last input word it stands for (== from when it is one word unchanged or rewritten). */
  to: number;
  /** True when the token is a number the normaliser wrote (digits, amount, time...). */
  numeric: boolean;
}

export interface InverseNumberWords {
  /**
   * The words with every spoken number rewritten. Words that are not part of a number come back
   * unchanged, one token each; a number over several words is one token.
   */
  normalise(words: readonly string[]): NormalisedToken[];
}
