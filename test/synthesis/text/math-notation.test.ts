import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readMathOperators } from '../../../src/synthesis/text/math-notation.js';
import { prepareText } from '../../../src/synthesis/text/prepare.js';

test('unambiguous operators fire glued or spaced; a wrong-glyph x between digits is times', () => {
  assert.equal(readMathOperators('5x3, 5 X 3, 5×3, 5 * 3, 2**8, 2 ^ 10, 6÷2, 1+1=2', 'en'), '5 times 3, 5 times 3, 5 times 3, 5 times 3, 2 to the power of 8, 2 to the power of 10, 6 divided by 2, 1 plus 1 equals 2');
});

test('- – − and / fire only spaced: ranges, ISO dates, phone numbers and fractions stay', () => {
  assert.equal(readMathOperators('5 - 3, 5 – 3, 5 − 3, 6 / 2', 'en'), '5 minus 3, 5 minus 3, 5 minus 3, 6 divided by 2');
  for (const kept of ['5-3', '2026-07-24', '12/04/2026', '020-4825-9631', '1/2', '1.2.3', 'x 5', '5 x', 'Box 5']) assert.equal(readMathOperators(kept, 'en'), kept);
});

test('the right operand may carry a currency sign; an operator never bridges a line break', () => {
  assert.equal(readMathOperators('2 x ₹99', 'en'), '2 times ₹99');
  assert.equal(readMathOperators('5\n- 3', 'en'), '5\n- 3');
  assert.equal(readMathOperators('5 -\n3', 'en'), '5 -\n3');
});

test('Hindi and Marathi words; any other language reads the English ones; Devanagari digits are operands', () => {
  assert.equal(readMathOperators('6 x 7 = 42', 'hi'), '6 गुणा 7 बराबर 42');
  assert.equal(readMathOperators('6 ÷ 2', 'mr'), '6 भागिले 2');
  assert.equal(readMathOperators('6 x 7', 'ta'), '6 times 7');
  assert.equal(readMathOperators('६ x ७', 'hi'), '६ गुणा ७');
});

test('prepareText: operators then numbers in the number language; words around them stay in the text language', () => {
  const options = { language: 'en', allowedLanguages: ['en'], dicts: [], normalize: true };
  assert.deepEqual(prepareText('Take 6 x 7 apples.', { ...options, mathNotation: true }).sentences, ['Take six times seven apples.']);
  assert.deepEqual(prepareText('Take 6 x 7 apples.', { ...options, mathNotation: true, numberLanguage: 'hi' }).sentences, ['Take छह गुणा सात apples.']);
  assert.deepEqual(prepareText('Take 6 x 7 apples.', options).sentences, prepareText('Take 6 x 7 apples.', { ...options, numberLanguage: 'auto' }).sentences);
  // A language without number rules leaves the numbers to the text language's reader.
  assert.deepEqual(prepareText('Take 7 apples.', { ...options, numberLanguage: 'ta' }).sentences, ['Take seven apples.']);
});
