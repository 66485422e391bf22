/**
 * The English inverse normaliser, category by category. Each category is generated from its rule
 * (the spoken forms English uses for that kind of number) over a spread of values, plus the
 * hand-written edge cases of the rule. Spoken cardinals, ordinals and years are spelled by the
 * synthesis speller (the opposite direction, an independent implementation), both with its hyphens
 * ("twenty-one") and as a recogniser writes them (separate words, any case).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { englishNumbers } from '../../src/synthesis/text/number-words/en.js';
import { englishInverseNumbers } from '../../src/text/inverse-number-words/en.js';

const DIGIT_WORDS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];

function normalise(spoken: string): string {
  return englishInverseNumbers
    .normalise(spoken.split(' ').filter(Boolean))
    .map((t) => t.text)
    .join(' ');
}

/** A small deterministic generator, so every run checks the same values. */
function values(count: number, min: number, max: number, seed: number): number[] {
  const out = new Set<number>();
  let s = seed;
  while (out.size < count) {
    s = (s * 1103515245 + 12345) % 2147483648;
    out.add(min + (s % (max - min + 1)));
  }
  return [...out];
}

function ordinalSuffix(n: number): string {
  if (n % 100 >= 11 && n % 100 <= 13) return 'th';
  return n % 10 === 1 ? 'st' : n % 10 === 2 ? 'nd' : n % 10 === 3 ? 'rd' : 'th';
}

const unhyphenated = (s: string) => s.replace(/-/g, ' ');

/** Every case of a category: [spoken, written], checked one by one with a message naming it. */
function check(cases: Array<[string, string]>, atLeast = 100): void {
  assert.ok(cases.length >= atLeast, `only ${cases.length} cases`);
  for (const [spoken, written] of cases) assert.equal(normalise(spoken), written, `"${spoken}"`);
}

describe('English inverse text normalisation', () => {
  it('cardinals: whole numbers with hundreds, thousands, millions, "and", "a"; single digits stay words', () => {
    const cases: Array<[string, string]> = [];
    for (const n of [...values(90, 10, 999, 1), ...values(40, 1000, 999_999, 2), ...values(20, 1_000_000, 999_999_999, 3)]) {
      const spoken = englishNumbers.cardinal(n);
      cases.push([spoken, String(n)], [unhyphenated(spoken).toUpperCase(), String(n)]);
    }
    cases.push(
      ['one hundred and five', '105'],
      ['two thousand and twenty', '2020'],
      ['a hundred', '100'],
      ['a thousand', '1000'],
      ['a million', '1000000'],
      ['twelve hundred', '1200'],
      ['I counted twenty three birds', 'I counted 23 birds'],
      ['one of them', 'one of them'],
      ['nine', 'nine'],
      ['zero', 'zero'],
      ['two thousand three thousand', '2000 3000'],
      ['ten, eleven', '10, 11'],
      ['Twenty-one.', '21.'],
      ['one hundred and', '100 and'],
      ['fifteen 16 seventeen', '15 16 17'],
    );
    check(cases);
  });

  it('ordinals: the last word is an ordinal; first to ninth alone stay words', () => {
    const cases: Array<[string, string]> = [];
    for (const n of [...values(80, 10, 999, 4), ...values(30, 1000, 99_999, 5)]) {
      const spoken = englishNumbers.ordinal(n);
      const written = `${n}${ordinalSuffix(n)}`;
      cases.push([spoken, written], [unhyphenated(spoken), written]);
    }
    cases.push(
      ['the twenty first of may', 'the 21st of may'],
      ['the first time', 'the first time'],
      ['second', 'second'],
      ['one hundredth', '100th'],
      ['a thousandth', '1000th'],
      ['eleventh', '11th'],
      ['twelfth', '12th'],
      ['thirteenth', '13th'],
      ['one hundred and third', '103rd'],
      ['twenty second,', '22nd,'],
    );
    check(cases);
  });

  it('years: read in pairs ("nineteen eighty four"), with "oh" and "hundred", or as cardinals', () => {
    const cases: Array<[string, string]> = [];
    for (const y of values(120, 1100, 2099, 6)) {
      const spoken = englishNumbers.year(y);
      cases.push([spoken, String(y)], [unhyphenated(spoken).toUpperCase(), String(y)]);
    }
    cases.push(
      ['nineteen eighty four', '1984'],
      ['in nineteen oh five', 'in 1905'],
      ['twenty twenty', '2020'],
      ['twenty twenty one', '2021'],
      ['nineteen hundred', '1900'],
      ['two thousand and nine', '2009'],
      ['eighteen twelve', '1812'],
      ['the summer of sixty nine', 'the summer of 69'],
    );
    check(cases);
  });

  it('decimals: a number, "point", digits one by one', () => {
    const cases: Array<[string, string]> = [];
    const ints = values(60, 0, 9999, 7);
    const fracs = values(60, 0, 999, 8);
    ints.forEach((int, i) => {
      const frac = String(fracs[i]!);
      const spokenFrac = [...frac].map((d) => DIGIT_WORDS[Number(d)]).join(' ');
      cases.push([`${unhyphenated(englishNumbers.cardinal(int))} point ${spokenFrac}`, `${int}.${frac}`]);
      cases.push([`${englishNumbers.cardinal(int)} point ${spokenFrac}`.toUpperCase(), `${int}.${frac}`]);
    });
    cases.push(
      ['three point one four', '3.14'],
      ['zero point five', '0.5'],
      ['one point oh five', '1.05'],
      ['one point five million', '1.5 million'],
      ['the point is', 'the point is'],
      ['point five', 'point five'],
    );
    check(cases);
  });

  it('percentages: a number (whole or decimal) then "percent" or "per cent"', () => {
    const cases: Array<[string, string]> = [];
    for (const n of values(70, 0, 1000, 9)) {
      cases.push([`${unhyphenated(englishNumbers.cardinal(n))} percent`, `${n}%`]);
      cases.push([`${englishNumbers.cardinal(n)} per cent`, `${n}%`]);
    }
    cases.push(
      ['two point five percent', '2.5%'],
      ['one percent', '1%'],
      ['ZERO PERCENT', '0%'],
      ['fifty percent.', '50%.'],
      ['a hundred percent', '100%'],
    );
    check(cases);
  });

  it('currency: dollars, pounds, euros with cents or pence, minor units alone, scales', () => {
    const cases: Array<[string, string]> = [];
    const units: Array<[string, string, string]> = [
      ['dollars', '$', 'cents'],
      ['pounds', '£', 'pence'],
      ['euros', '€', 'cents'],
    ];
    values(40, 2, 9999, 10).forEach((n, i) => {
      const [word, symbol, minor] = units[i % 3]!;
      const spoken = unhyphenated(englishNumbers.cardinal(n));
      cases.push([`${spoken} ${word}`, `${symbol}${n}`]);
      const c = (n % 98) + 1;
      cases.push([`${spoken} ${word} and ${englishNumbers.cardinal(c)} ${minor}`, `${symbol}${n}.${String(c).padStart(2, '0')}`]);
      cases.push([`${spoken} ${word} ${unhyphenated(englishNumbers.cardinal(c))} ${minor}`.toUpperCase(), `${symbol}${n}.${String(c).padStart(2, '0')}`]);
    });
    cases.push(
      ['one dollar', '$1'],
      ['five bucks', '$5'],
      ['fifty cents', '50¢'],
      ['ten pence', '10p'],
      ['a million dollars', '$1000000'],
      ['two point five million dollars', '$2.5 million'],
      ['three billion euros', '€3000000000'],
      ['ninety nine rupees', '₹99'],
      ['a thousand yen', '¥1000'],
      ['one dollar and one cent', '$1.01'],
    );
    check(cases);
  });

  it('times: o\'clock, a.m./p.m., "oh" minutes, half/quarter past and to, minutes past, military hours', () => {
    const cases: Array<[string, string]> = [];
    for (let h = 1; h <= 12; h++) {
      const hw = englishNumbers.cardinal(h);
      const prev = h === 1 ? 12 : h - 1;
      cases.push([`${hw} o'clock`, `${h}:00`]);
      cases.push([`${hw} p m`, `${h} PM`]);
      cases.push([`${hw} thirty a m`, `${h}:30 AM`]);
      cases.push([`${hw} oh five pm`, `${h}:05 PM`]);
      cases.push([`${hw} forty five a.m.`, `${h}:45 AM`]);
      cases.push([`half past ${hw}`, `${h}:30`]);
      cases.push([`quarter past ${hw}`, `${h}:15`]);
      cases.push([`a quarter to ${hw}`, `${prev}:45`]);
      cases.push([`ten past ${hw}`, `${h}:10`]);
      cases.push([`twenty minutes to ${hw}`, `${prev}:40`]);
    }
    for (const h of [6, 13, 14, 17, 21, 23]) cases.push([`${englishNumbers.cardinal(h)} hundred hours`, `${String(h).padStart(2, '0')}:00`]);
    cases.push(
      ['meet at seven thirty pm.', 'meet at 7:30 PM.'],
      ['TEN AM', '10 AM'],
      ['two to three days', 'two to three days'],
      ['five to six p m', '5:55 PM'],
      ['zero six thirty hours', '06:30'],
    );
    check(cases);
  });

  it('phone-style digit strings: digits one by one, "oh" after the first, double/triple, "eight hundred"', () => {
    const cases: Array<[string, string]> = [];
    let s = 11;
    for (let i = 0; i < 110; i++) {
      const length = 3 + (i % 10);
      let digits = '';
      for (let d = 0; d < length; d++) {
        s = (s * 1103515245 + 12345) % 2147483648;
        digits += String(s % 10);
      }
      const spoken = [...digits].map((d, at) => (d === '0' && at > 0 && i % 2 === 0 ? 'oh' : DIGIT_WORDS[Number(d)])).join(' ');
      cases.push([`call ${spoken} now`, `call ${digits} now`]);
    }
    cases.push(
      ['one eight hundred five five five one two one two', '18005551212'],
      ['double five six', '556'],
      ['four triple seven', '4777'],
      ['forty two forty two forty two forty two', '42424242'],
      ['five six', 'five six'],
      ['oh five five', 'oh five five'],
      ['one two, three four', 'one two, three four'],
      ['nine one one.', '911.'],
    );
    check(cases);
  });

  it('words that name what every object inherits (constructor, toString, __proto__) are words, not numbers', () => {
    check([
      ['the constructor', 'the constructor'],
      ['twenty constructor', '20 constructor'],
      ['three __proto__', 'three __proto__'],
      ['one toString', 'one toString'],
      ['five valueOf dollars', 'five valueOf dollars'],
      ['twenty five hasOwnProperty', '25 hasOwnProperty'],
    ], 0);
  });

  it('keeps word indices: a number over several words names its first and last word', () => {
    const tokens = englishInverseNumbers.normalise(['it', 'costs', 'twenty', 'five', 'dollars', 'today']);
    assert.deepEqual(tokens, [
      { text: 'it', from: 0, to: 0, numeric: false },
      { text: 'costs', from: 1, to: 1, numeric: false },
      { text: '$25', from: 2, to: 4, numeric: true },
      { text: 'today', from: 5, to: 5, numeric: false },
    ]);
  });
});
