import { englishNumbers as n } from '../number-words/en.js';
import type { CurrencyCode, LanguageRules, MoneyAmount } from './types.js';

const MONTHS = [
  'January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December',
];

const CURRENCIES: Record<CurrencyCode, { one: string; many: string; subOne: string; subMany: string }> = {
  USD: { one: 'dollar', many: 'dollars', subOne: 'cent', subMany: 'cents' },
  EUR: { one: 'euro', many: 'euros', subOne: 'cent', subMany: 'cents' },
  GBP: { one: 'pound', many: 'pounds', subOne: 'penny', subMany: 'pence' },
  INR: { one: 'rupee', many: 'rupees', subOne: 'paisa', subMany: 'paise' },
  JPY: { one: 'yen', many: 'yen', subOne: 'sen', subMany: 'sen' },
};

function digits(s: string): string {
  return [...s].map((d) => n.cardinal(Number(d))).join(' ');
}

function currency(code: CurrencyCode, a: MoneyAmount): string {
  const c = CURRENCIES[code];
  if (a.spelled || a.scale) return `${a.spelled ?? n.cardinal(a.units)}${a.scale ? ` ${a.scale}` : ''} ${c.many}`;
  const main = `${n.cardinal(a.units)} ${a.units === 1 ? c.one : c.many}`;
  if (!a.cents) return main;
  const sub = `${n.cardinal(a.cents)} ${a.cents === 1 ? c.subOne : c.subMany}`;
  return a.units ? `${main} and ${sub}` : sub;
}

function time(h: number, m: number, s: number | undefined, meridiem: 'am' | 'pm' | undefined): string {
  let words = n.cardinal(h);
  if (m === 0) words += meridiem ? '' : " o'clock";
  else words += m < 10 ? ` oh ${n.cardinal(m)}` : ` ${n.cardinal(m)}`;
  // Spelled as letters would be ("ay em"): a bare "am" is read as the verb.
  if (meridiem) words += meridiem === 'am' ? ' ay em' : ' pee em';
  if (s) words += ` and ${n.cardinal(s)} second${s === 1 ? '' : 's'}`;
  return words;
}

// "Mar" and "Sept" as well as full names; capitalised only, so that "may" stays a verb.
const MONTH_BY_PREFIX = new Map<string, string>(
  MONTHS.flatMap((m) => [[m, m], [m.slice(0, 3), m]] as [string, string][]).concat([['Sept', 'September']]),
);
const MONTH_PATTERN = `(${[...MONTH_BY_PREFIX.keys()].sort((a, b) => b.length - a.length).join('|')})\\.?`;

function specialForms(text: string): string {
  // "March 5, 2024" → "March fifth, 2024" (the year is read by the number pass).
  text = text.replace(
    new RegExp(`\\b${MONTH_PATTERN}\\s+(\\d{1,2})(?:st|nd|rd|th)?(?![\\d:.,]\\d|\\d|\\s*%)`, 'g'),
    (m, month: string, day: string) =>
      Number(day) >= 1 && Number(day) <= 31 ? `${MONTH_BY_PREFIX.get(month)} ${n.ordinal(Number(day))}` : m,
  );
  // "5 March", "the 5th of March" → "the fifth of March".
  text = text.replace(
    new RegExp(`(?<![\\d.,])(?:\\b([Tt]he)\\s+)?(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH_PATTERN}(?!\\p{L})`, 'gu'),
    (m, the: string | undefined, day: string, month: string) =>
      Number(day) >= 1 && Number(day) <= 31 ? `${the ?? 'the'} ${n.ordinal(Number(day))} of ${MONTH_BY_PREFIX.get(month)}` : m,
  );
  return text.replace(/(?<![\d.,])(\d{1,9})(st|nd|rd|th)\b/gi, (_m, num: string) => n.ordinal(Number(num)));
}

export const english: LanguageRules = {
  code: 'en',
  numbers: n,
  decimalSeparator: '.',
  spaceGroups: false,
  indianGrouping: true,
  minus: 'minus',
  percent: 'percent',
  and: 'and',
  decimal: (int, frac) => `${int} point ${digits(frac)}`,
  currency,
  scaleWords: ['thousand', 'million', 'billion', 'trillion'],
  time,
  meridiem: true,
  hourMarkTimes: false,
  date: (y, m, d) => `${MONTHS[m - 1]} ${n.ordinal(d)}, ${n.year(y)}`,
  dayFirst: false,
  months: MONTHS,
  abbreviations: [
    { pattern: /\bMr\.(?=\s)/g, expansion: 'Mister' },
    { pattern: /\bMrs\.(?=\s)/g, expansion: 'Missus' },
    { pattern: /\bMs\.(?=\s)/g, expansion: 'Miz' },
    { pattern: /\bDr\.(?=\s)/g, expansion: 'Doctor' },
    { pattern: /\bProf\.(?=\s)/g, expansion: 'Professor' },
    // "St. Louis", "in St. Louis" but "Main St. Then": after a capitalised word it is a street.
    { pattern: /(?<!\p{Lu}\p{L}*\s+)\bSt\.(?=\s+\p{Lu})/gu, expansion: 'Saint' },
    { pattern: /\bSt\./g, expansion: 'Street', canEndSentence: true },
    { pattern: /\bMt\.(?=\s)/g, expansion: 'Mount' },
    { pattern: /\bAve\./g, expansion: 'Avenue', canEndSentence: true },
    { pattern: /\bJr\./g, expansion: 'Junior', canEndSentence: true },
    { pattern: /\bSr\./g, expansion: 'Senior', canEndSentence: true },
    { pattern: /\bvs\.?(?=\s)/gi, expansion: 'versus' },
    { pattern: /\betc\./gi, expansion: 'et cetera', canEndSentence: true },
    { pattern: /\be\.\s?g\.(?=[\s,])/gi, expansion: 'for example' },
    { pattern: /\bi\.\s?e\.(?=[\s,])/gi, expansion: 'that is' },
    { pattern: /\bapprox\.(?=\s)/gi, expansion: 'approximately' },
    { pattern: /\bNo\.(?=\s?\d)/g, expansion: 'number' },
  ],
  specialForms,
};
