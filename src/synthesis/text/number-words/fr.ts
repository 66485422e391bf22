import type { Gender, NumberWords } from './types.js';

const ONES = [
  'zéro', 'un', 'deux', 'trois', 'quatre', 'cinq', 'six', 'sept', 'huit', 'neuf', 'dix',
  'onze', 'douze', 'treize', 'quatorze', 'quinze', 'seize', 'dix-sept', 'dix-huit', 'dix-neuf',
];
const TENS = ['', '', 'vingt', 'trente', 'quarante', 'cinquante', 'soixante'];

// Traditional spelling (hyphens below 100 only); a speech engine reads both spellings alike.
function below100(n: number): string {
  if (n < 20) return ONES[n]!;
  if (n < 70) {
    const unit = n % 10;
    const tens = TENS[Math.floor(n / 10)]!;
    if (unit === 0) return tens;
    return unit === 1 ? `${tens} et un` : `${tens}-${ONES[unit]}`;
  }
  if (n < 80) return n === 71 ? 'soixante et onze' : `soixante-${ONES[n - 60]}`;
  if (n === 80) return 'quatre-vingts';
  return `quatre-vingt-${ONES[n - 80]}`;
}

/** `multiplier`: the group multiplies "mille", where "vingts"/"cents" lose their s. */
function below1000(n: number, multiplier = false): string {
  const hundreds = Math.floor(n / 100);
  const rest = n % 100;
  let words = '';
  if (hundreds) words = hundreds === 1 ? 'cent' : `${ONES[hundreds]} cent${rest ? '' : 's'}`;
  if (rest) words += (words ? ' ' : '') + below100(rest);
  if (multiplier) words = words.replace(/(vingt|cent)s$/, '$1');
  return words;
}

function cardinal(n: number, gender?: Gender): string {
  if (n === 0) return 'zéro';
  const parts: string[] = [];
  let rest = n;
  for (const [value, noun] of [
    [1e12, 'billion'],
    [1e9, 'milliard'],
    [1e6, 'million'],
  ] as const) {
    const q = Math.floor(rest / value);
    if (q) parts.push(`${q === 1 ? 'un' : below1000(q)} ${noun}${q > 1 ? 's' : ''}`);
    rest %= value;
  }
  const thousands = Math.floor(rest / 1000);
  if (thousands) parts.push(thousands === 1 ? 'mille' : `${below1000(thousands, true)} mille`);
  if (rest % 1000) parts.push(below1000(rest % 1000));
  const words = parts.join(' ');
  return gender === 'feminine' ? words.replace(/\bun$/, 'une') : words;
}

function ordinal(n: number, gender?: Gender): string {
  if (n === 1) return gender === 'feminine' ? 'première' : 'premier';
  const words = cardinal(n).replace(/(vingt|cent)s$/, '$1');
  const m = /^(.*?)([a-zéè]+)$/.exec(words)!;
  const last = m[2]!;
  let ord: string;
  if (last === 'cinq') ord = 'cinquième';
  else if (last === 'neuf') ord = 'neuvième';
  else if (last.endsWith('e')) ord = `${last.slice(0, -1)}ième`;
  else ord = `${last}ième`;
  return m[1] + ord;
}

export const frenchNumbers: NumberWords = { cardinal, ordinal, year: (n) => cardinal(n) };
