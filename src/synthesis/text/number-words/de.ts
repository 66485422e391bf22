import type { Gender, NumberWords } from './types.js';

const ONES = [
  'null', 'eins', 'zwei', 'drei', 'vier', 'fünf', 'sechs', 'sieben', 'acht', 'neun', 'zehn',
  'elf', 'zwölf', 'dreizehn', 'vierzehn', 'fünfzehn', 'sechzehn', 'siebzehn', 'achtzehn', 'neunzehn',
];
const TENS = ['', '', 'zwanzig', 'dreißig', 'vierzig', 'fünfzig', 'sechzig', 'siebzig', 'achtzig', 'neunzig'];

/** 1..99 as it appears inside a compound: 1 is "ein" there (einundzwanzig, einhundert). */
function below100(n: number, inCompound: boolean): string {
  if (n === 1) return inCompound ? 'ein' : 'eins';
  if (n < 20) return ONES[n]!;
  const unit = n % 10;
  const tens = TENS[Math.floor(n / 10)]!;
  return unit ? `${unit === 1 ? 'ein' : ONES[unit]}und${tens}` : tens;
}

function below1000(n: number, inCompound: boolean): string {
  const hundreds = Math.floor(n / 100);
  const rest = n % 100;
  const head = hundreds ? `${below100(hundreds, true)}hundert` : '';
  // A final 1 is "eins" when the number ends there ("hunderteins") and "ein" before "tausend".
  return head + (rest ? below100(rest, inCompound) : '');
}

function cardinal(n: number, gender?: Gender): string {
  if (n === 0) return 'null';
  if (n === 1) return gender === 'feminine' ? 'eine' : gender === 'masculine' ? 'ein' : 'eins';
  const parts: string[] = [];
  let rest = n;
  // Millions and above are separate, inflected nouns ("zwei Millionen"); below that it is one word.
  for (const [value, one, many] of [
    [1e12, 'eine Billion', 'Billionen'],
    [1e9, 'eine Milliarde', 'Milliarden'],
    [1e6, 'eine Million', 'Millionen'],
  ] as const) {
    const q = Math.floor(rest / value);
    if (q) parts.push(q === 1 ? one : `${below1000(q, true)} ${many}`);
    rest %= value;
  }
  if (rest) {
    const thousands = Math.floor(rest / 1000);
    const low = rest % 1000;
    parts.push((thousands ? `${below1000(thousands, true)}tausend` : '') + (low ? below1000(low, false) : ''));
  }
  return parts.join(' ');
}

const SMALL_ORDINALS: Record<number, string> = { 1: 'erste', 3: 'dritte', 7: 'siebte', 8: 'achte' };

/** The base form ("einundzwanzigste"); callers append the case ending (r, n, s, m). */
function ordinal(n: number): string {
  const low = n % 100;
  if (low >= 1 && low < 20) {
    const head = n - low ? cardinal(n - low) : '';
    const tail = SMALL_ORDINALS[low] ?? `${ONES[low]}te`;
    return head.includes(' ') ? `${head} ${tail}` : head + tail;
  }
  return `${cardinal(n)}ste`;
}

function year(n: number): string {
  // 1100..1999 are read in hundreds: "neunzehnhundertneunundneunzig"; from 2000 as a cardinal.
  if (n >= 1100 && n < 2000) return `${below100(Math.floor(n / 100), true)}hundert${n % 100 ? below100(n % 100, false) : ''}`;
  return cardinal(n);
}

export const germanNumbers: NumberWords = { cardinal, ordinal, year };
