/**
 * Text normalisation for neural voices: numbers, money, percentages, times, dates, years and
 * abbreviations spelled out as words, so that a model trained on plain prose can read them.
 *
 * Covered languages: en, hi, es, fr, de (./languages/*). Any other language only has its
 * whitespace collapsed: the voices we serve in those languages run on eSpeak NG, which has its
 * own normaliser for every language it speaks (engines declare this with `normalizesText`).
 */
import { baseLanguage } from '../languages.js';
import { german } from './languages/de.js';
import { english } from './languages/en.js';
import { spanish } from './languages/es.js';
import { french } from './languages/fr.js';
import { hindi } from './languages/hi.js';
import type { CurrencyCode, LanguageRules, MoneyAmount } from './languages/types.js';
import { numberPattern, parseNumber, readDigits, readNumber } from './number-token.js';
import { MAX_SPELLED } from './number-words/types.js';

const RULES: Record<string, LanguageRules> = { en: english, hi: hindi, es: spanish, fr: french, de: german };

/** Languages whose numbers, dates and abbreviations normalizeText() spells out. */
export const NORMALIZED_LANGUAGES: readonly string[] = Object.freeze(Object.keys(RULES));

export function collapseWhitespace(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

export function normalizeText(text: string, language: string): string {
  const clean = collapseWhitespace(text.normalize('NFC'));
  const rules = RULES[baseLanguage(language)];
  if (!rules) return clean;
  const out = spellNumbersWith(expandAbbreviations(toAsciiDigits(clean), rules), rules);
  return collapseWhitespace(out.replace(/\s*&\s*/g, ` ${rules.and} `)).normalize('NFC');
}

/**
 * Only the numeric content (dates, times, amounts, percentages, numbers) spelled out in
 * `language`, the words around it left as they are: for numbers read in another language than the
 * text's. Text in a language without rules comes back unchanged.
 */
export function spellNumbers(text: string, language: string): string {
  const rules = RULES[baseLanguage(language)];
  if (!rules) return text;
  return collapseWhitespace(spellNumbersWith(toAsciiDigits(text.normalize('NFC')), rules)).normalize('NFC');
}

function spellNumbersWith(text: string, rules: LanguageRules): string {
  let out = expandDates(text, rules);
  out = expandTimes(out, rules);
  out = expandMoney(out, rules);
  out = expandPercentages(out, rules);
  out = rules.specialForms(out);
  return expandNumbers(out, rules);
}

/** Devanagari digits (१२३) are read like ASCII ones. */
function toAsciiDigits(text: string): string {
  return text.replace(/[\u0966-\u096F]/g, (d) => String(d.charCodeAt(0) - 0x0966));
}

/**
 * Replace every match by the words `read` returns (or keep it when `read` returns undefined),
 * adding a space where the words would otherwise touch a letter or digit ("mp3" → "mp three").
 */
function replaceWords(
  text: string,
  pattern: RegExp,
  read: (match: RegExpExecArray, before: string, after: string) => string | undefined,
): string {
  let out = '';
  let last = 0;
  for (const m of text.matchAll(pattern)) {
    const start = m.index!;
    const end = start + m[0].length;
    const words = read(m as RegExpExecArray, text.slice(0, start), text.slice(end));
    if (words === undefined) continue;
    const padLeft = start > 0 && /[\p{L}\p{N}]/u.test(text[start - 1]!) ? ' ' : '';
    const padRight = end < text.length && /[\p{L}\p{N}]/u.test(text[end]!) ? ' ' : '';
    out += text.slice(last, start) + padLeft + words + padRight;
    last = end;
  }
  return out + text.slice(last);
}

function lastWord(before: string): string {
  return /(\p{L}+)\s*$/u.exec(before)?.[1] ?? '';
}

function expandAbbreviations(text: string, rules: LanguageRules): string {
  for (const abbreviation of rules.abbreviations) {
    text = text.replace(abbreviation.pattern, (match: string, ...args: unknown[]) => {
      // replace() passes (..., offset, whole[, namedGroups]).
      const tail = typeof args[args.length - 1] === 'object' ? args.slice(0, -1) : args;
      const whole = tail[tail.length - 1] as string;
      const offset = tail[tail.length - 2] as number;
      const after = whole.slice(offset + match.length);
      const endsSentence = abbreviation.canEndSentence && match.endsWith('.') && /^\s*(?:$|\p{Lu})/u.test(after);
      return abbreviation.expansion + (endsSentence ? '.' : '');
    });
  }
  return text;
}

function validDate(year: number, month: number, day: number): boolean {
  return month >= 1 && month <= 12 && day >= 1 && day <= 31 && year >= 1 && year <= 9999;
}

function expandDates(text: string, rules: LanguageRules): string {
  // ISO 8601: 2024-03-15.
  text = replaceWords(text, /(?<![\d.,/-])(\d{4})-(\d{1,2})-(\d{1,2})(?![\d/-])/g, (m, before) => {
    const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
    return validDate(y, mo, d) ? rules.date(y, mo, d, lastWord(before)) : undefined;
  });
  // 15/03/2024, 03/15/2024 (English, month first unless that cannot be), 15.03.2024.
  return replaceWords(text, /(?<![\d.,/])(\d{1,2})([/.])(\d{1,2})\2(\d{4})(?![\d/]|[.,]\d)/g, (m, before) => {
    const [a, b, y] = [Number(m[1]), Number(m[3]), Number(m[4])];
    const dayFirst = rules.dayFirst || m[2] === '.' || a > 12;
    const [d, mo] = dayFirst ? [a, b] : [b, a];
    return validDate(y, mo, d) ? rules.date(y, mo, d, lastWord(before)) : undefined;
  });
}

function expandTimes(text: string, rules: LanguageRules): string {
  const meridiem = rules.meridiem ? '(?:\\s?([AaPp])\\.?\\s?[Mm](?![\\p{L}\\d])(\\.)?)?' : '()()';
  // 10:30, 9:05 am, 23:59:30; "3:2" (a score) has one-digit minutes and is left alone.
  text = replaceWords(
    text,
    new RegExp(`(?<![\\d.,:])([01]?\\d|2[0-3]):([0-5]\\d)(?::([0-5]\\d))?${meridiem}(?![\\d:])`, 'gu'),
    (m, _before, after) => {
      const half = m[4] ? (m[4].toLowerCase() === 'a' ? 'am' : 'pm') : undefined;
      const seconds = m[3] === undefined ? undefined : Number(m[3]);
      return rules.time(Number(m[1]), Number(m[2]), seconds, half) + sentenceStop(m[5], after);
    },
  );
  if (rules.meridiem) {
    // "9 am", "11 p.m."
    text = replaceWords(text, /(?<![\d.,:])(1[0-2]|0?[1-9])\s?([AaPp])\.?\s?[Mm](?![\p{L}\d])(\.)?/gu, (m, _before, after) =>
      rules.time(Number(m[1]), 0, undefined, m[2]!.toLowerCase() === 'a' ? 'am' : 'pm') + sentenceStop(m[3], after),
    );
  }
  if (rules.hourMarkTimes) {
    // French "10h30", "10 h 30", "10h".
    text = replaceWords(text, /(?<![\d.,:])([01]?\d|2[0-3])\s?h\s?([0-5]\d)?(?![\p{L}\d])/gu, (m) =>
      rules.time(Number(m[1]), m[2] ? Number(m[2]) : 0, undefined, undefined),
    );
  }
  return text;
}

/** A full stop eaten with "p.m." is given back when it also ended the sentence. */
function sentenceStop(stop: string | undefined, after: string): string {
  return stop && /^\s*(?:$|\p{Lu})/u.test(after) ? '.' : '';
}

const SYMBOLS: Record<string, CurrencyCode> = { $: 'USD', US$: 'USD', '€': 'EUR', '£': 'GBP', '₹': 'INR', '¥': 'JPY' };
const CODES = ['USD', 'EUR', 'GBP', 'INR', 'JPY'] as const;

function moneyAmount(raw: string, scale: string | undefined, rules: LanguageRules): MoneyAmount {
  const { integer, fraction } = parseNumber(raw, rules);
  const units = Number(integer);
  const spelledDecimal = () => rules.decimal(rules.numbers.cardinal(units), fraction);
  if (units > MAX_SPELLED) return { units: 0, spelled: readDigits(integer, rules), scale };
  if (scale) return { units, spelled: fraction ? spelledDecimal() : undefined, scale: scale.toLowerCase() };
  if (fraction.length > 2) return { units, spelled: spelledDecimal() };
  return { units, cents: fraction ? Number(fraction.padEnd(2, '0')) : undefined };
}

function expandMoney(text: string, rules: LanguageRules): string {
  const num = `(${numberPattern(rules)})`;
  const scale = `(?:\\s+(${rules.scaleWords.map((w) => w.normalize('NFC')).join('|')})(?![\\p{L}]))?`;
  const symbol = '(US\\$|[$€£₹¥])';
  const code = `(${CODES.join('|')})`;
  const read = (c: CurrencyCode, raw: string, sc: string | undefined) => rules.currency(c, moneyAmount(raw, sc, rules));
  // $3.50, € 20, $2.5 million
  text = replaceWords(text, new RegExp(`${symbol}\\s?${num}${scale}(?![\\d])`, 'giu'), (m) => read(SYMBOLS[m[1]!.toUpperCase()]!, m[2]!, m[3]));
  // USD 5
  text = replaceWords(text, new RegExp(`\\b${code}\\s?${num}${scale}(?![\\d])`, 'gu'), (m) => read(m[1] as CurrencyCode, m[2]!, m[3]));
  // 3,50 €, 20€, 5 USD
  return replaceWords(text, new RegExp(`(?<![\\d.,])${num}${scale}\\s?(?:${symbol}|${code}(?!\\p{L}))`, 'gu'), (m) =>
    read(m[3] ? SYMBOLS[m[3].toUpperCase()]! : (m[4] as CurrencyCode), m[1]!, m[2]),
  );
}

const SIGN = '(?:(?<=^|[\\s(\\[{"\'“«])([-−]))?';

function expandPercentages(text: string, rules: LanguageRules): string {
  return replaceWords(text, new RegExp(`${SIGN}(?<![\\d.,])(${numberPattern(rules)})\\s?%`, 'gu'), (m) =>
    `${readNumber(m[2]!, rules, { negative: Boolean(m[1]) })} ${rules.percent}`,
  );
}

function expandNumbers(text: string, rules: LanguageRules): string {
  text = replaceWords(text, new RegExp(`${SIGN}(?<![\\d.,])(${numberPattern(rules)})`, 'gu'), (m) =>
    readNumber(m[2]!, rules, { negative: Boolean(m[1]), asYear: true }),
  );
  // Whatever digits are left sit in odd notations ("1.2.3"): read them as plain numbers.
  return replaceWords(text, /\d+/g, (m) => readNumber(m[0], rules));
}
