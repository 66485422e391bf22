import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ipaToRespelling } from '../../../src/synthesis/text/ipa-respelling.js';
import { applyPronunciationDicts, compilePronunciationDict } from '../../../src/synthesis/text/pronunciation.js';

const dict = (...items: [string, string][]) => compilePronunciationDict(items.map(([word, pronunciation]) => ({ word, pronunciation })));

describe('applyPronunciationDicts', () => {
  test('whole words only, case-insensitively: "tomato" but not "tomatoes"', () => {
    const r = applyPronunciationDicts('Tomato, tomatoes, TOMATO and tomato.', [dict(['tomato', 'tomahto'])]);
    assert.equal(r.text, 'tomahto, tomatoes, tomahto and tomahto.');
    assert.deepEqual(r.phonemeSpans, []);
  });

  test('a later dictionary wins for the same word, whatever its case', () => {
    const dicts = [dict(['tomato', 'first']), dict(['Tomato', 'second'])];
    assert.equal(applyPronunciationDicts('tomato', dicts).text, 'second');
    assert.equal(applyPronunciationDicts('tomato', [...dicts].reverse()).text, 'first');
  });

  test('multi-word entries, across any whitespace, longest first', () => {
    const r = applyPronunciationDicts('New York and new\n  york city.', [
      dict(['new york', 'N Y'], ['New York City', 'the big apple']),
    ]);
    assert.equal(r.text, 'N Y and the big apple.');
  });

  test('Unicode-aware boundaries: Devanagari and accented words', () => {
    const dicts = [dict(['नमस्ते', 'नमस्कार'], ['café', 'kafay'])];
    assert.equal(applyPronunciationDicts('नमस्ते दुनिया, नमस्तेजी', dicts).text, 'नमस्कार दुनिया, नमस्तेजी');
    assert.equal(applyPronunciationDicts('Café cafés', dicts).text, 'kafay cafés');
    // No match inside a word even where \b would see one ("é" is not an ASCII word character).
    assert.equal(applyPronunciationDicts('écafé', dicts).text, 'écafé');
  });

  test('regex characters in words are literal', () => {
    const r = applyPronunciationDicts('I like C++ and C.', [dict(['C++', 'see plus plus'], ['a.b', 'x'])]);
    assert.equal(r.text, 'I like see plus plus and C.');
    assert.equal(applyPronunciationDicts('aXb', [dict(['a.b', 'x'])]).text, 'aXb');
  });

  test('IPA between slashes becomes a respelling and is reported as a phoneme span', () => {
    const r = applyPronunciationDicts('I say Tomato.', [dict(['tomato', '/təˈmɑːtoʊ/'])]);
    assert.equal(r.text, 'I say tuh-mahtoh.');
    assert.deepEqual(r.phonemeSpans, [{ start: 6, end: 16, word: 'Tomato', ipa: 'təˈmɑːtoʊ' }]);
    assert.equal(r.text.slice(6, 16), 'tuh-mahtoh');
  });

  test('a later item of the same dictionary wins; entries differing only in case or spacing are one word', () => {
    const d = dict(['New York', 'first'], ['new   YORK', 'second']);
    assert.equal(d.size, 1);
    assert.equal(applyPronunciationDicts('in New York.', [d]).text, 'in second.');
  });

  test('punctuation next to words: entries starting or ending with other characters', () => {
    const d = dict(['+x', 'plus ex'], ['C+', 'see plus'], ['e.g.', 'for example']);
    assert.equal(applyPronunciationDicts('a+x', [d]).text, 'aplus ex', 'no boundary needed before "+"');
    assert.equal(applyPronunciationDicts('C++', [d]).text, 'see plus+', 'no boundary needed after "+"');
    assert.equal(applyPronunciationDicts('xC+', [d]).text, 'xC+', 'a word boundary is needed before "C"');
    assert.equal(applyPronunciationDicts('See e.g. this', [d]).text, 'See for example this');
  });

  test('the longest entry of any dictionary wins; for the same entry the later dictionary', () => {
    const first = dict(['new york city', 'big apple']);
    const second = dict(['new york', 'N Y'], ['NEW YORK CITY', 'gotham']);
    assert.equal(applyPronunciationDicts('New York City and New York', [first, dict(['new york', 'N Y'])]).text, 'big apple and N Y');
    assert.equal(applyPronunciationDicts('New York City', [first, second]).text, 'gotham');
    assert.equal(applyPronunciationDicts('New York City', [second, first]).text, 'big apple');
  });

  test('a dictionary of 10,000 entries replaces the words it holds and leaves the others', () => {
    const entries = Array.from({ length: 10_000 }, (_, i): [string, string] => [`word${i}`, `say${i}`]);
    const big = dict(...entries, ['two words', 'pair']);
    assert.equal(big.size, 10_001);
    const r = applyPronunciationDicts('Word0, word5000 and WORD9999 but not word10000 or two  words.', [big]);
    assert.equal(r.text, 'say0, say5000 and say9999 but not word10000 or pair.');
  });

  test('no dictionaries or empty words leave the text as it is', () => {
    assert.equal(applyPronunciationDicts('Hello world', []).text, 'Hello world');
    assert.equal(applyPronunciationDicts('Hello world', [dict(['  ', 'x'])]).text, 'Hello world');
  });
});

describe('ipaToRespelling', () => {
  const cases: [string, string][] = [
    ['/təˈmɑːtoʊ/', 'tuh-mahtoh'],
    ['/ˈnaɪki/', 'nighkee'],
    ['ʃɛˈdʒuːl', 'she-jool'],
    ['/θɪŋk ðæt/', 'thingk that'],
  ];
  for (const [ipa, expected] of cases) test(`${ipa} → ${expected}`, () => assert.equal(ipaToRespelling(ipa), expected));
});
