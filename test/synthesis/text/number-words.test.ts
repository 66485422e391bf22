import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { germanNumbers } from '../../../src/synthesis/text/number-words/de.js';
import { englishNumbers } from '../../../src/synthesis/text/number-words/en.js';
import { spanishNumbers } from '../../../src/synthesis/text/number-words/es.js';
import { frenchNumbers } from '../../../src/synthesis/text/number-words/fr.js';
import { HINDI_0_TO_99, hindiNumbers } from '../../../src/synthesis/text/number-words/hi.js';
import type { NumberWords } from '../../../src/synthesis/text/number-words/types.js';

function table(name: string, numbers: NumberWords, kind: 'cardinal' | 'ordinal' | 'year', cases: [number, string][]) {
  describe(`${name} ${kind}`, () => {
    for (const [n, words] of cases) {
      test(`${n} → ${words}`, () => assert.equal(numbers[kind](n).normalize('NFC'), words.normalize('NFC')));
    }
  });
}

table('en', englishNumbers, 'cardinal', [
  [0, 'zero'], [7, 'seven'], [13, 'thirteen'], [21, 'twenty-one'], [40, 'forty'], [99, 'ninety-nine'],
  [100, 'one hundred'], [101, 'one hundred one'], [123, 'one hundred twenty-three'], [1000, 'one thousand'],
  [1001, 'one thousand one'], [21000, 'twenty-one thousand'], [1_000_000, 'one million'],
  [1_234_567, 'one million two hundred thirty-four thousand five hundred sixty-seven'], [2_000_000_000, 'two billion'],
]);
table('en', englishNumbers, 'ordinal', [
  [1, 'first'], [2, 'second'], [3, 'third'], [4, 'fourth'], [5, 'fifth'], [8, 'eighth'], [9, 'ninth'], [12, 'twelfth'],
  [20, 'twentieth'], [21, 'twenty-first'], [22, 'twenty-second'], [100, 'one hundredth'], [101, 'one hundred first'],
]);
table('en', englishNumbers, 'year', [
  [1999, 'nineteen ninety-nine'], [1905, 'nineteen oh five'], [1900, 'nineteen hundred'], [2000, 'two thousand'],
  [2005, 'two thousand five'], [2010, 'twenty ten'], [2024, 'twenty twenty-four'], [1066, 'ten sixty-six'],
]);

table('de', germanNumbers, 'cardinal', [
  [0, 'null'], [1, 'eins'], [16, 'sechzehn'], [17, 'siebzehn'], [21, 'einundzwanzig'], [30, 'dreißig'],
  [99, 'neunundneunzig'], [100, 'einhundert'], [101, 'einhunderteins'], [121, 'einhunderteinundzwanzig'],
  [1000, 'eintausend'], [1999, 'eintausendneunhundertneunundneunzig'], [21000, 'einundzwanzigtausend'],
  [101000, 'einhunderteintausend'], [1_000_000, 'eine Million'], [2_500_000, 'zwei Millionen fünfhunderttausend'],
  [3_000_000_000, 'drei Milliarden'],
]);
table('de', germanNumbers, 'ordinal', [
  [1, 'erste'], [2, 'zweite'], [3, 'dritte'], [7, 'siebte'], [8, 'achte'], [15, 'fünfzehnte'], [19, 'neunzehnte'],
  [20, 'zwanzigste'], [21, 'einundzwanzigste'], [100, 'einhundertste'], [101, 'einhunderterste'],
]);
table('de', germanNumbers, 'year', [
  [1999, 'neunzehnhundertneunundneunzig'], [1100, 'elfhundert'], [1900, 'neunzehnhundert'], [1905, 'neunzehnhundertfünf'],
  [2000, 'zweitausend'], [2024, 'zweitausendvierundzwanzig'],
]);

table('fr', frenchNumbers, 'cardinal', [
  [0, 'zéro'], [1, 'un'], [16, 'seize'], [17, 'dix-sept'], [21, 'vingt et un'], [22, 'vingt-deux'], [61, 'soixante et un'],
  [70, 'soixante-dix'], [71, 'soixante et onze'], [77, 'soixante-dix-sept'], [80, 'quatre-vingts'], [81, 'quatre-vingt-un'],
  [90, 'quatre-vingt-dix'], [91, 'quatre-vingt-onze'], [99, 'quatre-vingt-dix-neuf'], [100, 'cent'], [101, 'cent un'],
  [200, 'deux cents'], [201, 'deux cent un'], [1000, 'mille'], [2000, 'deux mille'], [80_000, 'quatre-vingt mille'],
  [200_000, 'deux cent mille'], [1_000_000, 'un million'], [80_000_000, 'quatre-vingts millions'],
  [1999, 'mille neuf cent quatre-vingt-dix-neuf'],
]);
table('fr', frenchNumbers, 'ordinal', [
  [1, 'premier'], [2, 'deuxième'], [4, 'quatrième'], [5, 'cinquième'], [9, 'neuvième'], [21, 'vingt et unième'],
  [80, 'quatre-vingtième'], [100, 'centième'], [1000, 'millième'],
]);
test('fr feminine: une, vingt et une, première', () => {
  assert.equal(frenchNumbers.cardinal(1, 'feminine'), 'une');
  assert.equal(frenchNumbers.cardinal(21, 'feminine'), 'vingt et une');
  assert.equal(frenchNumbers.ordinal(1, 'feminine'), 'première');
});

table('es', spanishNumbers, 'cardinal', [
  [0, 'cero'], [1, 'uno'], [15, 'quince'], [16, 'dieciséis'], [21, 'veintiuno'], [22, 'veintidós'], [30, 'treinta'],
  [31, 'treinta y uno'], [99, 'noventa y nueve'], [100, 'cien'], [101, 'ciento uno'], [115, 'ciento quince'],
  [500, 'quinientos'], [700, 'setecientos'], [900, 'novecientos'], [1000, 'mil'], [2000, 'dos mil'],
  [21_000, 'veintiún mil'], [101_000, 'ciento un mil'], [1_000_000, 'un millón'], [2_000_000, 'dos millones'],
  [21_000_000, 'veintiún millones'], [1_000_000_000, 'mil millones'], [1999, 'mil novecientos noventa y nueve'],
]);
table('es', spanishNumbers, 'ordinal', [
  [1, 'primero'], [3, 'tercero'], [10, 'décimo'], [11, 'undécimo'], [13, 'decimotercero'], [21, 'vigésimo primero'],
]);
test('es gender: un, una, doscientas', () => {
  assert.equal(spanishNumbers.cardinal(1, 'masculine'), 'un');
  assert.equal(spanishNumbers.cardinal(21, 'masculine'), 'veintiún');
  assert.equal(spanishNumbers.cardinal(21, 'feminine'), 'veintiuna');
  assert.equal(spanishNumbers.cardinal(200, 'feminine'), 'doscientas');
  assert.equal(spanishNumbers.ordinal(1, 'feminine'), 'primera');
});

table('hi', hindiNumbers, 'cardinal', [
  [0, 'शून्य'], [5, 'पाँच'], [21, 'इक्कीस'], [29, 'उनतीस'], [45, 'पैंतालीस'], [67, 'सड़सठ'], [79, 'उन्यासी'],
  [99, 'निन्यानबे'], [100, 'एक सौ'], [123, 'एक सौ तेईस'], [1000, 'एक हज़ार'], [2024, 'दो हज़ार चौबीस'],
  [100_000, 'एक लाख'], [250_000, 'दो लाख पचास हज़ार'], [10_000_000, 'एक करोड़'], [1_000_000_000, 'एक अरब'],
]);
table('hi', hindiNumbers, 'ordinal', [[1, 'पहला'], [2, 'दूसरा'], [4, 'चौथा'], [5, 'पाँचवाँ'], [6, 'छठा'], [21, 'इक्कीसवाँ']]);
table('hi', hindiNumbers, 'year', [[1999, 'उन्नीस सौ निन्यानबे'], [1947, 'उन्नीस सौ सैंतालीस'], [2024, 'दो हज़ार चौबीस']]);

test('hi has one distinct word for each of 0..99, all in Devanagari', () => {
  assert.equal(HINDI_0_TO_99.length, 100);
  assert.equal(new Set(HINDI_0_TO_99).size, 100);
  for (const w of HINDI_0_TO_99) assert.match(w, /^[\u0900-\u097F]+$/u);
});
