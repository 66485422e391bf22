import { frenchNumbers as n } from '../number-words/fr.js';
import type { CurrencyCode, LanguageRules, MoneyAmount } from './types.js';

const MONTHS = ['janvier', 'février', 'mars', 'avril', 'mai', 'juin', 'juillet', 'août', 'septembre', 'octobre', 'novembre', 'décembre'];

const CURRENCIES: Record<CurrencyCode, { one: string; many: string; feminine?: boolean; subOne: string; subMany: string }> = {
  USD: { one: 'dollar', many: 'dollars', subOne: 'cent', subMany: 'cents' },
  EUR: { one: 'euro', many: 'euros', subOne: 'centime', subMany: 'centimes' },
  GBP: { one: 'livre', many: 'livres', feminine: true, subOne: 'penny', subMany: 'pence' },
  INR: { one: 'roupie', many: 'roupies', feminine: true, subOne: 'paisa', subMany: 'paise' },
  JPY: { one: 'yen', many: 'yens', subOne: 'sen', subMany: 'sens' },
};

/** "3,14" → "trois virgule quatorze": short decimals are read as a number, long ones digit by digit. */
function decimal(int: string, frac: string): string {
  if (frac.length <= 3 && !frac.startsWith('0')) return `${int} virgule ${n.cardinal(Number(frac))}`;
  return `${int} virgule ${[...frac].map((d) => n.cardinal(Number(d))).join(' ')}`;
}

function elide(noun: string): string {
  return /^[aeiouéèêhy]/i.test(noun) ? `d'${noun}` : `de ${noun}`;
}

function currency(code: CurrencyCode, a: MoneyAmount): string {
  const c = CURRENCIES[code];
  const gender = c.feminine ? 'feminine' : 'masculine';
  if (a.scale) return `${a.spelled ?? n.cardinal(a.units)} ${a.scale} ${elide(c.many)}`;
  if (a.spelled) return `${a.spelled} ${c.many}`;
  // "un million de dollars": round millions take "de".
  const units = n.cardinal(a.units, gender);
  const main = `${units} ${/(million|milliard|billion)s?$/.test(units) ? elide(c.many) : a.units > 1 ? c.many : c.one}`;
  if (!a.cents) return main;
  return a.units ? `${main} ${n.cardinal(a.cents)}` : `${n.cardinal(a.cents)} ${a.cents === 1 ? c.subOne : c.subMany}`;
}

function time(h: number, m: number, s: number | undefined): string {
  let words = `${n.cardinal(h, 'feminine')} heure${h > 1 ? 's' : ''}`;
  if (m) words += ` ${n.cardinal(m, 'feminine')}`;
  if (s) words += ` et ${n.cardinal(s, 'feminine')} seconde${s > 1 ? 's' : ''}`;
  return words;
}

function specialForms(text: string): string {
  // 1er, 1re/1ère, 2e/2ème/2è, with plurals (2es); "1 mars" is also read "premier mars".
  text = text.replace(/(?<![\d.,])(\d{1,9})(ers?|res?|ères?|èmes?|es?|è)(?![\p{L}\d])/gu, (_m, num: string, suffix: string) => {
    const value = Number(num);
    const feminine = /^(re|ère)/.test(suffix);
    return n.ordinal(value, feminine ? 'feminine' : 'masculine') + (suffix.endsWith('s') ? 's' : '');
  });
  return text.replace(new RegExp(`(?<![\\d.,])1\\s+(${MONTHS.join('|')})(?!\\p{L})`, 'giu'), 'premier $1');
}

export const french: LanguageRules = {
  code: 'fr',
  numbers: n,
  decimalSeparator: ',',
  spaceGroups: true,
  indianGrouping: false,
  minus: 'moins',
  percent: 'pour cent',
  and: 'et',
  decimal,
  currency,
  scaleWords: ['mille', 'million', 'millions', 'milliard', 'milliards'],
  time,
  meridiem: false,
  hourMarkTimes: true,
  date: (y, m, d) => `${d === 1 ? 'premier' : n.cardinal(d)} ${MONTHS[m - 1]} ${n.year(y)}`,
  dayFirst: true,
  months: MONTHS,
  abbreviations: [
    { pattern: /\bM\.(?=\s+\p{Lu})/gu, expansion: 'Monsieur' },
    { pattern: /\bMM\.(?=\s+\p{Lu})/gu, expansion: 'Messieurs' },
    { pattern: /\bMme(?=\s)/g, expansion: 'Madame' },
    { pattern: /\bMlle(?=\s)/g, expansion: 'Mademoiselle' },
    { pattern: /\bDr\.?(?=\s+\p{Lu})/gu, expansion: 'Docteur' },
    { pattern: /\bPr\.?(?=\s+\p{Lu})/gu, expansion: 'Professeur' },
    { pattern: /\bSt(?=[\s-]+\p{Lu})/gu, expansion: 'Saint' },
    { pattern: /\bSte(?=[\s-]+\p{Lu})/gu, expansion: 'Sainte' },
    { pattern: /\betc\./gi, expansion: 'et cetera', canEndSentence: true },
    { pattern: /\bp\.\s?ex\./gi, expansion: 'par exemple' },
    { pattern: /\bc\.-à-d\./gi, expansion: "c'est-à-dire" },
    { pattern: /\bn°\s?(?=\d)/g, expansion: 'numéro ' },
  ],
  specialForms,
};
