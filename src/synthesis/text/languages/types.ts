import type { NumberWords } from '../number-words/types.js';

export type CurrencyCode = 'USD' | 'EUR' | 'GBP' | 'INR' | 'JPY';

/** An amount of money as written, already split by the normaliser. */
export interface MoneyAmount {
  /** Whole units. */
  units: number;
  /** Hundredths ("$3.50" → 50), when the amount has one or two decimals. */
  cents?: number;
  /** The amount spelled as a decimal, when it does not fit units + cents ("2.5 million", "0.125"). */
  spelled?: string;
  /** A scale word written after the number ("million"), already in this language. */
  scale?: string;
}

export type Meridiem = 'am' | 'pm';

/** An abbreviation and what it is read as. */
export interface Abbreviation {
  pattern: RegExp;
  expansion: string;
  /** It may end a sentence ("etc."): keep the full stop when a capital or the end of text follows. */
  canEndSentence?: boolean;
}

/**
 * Everything the normaliser needs to know about one language. The passes themselves (what is
 * a date, a time, a number) live in ../normalize.ts; these objects only say how to read them.
 */
export interface LanguageRules {
  code: string;
  numbers: NumberWords;
  /** The character that starts decimals; the other of "." and "," groups thousands. */
  decimalSeparator: '.' | ',';
  /** Thousands may also be grouped with spaces (fr "20 000"). */
  spaceGroups: boolean;
  /** Lakh grouping ("1,00,000") is accepted too. */
  indianGrouping: boolean;
  minus: string;
  percent: string;
  and: string;
  /** "3.14": how the part after the separator is read, given the integer part in words. */
  decimal(integerWords: string, fractionDigits: string): string;
  currency(code: CurrencyCode, amount: MoneyAmount): string;
  /** Scale words that may follow an amount of money, lower case ("million", "millions"). */
  scaleWords: string[];
  time(hours: number, minutes: number, seconds: number | undefined, meridiem: Meridiem | undefined): string;
  /** A numeric date. `before` is the word preceding it (German picks the ordinal's case from it). */
  date(year: number, month: number, day: number, before: string): string;
  /** Slashed dates are read day first (15/03/2024), except in English (03/15/2024). */
  dayFirst: boolean;
  /** Month names, January first, as written in running text. */
  months: string[];
  abbreviations: Abbreviation[];
  /** Read "9 am" and "9:05 p.m." (English). */
  meridiem: boolean;
  /** Read "10h30" and "10 h" as times (French). */
  hourMarkTimes: boolean;
  /**
   * Notations only this language has (ordinals 21st/1er/1.º, German "am 2. Juni", English
   * month-name dates), applied after dates, times and money and before plain numbers.
   */
  specialForms(text: string): string;
}
