/**
 * Finding and reading written numbers ("1,234.5", "1.234,5", "20 000", "1,00,000") in the
 * conventions of one language.
 */
import type { LanguageRules } from './languages/types.js';
import { MAX_SPELLED } from './number-words/types.js';

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Regex source matching one unsigned written number (no capture groups). */
export function numberPattern(rules: LanguageRules): string {
  const group = rules.decimalSeparator === '.' ? ',' : '.';
  const groupChars = rules.spaceGroups ? `[${escape(group)} \\u00a0\\u202f]` : escape(group);
  const alternatives = [`\\d{1,3}(?:${groupChars}\\d{3})+(?!\\d)`];
  if (rules.indianGrouping) alternatives.push(`\\d{1,2}(?:${groupChars}\\d{2})+${groupChars}\\d{3}(?!\\d)`);
  // Decimal-comma languages still meet "3.5" typed the English way.
  alternatives.push(rules.decimalSeparator === ',' ? '\\d+(?:\\.\\d+)?' : '\\d+');
  return `(?:${alternatives.join('|')})(?:${escape(rules.decimalSeparator)}\\d+)?`;
}

export interface ParsedNumber {
  /** Digits of the integer part, separators removed. */
  integer: string;
  /** Digits after the decimal separator; empty when none. */
  fraction: string;
}

export function parseNumber(raw: string, rules: LanguageRules): ParsedNumber {
  const sep = rules.decimalSeparator;
  let integer = raw;
  let fraction = '';
  const at = raw.lastIndexOf(sep);
  if (at >= 0) {
    integer = raw.slice(0, at);
    fraction = raw.slice(at + 1);
  } else if (sep === ',' && raw.includes('.') && !/^\d{1,3}(?:\.\d{3})+$/.test(raw)) {
    [integer, fraction] = raw.split('.') as [string, string];
  }
  return { integer: integer.replace(/\D/g, ''), fraction };
}

export function readDigits(digits: string, rules: LanguageRules): string {
  return [...digits].map((d) => rules.numbers.cardinal(Number(d))).join(' ');
}

/** The integer part in words; codes ("007") and numbers too long to say are read digit by digit. */
export function readInteger(integer: string, rules: LanguageRules, options: { asYear?: boolean } = {}): string {
  const value = Number(integer);
  if ((integer.length > 1 && integer.startsWith('0')) || value > MAX_SPELLED) return readDigits(integer, rules);
  if (options.asYear && isYearLike(integer)) return rules.numbers.year(value);
  return rules.numbers.cardinal(value);
}

/**
 * A bare four-digit number from 1100 to 2099 is read as a year ("in 1999"). Counts of that size
 * written without a separator are rarer than years, and "fifteen hundred apples" is still right.
 */
export function isYearLike(integer: string): boolean {
  const value = Number(integer);
  return /^\d{4}$/.test(integer) && value >= 1100 && value <= 2099;
}

/** A whole written number (sign, separators, decimals) in words. */
export function readNumber(raw: string, rules: LanguageRules, options: { negative?: boolean; asYear?: boolean } = {}): string {
  const { integer, fraction } = parseNumber(raw, rules);
  const plain = !fraction && !options.negative && raw === integer;
  let words = readInteger(integer, rules, { asYear: options.asYear && plain });
  if (fraction) words = rules.decimal(words, fraction);
  return options.negative ? `${rules.minus} ${words}` : words;
}
