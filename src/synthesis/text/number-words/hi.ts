import type { NumberWords } from './types.js';

/** Hindi has a separate, partly irregular word for every number up to 99. */
export const HINDI_0_TO_99 = [
  'शून्य', 'एक', 'दो', 'तीन', 'चार', 'पाँच', 'छह', 'सात', 'आठ', 'नौ',
  'दस', 'ग्यारह', 'बारह', 'तेरह', 'चौदह', 'पंद्रह', 'सोलह', 'सत्रह', 'अठारह', 'उन्नीस',
  'बीस', 'इक्कीस', 'बाईस', 'तेईस', 'चौबीस', 'पच्चीस', 'छब्बीस', 'सत्ताईस', 'अट्ठाईस', 'उनतीस',
  'तीस', 'इकतीस', 'बत्तीस', 'तैंतीस', 'चौंतीस', 'पैंतीस', 'छत्तीस', 'सैंतीस', 'अड़तीस', 'उनतालीस',
  'चालीस', 'इकतालीस', 'बयालीस', 'तैंतालीस', 'चवालीस', 'पैंतालीस', 'छियालीस', 'सैंतालीस', 'अड़तालीस', 'उनचास',
  'पचास', 'इक्यावन', 'बावन', 'तिरपन', 'चौवन', 'पचपन', 'छप्पन', 'सत्तावन', 'अट्ठावन', 'उनसठ',
  'साठ', 'इकसठ', 'बासठ', 'तिरसठ', 'चौंसठ', 'पैंसठ', 'छियासठ', 'सड़सठ', 'अड़सठ', 'उनहत्तर',
  'सत्तर', 'इकहत्तर', 'बहत्तर', 'तिहत्तर', 'चौहत्तर', 'पचहत्तर', 'छिहत्तर', 'सतहत्तर', 'अठहत्तर', 'उन्यासी',
  'अस्सी', 'इक्यासी', 'बयासी', 'तिरासी', 'चौरासी', 'पचासी', 'छियासी', 'सत्तासी', 'अट्ठासी', 'नवासी',
  'नब्बे', 'इक्यानबे', 'बानबे', 'तिरानबे', 'चौरानबे', 'पंचानबे', 'छियानबे', 'सत्तानबे', 'अट्ठानबे', 'निन्यानबे',
] as const;

// Indian grouping: hundreds, thousands, lakhs (1e5), crores (1e7), arabs (1e9).
const SCALES: [number, string][] = [
  [1e9, 'अरब'],
  [1e7, 'करोड़'],
  [1e5, 'लाख'],
  [1e3, 'हज़ार'],
  [1e2, 'सौ'],
];

function cardinal(n: number): string {
  if (n < 100) return HINDI_0_TO_99[n]!;
  const parts: string[] = [];
  let rest = n;
  for (const [value, word] of SCALES) {
    const q = Math.floor(rest / value);
    if (q) parts.push(`${cardinal(q)} ${word}`);
    rest %= value;
  }
  if (rest) parts.push(HINDI_0_TO_99[rest]!);
  return parts.join(' ');
}

const IRREGULAR_ORDINALS: Record<number, string> = { 1: 'पहला', 2: 'दूसरा', 3: 'तीसरा', 4: 'चौथा', 6: 'छठा' };

function ordinal(n: number, gender?: 'masculine' | 'feminine'): string {
  const words = IRREGULAR_ORDINALS[n] ?? `${cardinal(n)}वाँ`;
  return gender === 'feminine' ? words.replace(/ा$/, 'ी').replace(/वाँ$/, 'वीं') : words;
}

function year(n: number): string {
  // 1999 is "उन्नीस सौ निन्यानबे"; from 2000 the cardinal ("दो हज़ार चौबीस") is what people say.
  if (n >= 1100 && n < 2000) return `${HINDI_0_TO_99[Math.floor(n / 100)]} सौ${n % 100 ? ` ${HINDI_0_TO_99[n % 100]}` : ''}`;
  return cardinal(n);
}

export const hindiNumbers: NumberWords = { cardinal, ordinal, year };
