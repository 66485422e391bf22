import { HINDI_0_TO_99, hindiNumbers as n } from '../number-words/hi.js';
import type { CurrencyCode, LanguageRules, MoneyAmount } from './types.js';

const MONTHS = ['जनवरी', 'फ़रवरी', 'मार्च', 'अप्रैल', 'मई', 'जून', 'जुलाई', 'अगस्त', 'सितंबर', 'अक्टूबर', 'नवंबर', 'दिसंबर'];

const CURRENCIES: Record<CurrencyCode, { one: string; many: string; sub: string }> = {
  USD: { one: 'डॉलर', many: 'डॉलर', sub: 'सेंट' },
  EUR: { one: 'यूरो', many: 'यूरो', sub: 'सेंट' },
  GBP: { one: 'पाउंड', many: 'पाउंड', sub: 'पेंस' },
  INR: { one: 'रुपया', many: 'रुपये', sub: 'पैसे' },
  JPY: { one: 'येन', many: 'येन', sub: 'सेन' },
};

function currency(code: CurrencyCode, a: MoneyAmount): string {
  const c = CURRENCIES[code];
  if (a.spelled || a.scale) return `${a.spelled ?? n.cardinal(a.units)}${a.scale ? ` ${a.scale}` : ''} ${c.many}`;
  const main = `${n.cardinal(a.units)} ${a.units === 1 ? c.one : c.many}`;
  if (!a.cents) return main;
  const sub = `${n.cardinal(a.cents)} ${c.sub}`;
  return a.units ? `${main} ${sub}` : sub;
}

function time(h: number, m: number, s: number | undefined, meridiem: 'am' | 'pm' | undefined): string {
  // Twelve-hour clock as spoken: "साढ़े" and "पौने" are common but the plain form is always right.
  const hour = n.cardinal(h > 12 && !meridiem ? h - 12 : h);
  let words = m ? `${hour} बजकर ${n.cardinal(m)} मिनट` : `${hour} बजे`;
  if (s) words += ` ${n.cardinal(s)} सेकंड`;
  return words;
}

export const hindi: LanguageRules = {
  code: 'hi',
  numbers: n,
  decimalSeparator: '.',
  spaceGroups: false,
  indianGrouping: true,
  minus: 'माइनस',
  percent: 'प्रतिशत',
  and: 'और',
  decimal: (int, frac) => `${int} दशमलव ${[...frac].map((d) => HINDI_0_TO_99[Number(d)]).join(' ')}`,
  currency,
  scaleWords: ['हज़ार', 'हजार', 'लाख', 'करोड़', 'अरब'],
  time,
  meridiem: false,
  hourMarkTimes: false,
  date: (y, m, d) => `${n.cardinal(d)} ${MONTHS[m - 1]} ${n.year(y)}`,
  dayFirst: true,
  months: MONTHS,
  abbreviations: [
    { pattern: /डॉ\.(?=\s)/g, expansion: 'डॉक्टर' },
    { pattern: /\bDr\.(?=\s)/g, expansion: 'डॉक्टर' },
    { pattern: /(?<!\p{L})रु\.(?=\s?\d)/gu, expansion: '₹' },
    { pattern: /\bRs\.?(?=\s?\d)/g, expansion: '₹' },
  ],
  specialForms: (text) => text,
};
