import type { NumberWords } from './types.js';

const ONES = [
  'zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten',
  'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen',
];
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];
const SCALES: [number, string][] = [
  [1e12, 'trillion'],
  [1e9, 'billion'],
  [1e6, 'million'],
  [1e3, 'thousand'],
];

function below100(n: number): string {
  if (n < 20) return ONES[n]!;
  const unit = n % 10;
  return TENS[Math.floor(n / 10)]! + (unit ? `-${ONES[unit]}` : '');
}

function below1000(n: number): string {
  const hundreds = Math.floor(n / 100);
  const rest = n % 100;
  if (!hundreds) return below100(rest);
  // American style, no "and": "one hundred twenty-three". "and" is kept for dollars-and-cents.
  return `${ONES[hundreds]} hundred` + (rest ? ` ${below100(rest)}` : '');
}

function cardinal(n: number): string {
  if (n < 1000) return below1000(n);
  const parts: string[] = [];
  let rest = n;
  for (const [value, word] of SCALES) {
    const q = Math.floor(rest / value);
    if (q) parts.push(`${cardinal(q)} ${word}`);
    rest %= value;
  }
  if (rest) parts.push(below1000(rest));
  return parts.join(' ');
}

const IRREGULAR_ORDINALS: Record<string, string> = {
  one: 'first', two: 'second', three: 'third', five: 'fifth', eight: 'eighth', nine: 'ninth', twelve: 'twelfth',
};

function ordinal(n: number): string {
  const words = cardinal(n);
  // Only the last word changes: "twenty-one" → "twenty-first", "one hundred" → "one hundredth".
  const m = /^(.*?)([a-z]+)$/.exec(words)!;
  const last = m[2]!;
  const ord = IRREGULAR_ORDINALS[last] ?? (last.endsWith('y') ? `${last.slice(0, -1)}ieth` : `${last}th`);
  return m[1] + ord;
}

function year(n: number): string {
  if (n < 1000 || n > 9999 || (n >= 2000 && n < 2010) || n % 1000 === 0) return cardinal(n);
  const high = Math.floor(n / 100);
  const low = n % 100;
  if (low === 0) return `${below100(high)} hundred`;
  return `${below100(high)} ${low < 10 ? `oh ${ONES[low]}` : below100(low)}`;
}

export const englishNumbers: NumberWords = { cardinal, ordinal, year };
