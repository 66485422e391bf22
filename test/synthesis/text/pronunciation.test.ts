import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ipaToRespelling } from '../../../src/synthesis/text/ipa-respelling.js';
import { applyPronunciationDicts } from '../../../src/synthesis/text/pronunciation.js';

const dict = (...items: [string, string][]) => ({ items: items.map(([word, pronunciation]) => ({ word, pronunciation })) });

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
