import { germanNumbers as n } from '../number-words/de.js';
import type { CurrencyCode, LanguageRules, MoneyAmount } from './types.js';

const MONTHS = ['Januar', 'Februar', 'März', 'April', 'Mai', 'Juni', 'Juli', 'August', 'September', 'Oktober', 'November', 'Dezember'];

// German currency nouns are invariable after numbers ("zwanzig Euro", "fünf Dollar"), except Rupie.
const CURRENCIES: Record<CurrencyCode, { one: string; many: string; feminine?: boolean; sub: string }> = {
  USD: { one: 'Dollar', many: 'Dollar', sub: 'Cent' },
  EUR: { one: 'Euro', many: 'Euro', sub: 'Cent' },
  GBP: { one: 'Pfund', many: 'Pfund', sub: 'Pence' },
  INR: { one: 'Rupie', many: 'Rupien', feminine: true, sub: 'Paise' },
  JPY: { one: 'Yen', many: 'Yen', sub: 'Sen' },
};

function digits(s: string): string {
  return [...s].map((d) => n.cardinal(Number(d))).join(' ');
}

function currency(code: CurrencyCode, a: MoneyAmount): string {
  const c = CURRENCIES[code];
  if (a.spelled || a.scale) return `${a.spelled ?? n.cardinal(a.units)}${a.scale ? ` ${a.scale}` : ''} ${c.many}`;
  const gender = c.feminine ? 'feminine' : 'masculine';
  const main = `${n.cardinal(a.units, a.units === 1 ? gender : undefined)} ${a.units === 1 ? c.one : c.many}`;
  if (!a.cents) return main;
  // "3,50 €" is said "drei Euro fünfzig": the cents follow without their unit.
  return a.units ? `${main} ${n.cardinal(a.cents)}` : `${n.cardinal(a.cents)} ${c.sub}`;
}

function time(h: number, m: number, s: number | undefined): string {
  let words = `${n.cardinal(h, h === 1 ? 'masculine' : undefined)} Uhr`;
  if (m) words += ` ${n.cardinal(m)}`;
  if (s) words += ` und ${n.cardinal(s, s === 1 ? 'feminine' : undefined)} Sekunde${s === 1 ? '' : 'n'}`;
  return words;
}

/**
 * The case ending of an ordinal after the word before it: "am fünfzehnten", "der fünfzehnte",
 * "ein fünfzehnter"; with no article a date heading is nominative ("fünfzehnter März").
 */
function ordinalEnding(before: string): string {
  const w = before.toLowerCase();
  if (['der', 'die', 'das', 'jede', 'jeder', 'dieser', 'diese'].includes(w)) return '';
  if (['am', 'im', 'zum', 'vom', 'beim', 'dem', 'den', 'des', 'einem', 'einen', 'einer', 'seit', 'bis', 'ab'].includes(w)) return 'n';
  if (w === 'ein') return 'r';
  if (w === 'eine') return '';
  return 'r';
}

const MONTH_ALTERNATION = MONTHS.join('|');

function specialForms(text: string): string {
  // "15. März" and "am 2. Juni": a number with a full stop before a month is a day.
  text = text.replace(
    new RegExp(`(?:(\\p{L}+)\\s+)?(?<!\\d)(\\d{1,2})\\.\\s*(${MONTH_ALTERNATION})(?!\\p{L})`, 'gu'),
    (_m, before: string | undefined, day: string, month: string) =>
      `${before ? `${before} ` : ''}${n.ordinal(Number(day))}${ordinalEnding(before ?? '')} ${month}`,
  );
  // Elsewhere "2." is an ordinal only after an article or preposition ("der 2. Platz", "zum 3. Mal");
  // at a sentence end it is a cardinal followed by a full stop.
  return text.replace(
    /(?<!\p{L})(der|die|das|den|dem|des|am|im|zum|vom|beim|ein|eine|einem|einen|einer)\s+(\d{1,4})\.(?=\s+\p{L})/giu,
    (_m, before: string, num: string) => `${before} ${n.ordinal(Number(num))}${ordinalEnding(before)}`,
  );
}

export const german: LanguageRules = {
  code: 'de',
  numbers: n,
  decimalSeparator: ',',
  spaceGroups: false,
  indianGrouping: false,
  minus: 'minus',
  percent: 'Prozent',
  and: 'und',
  decimal: (int, frac) => `${int} Komma ${digits(frac)}`,
  currency,
  scaleWords: ['tausend', 'million', 'millionen', 'milliarde', 'milliarden'],
  time,
  meridiem: false,
  hourMarkTimes: false,
  date: (y, m, d, before) => `${n.ordinal(d)}${ordinalEnding(before)} ${MONTHS[m - 1]} ${n.year(y)}`,
  dayFirst: true,
  months: MONTHS,
  abbreviations: [
    { pattern: /\bz\.\s?B\./g, expansion: 'zum Beispiel' },
    { pattern: /\bd\.\s?h\./g, expansion: 'das heißt' },
    { pattern: /\bu\.\s?a\./g, expansion: 'unter anderem' },
    { pattern: /\busw\./g, expansion: 'und so weiter', canEndSentence: true },
    { pattern: /\bbzw\./g, expansion: 'beziehungsweise' },
    { pattern: /\bca\./g, expansion: 'circa' },
    { pattern: /\bMio\./g, expansion: 'Millionen', canEndSentence: true },
    { pattern: /\bMrd\./g, expansion: 'Milliarden', canEndSentence: true },
    { pattern: /\bDr\.(?=\s)/g, expansion: 'Doktor' },
    { pattern: /\bProf\.(?=\s)/g, expansion: 'Professor' },
    { pattern: /\bHr\.(?=\s)/g, expansion: 'Herr' },
    { pattern: /\bFr\.(?=\s)/g, expansion: 'Frau' },
    { pattern: /\bNr\.(?=\s?\d)/g, expansion: 'Nummer' },
    { pattern: /\bStr\./g, expansion: 'Straße', canEndSentence: true },
    { pattern: /\bSt\.(?=\s+\p{Lu})/gu, expansion: 'Sankt' },
  ],
  specialForms,
};
