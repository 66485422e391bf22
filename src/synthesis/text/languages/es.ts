import { spanishNumbers as n } from '../number-words/es.js';
import type { CurrencyCode, LanguageRules, MoneyAmount } from './types.js';

const MONTHS = ['enero', 'febrero', 'marzo', 'abril', 'mayo', 'junio', 'julio', 'agosto', 'septiembre', 'octubre', 'noviembre', 'diciembre'];

const CURRENCIES: Record<CurrencyCode, { one: string; many: string; feminine?: boolean; subOne: string; subMany: string }> = {
  USD: { one: 'dólar', many: 'dólares', subOne: 'centavo', subMany: 'centavos' },
  EUR: { one: 'euro', many: 'euros', subOne: 'céntimo', subMany: 'céntimos' },
  GBP: { one: 'libra', many: 'libras', feminine: true, subOne: 'penique', subMany: 'peniques' },
  INR: { one: 'rupia', many: 'rupias', feminine: true, subOne: 'paisa', subMany: 'paisas' },
  JPY: { one: 'yen', many: 'yenes', subOne: 'sen', subMany: 'sen' },
};

/** "3,14" → "tres coma catorce": short decimals are read as a number, long ones digit by digit. */
function decimal(int: string, frac: string): string {
  if (frac.length <= 3 && !frac.startsWith('0')) return `${int} coma ${n.cardinal(Number(frac))}`;
  return `${int} coma ${[...frac].map((d) => n.cardinal(Number(d))).join(' ')}`;
}

function currency(code: CurrencyCode, a: MoneyAmount): string {
  const c = CURRENCIES[code];
  const gender = c.feminine ? 'feminine' : 'masculine';
  // "dos millones de euros": a scale word or a round million takes "de".
  if (a.scale) return `${a.spelled ?? n.cardinal(a.units, gender)} ${a.scale} de ${c.many}`;
  if (a.spelled) return `${a.spelled} ${c.many}`;
  const units = n.cardinal(a.units, gender);
  const main = `${units} ${/(millón|millones|billón|billones)$/.test(units) ? `de ${c.many}` : a.units === 1 ? c.one : c.many}`;
  if (!a.cents) return main;
  const sub = `${n.cardinal(a.cents, 'masculine')} ${a.cents === 1 ? c.subOne : c.subMany}`;
  return a.units ? `${main} con ${sub}` : sub;
}

function time(h: number, m: number, s: number | undefined): string {
  const hour = n.cardinal(h, 'feminine');
  let words = m ? `${hour} y ${n.cardinal(m)}` : `${hour} en punto`;
  if (s) words += ` y ${n.cardinal(s, 'masculine')} segundo${s === 1 ? '' : 's'}`;
  return words;
}

function specialForms(text: string): string {
  // 1.º / 1º / 1.ª: the masculine and feminine ordinal indicators.
  return text.replace(/(?<![\d.,])(\d{1,2})\.?([ºª])/g, (_m, num: string, mark: string) =>
    n.ordinal(Number(num), mark === 'ª' ? 'feminine' : 'masculine'),
  ).replace(new RegExp(`(?<![\\d.,])1\\s+de\\s+(${MONTHS.join('|')})(?!\\p{L})`, 'giu'), 'primero de $1');
}

export const spanish: LanguageRules = {
  code: 'es',
  numbers: n,
  decimalSeparator: ',',
  spaceGroups: false,
  indianGrouping: false,
  minus: 'menos',
  percent: 'por ciento',
  and: 'y',
  decimal,
  currency,
  scaleWords: ['mil', 'millón', 'millones', 'mil millones', 'billón', 'billones'],
  time,
  meridiem: false,
  hourMarkTimes: false,
  date: (y, m, d) => `${d === 1 ? 'primero' : n.cardinal(d)} de ${MONTHS[m - 1]} de ${n.year(y)}`,
  dayFirst: true,
  months: MONTHS,
  abbreviations: [
    { pattern: /\bSr\.(?=\s)/g, expansion: 'señor' },
    { pattern: /\bSra\.(?=\s)/g, expansion: 'señora' },
    { pattern: /\bSrta\.(?=\s)/g, expansion: 'señorita' },
    { pattern: /\bDr\.(?=\s)/g, expansion: 'doctor' },
    { pattern: /\bDra\.(?=\s)/g, expansion: 'doctora' },
    { pattern: /\bUd\.(?=\s)/g, expansion: 'usted' },
    { pattern: /\bUds\.(?=\s)/g, expansion: 'ustedes' },
    { pattern: /\bEE\.\s?UU\./g, expansion: 'Estados Unidos', canEndSentence: true },
    { pattern: /\betc\./gi, expansion: 'etcétera', canEndSentence: true },
    { pattern: /\bp\.\s?ej\./gi, expansion: 'por ejemplo' },
    { pattern: /\bnúm\.(?=\s?\d)/gi, expansion: 'número' },
  ],
  specialForms,
};
