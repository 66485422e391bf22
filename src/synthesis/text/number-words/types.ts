/**
 * Spelling out numbers in one language. Integers only: callers split decimals, signs and
 * separators off first (see ../number-token.ts). Values must be safe integers ≥ 0.
 */
export type Gender = 'masculine' | 'feminine';

export interface NumberWords {
  /** "21" → "twenty-one". `gender` matters where the word for 1 agrees (fr une, es una, de eine). */
  cardinal(n: number, gender?: Gender): string;
  /** 1 → "first". `gender` as for cardinal; German callers add the case ending themselves. */
  ordinal(n: number, gender?: Gender): string;
  /** A number read as a calendar year (en 1999 → "nineteen ninety-nine"). */
  year(n: number): string;
}

/** Largest value spelled out; longer digit strings are read digit by digit. */
export const MAX_SPELLED = 999_999_999_999_999;
