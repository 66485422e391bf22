import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { splitSentences } from '../../../src/synthesis/text/sentences.js';

const CASES: [string, string, string[]][] = [
  ['en', 'Hello there. How are you? I am fine!', ['Hello there.', 'How are you?', 'I am fine!']],
  ['en', 'Mr. Smith met Dr. Jones. They talked.', ['Mr. Smith met Dr. Jones.', 'They talked.']],
  ['en', 'Pi is 3.14 and we meet at 10.30 today. Fine.', ['Pi is 3.14 and we meet at 10.30 today.', 'Fine.']],
  ['en', 'The U.S. economy grew. Prices fell.', ['The U.S. economy grew.', 'Prices fell.']],
  ['en', 'Fruit, e.g. apples. Or i.e. pears.', ['Fruit, e.g. apples.', 'Or i.e. pears.']],
  ['en', 'J. R. R. Tolkien wrote it. Yes.', ['J. R. R. Tolkien wrote it.', 'Yes.']],
  ['en', 'She lives on St. Mark Road. Nice.', ['She lives on St. Mark Road.', 'Nice.']],
  ['en', 'Apples, pears, etc. But not plums.', ['Apples, pears, etc.', 'But not plums.']],
  ['en', 'Apples, pears, etc. are fruit.', ['Apples, pears, etc. are fruit.']],
  ['en', 'It weighs approx. five kilos.', ['It weighs approx. five kilos.']],
  ['en', 'Wait... what? Well… fine. OK', ['Wait... what?', 'Well… fine.', 'OK']],
  ['en', 'Hmm... and then?', ['Hmm... and then?']],
  ['en', 'He said "Stop." Then he left.', ['He said "Stop."', 'Then he left.']],
  ['en', 'Really?! Yes!!', ['Really?!', 'Yes!!']],
  ['en', '  Spaces\n\n  everywhere.   Here  ', ['Spaces everywhere.', 'Here']],
  ['en', 'No terminal punctuation', ['No terminal punctuation']],
  ['en', '   ', []],
  ['en', '...', ['...']],
  ['hi', 'मेरा नाम राम है। आप कैसे हैं? ठीक।', ['मेरा नाम राम है।', 'आप कैसे हैं?', 'ठीक।']],
  ['hi', 'पहला वाक्य।दूसरा वाक्य॥', ['पहला वाक्य।', 'दूसरा वाक्य॥']],
  ['ar', 'كيف حالك؟ أنا بخير.', ['كيف حالك؟', 'أنا بخير.']],
  ['zh', '你好。我很好！谢谢？', ['你好。', '我很好！', '谢谢？']],
  ['de', 'Am 2. Juni war es warm. Dann regnete es.', ['Am 2. Juni war es warm.', 'Dann regnete es.']],
  ['fr', 'Il est parti ! Vraiment ? Oui.', ['Il est parti !', 'Vraiment ?', 'Oui.']],
];

describe('splitSentences', () => {
  for (const [language, input, expected] of CASES) {
    test(`${language}: ${JSON.stringify(input)}`, () => assert.deepEqual(splitSentences(input, language), expected));
  }
});

describe('splitSentences: long sentences', () => {
  const clauses = Array.from({ length: 40 }, (_, i) => `clause number ${i} is here, and it goes on`);
  const long = `${clauses.join('; ')}.`;

  test('no piece exceeds maxChars, nothing is lost, cuts fall after a clause mark', () => {
    for (const max of [60, 100, 400]) {
      const pieces = splitSentences(long, 'en', max);
      assert.ok(pieces.length > 1);
      for (const p of pieces) assert.ok(p.length <= max, `${p.length} > ${max}: ${p}`);
      assert.equal(pieces.join(' '), long);
      for (const p of pieces.slice(0, -1)) assert.match(p, /[;,]$/);
    }
  });

  test('prefers ; over , when both fit', () => {
    const pieces = splitSentences(long, 'en', 100);
    assert.ok(pieces.slice(0, -1).every((p) => p.endsWith(';')));
  });

  test('falls back to a space, then to a hard cut', () => {
    const words = Array.from({ length: 100 }, (_, i) => `word${i}`).join(' ');
    const byWords = splitSentences(words, 'en', 50);
    for (const p of byWords) assert.ok(p.length <= 50);
    assert.equal(byWords.join(' '), words);
    assert.ok(byWords.every((p) => !p.startsWith(' ') && /^word\d+/.test(p)));

    const blob = 'x'.repeat(250);
    const pieces = splitSentences(blob, 'en', 100);
    assert.deepEqual(pieces.map((p) => p.length), [100, 100, 50]);
  });

  test('a hard cut does not split a surrogate pair or a combining mark from its letter', () => {
    const text = `${'a'.repeat(99)}😀${'b'.repeat(10)}`;
    const pieces = splitSentences(text, 'en', 100);
    assert.equal(pieces.join(''), text);
    for (const p of pieces) assert.ok(p.length <= 100 && !/^[\uDC00-\uDFFF]/.test(p));
    const hindi = 'कि'.repeat(80); // क + ि (a vowel sign)
    for (const p of splitSentences(hindi, 'hi', 51)) assert.ok(!/^\p{M}/u.test(p));
  });

  test('Hindi long sentence splits at the comma', () => {
    const text = 'राम घर गया और खाना खाया, सीता बाज़ार गई और फल लाई।';
    const pieces = splitSentences(text, 'hi', 40);
    assert.equal(pieces.length, 2);
    assert.ok(pieces[0]!.endsWith(','));
  });
});
