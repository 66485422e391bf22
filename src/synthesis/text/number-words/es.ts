import type { Gender, NumberWords } from './types.js';

const BELOW_30 = [
  'cero', 'uno', 'dos', 'tres', 'cuatro', 'cinco', 'seis', 'siete', 'ocho', 'nueve', 'diez',
  'once', 'doce', 'trece', 'catorce', 'quince', 'dieciséis', 'diecisiete', 'dieciocho', 'diecinueve',
  'veinte', 'veintiuno', 'veintidós', 'veintitrés', 'veinticuatro', 'veinticinco', 'veintiséis',
  'veintisiete', 'veintiocho', 'veintinueve',
];
const TENS = ['', '', '', 'treinta', 'cuarenta', 'cincuenta', 'sesenta', 'setenta', 'ochenta', 'noventa'];
const HUNDREDS = [
  '', 'ciento', 'doscientos', 'trescientos', 'cuatrocientos', 'quinientos', 'seiscientos', 'setecientos',
  'ochocientos', 'novecientos',
];

function below100(n: number): string {
  if (n < 30) return BELOW_30[n]!;
  const unit = n % 10;
  return TENS[Math.floor(n / 10)]! + (unit ? ` y ${BELOW_30[unit]}` : '');
}

function below1000(n: number): string {
  if (n === 100) return 'cien';
  const hundreds = Math.floor(n / 100);
  const rest = n % 100;
  return [hundreds ? HUNDREDS[hundreds]! : '', rest ? below100(rest) : ''].filter(Boolean).join(' ');
}

/** Before a noun (and before "mil", "millones") "uno" shortens: "un", "veintiún". */
function apocope(words: string): string {
  return words.replace(/veintiuno$/, 'veintiún').replace(/\buno$/, 'un');
}

function feminine(words: string): string {
  return words.replace(/ientos\b/g, 'ientas').replace(/veintiuno$/, 'veintiuna').replace(/\buno$/, 'una');
}

/** Without `gender` the bare count ("uno"); masculine/feminine give the form used before a noun. */
function cardinal(n: number, gender?: Gender): string {
  if (n === 0) return 'cero';
  const parts: string[] = [];
  let rest = n;
  for (const [value, one, many] of [
    [1e12, 'un billón', 'billones'],
    [1e6, 'un millón', 'millones'],
  ] as const) {
    const q = Math.floor(rest / value);
    // 1e9 is "mil millones": the millions group may itself hold thousands.
    if (q) parts.push(q === 1 ? one : `${apocope(cardinal(q))} ${many}`);
    rest %= value;
  }
  const thousands = Math.floor(rest / 1000);
  if (thousands) {
    const head = thousands === 1 ? '' : apocope(below1000(thousands));
    parts.push(head ? `${gender === 'feminine' ? feminine(head) : head} mil` : 'mil');
  }
  if (rest % 1000) parts.push(below1000(rest % 1000));
  let words = parts.join(' ');
  if (gender === 'feminine') words = feminine(words);
  else if (gender === 'masculine') words = apocope(words);
  return words;
}

const UNIT_ORDINALS = ['', 'primero', 'segundo', 'tercero', 'cuarto', 'quinto', 'sexto', 'séptimo', 'octavo', 'noveno'];
const TEN_ORDINALS = [
  '', 'décimo', 'vigésimo', 'trigésimo', 'cuadragésimo', 'quincuagésimo', 'sexagésimo', 'septuagésimo',
  'octogésimo', 'nonagésimo',
];
const TEENS: Record<number, string> = {
  11: 'undécimo', 12: 'duodécimo', 13: 'decimotercero', 14: 'decimocuarto', 15: 'decimoquinto',
  16: 'decimosexto', 17: 'decimoséptimo', 18: 'decimoctavo', 19: 'decimonoveno',
};

function ordinal(n: number, gender?: Gender): string {
  // Ordinals above 99 are rare in speech and usually replaced by cardinals ("el capítulo ciento dos").
  let words: string;
  if (n >= 100 || n === 0) words = cardinal(n);
  else if (TEENS[n]) words = TEENS[n]!;
  else words = [TEN_ORDINALS[Math.floor(n / 10)], UNIT_ORDINALS[n % 10]].filter(Boolean).join(' ');
  return gender === 'feminine' && n < 100 ? words.replace(/o\b/g, 'a') : words;
}

export const spanishNumbers: NumberWords = { cardinal, ordinal, year: (n) => cardinal(n) };
