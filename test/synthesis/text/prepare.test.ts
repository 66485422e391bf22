import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidRequestError } from '../../../src/errors.js';
import { prepareText } from '../../../src/synthesis/text/prepare.js';
import { compilePronunciationDict } from '../../../src/synthesis/text/pronunciation.js';

const dict = (...items: [string, string][]) => compilePronunciationDict(items.map(([word, pronunciation]) => ({ word, pronunciation })));

test('dictionaries, then normalisation, then sentences', () => {
  const r = prepareText('Dr. Smith paid $3.50 for 2 tomatoes. The tomato cost 10%!', {
    language: 'en',
    allowedLanguages: ['en', 'hi'],
    dicts: [dict(['tomato', 'tomahto'])],
    normalize: true,
  });
  assert.equal(r.language, 'en');
  assert.deepEqual(r.sentences, [
    'Doctor Smith paid three dollars and fifty cents for two tomatoes.',
    'The tomahto cost ten percent!',
  ]);
});

test('dictionaries apply before normalisation: an entry can claim a number', () => {
  const r = prepareText('Call 911 now.', { language: 'en', allowedLanguages: ['en'], dicts: [dict(['911', 'nine one one'])], normalize: true });
  assert.deepEqual(r.sentences, ['Call nine one one now.']);
});

test('auto detects among the allowed languages and normalises in that language', () => {
  const r = prepareText('Il est 10h30. Le docteur a payé 3,50 €.', { language: 'auto', allowedLanguages: ['en', 'fr'], dicts: [], normalize: true });
  assert.equal(r.language, 'fr');
  assert.deepEqual(r.sentences, ['Il est dix heures trente.', 'Le docteur a payé trois euros cinquante.']);

  const hi = prepareText('मेरे पास 21 सेब हैं। धन्यवाद।', { language: 'auto', allowedLanguages: ['en', 'hi'], dicts: [], normalize: true });
  assert.equal(hi.language, 'hi');
  assert.deepEqual(hi.sentences, ['मेरे पास इक्कीस सेब हैं।', 'धन्यवाद।']);
});

test('normalize: false (eSpeak voices) keeps digits but still applies dictionaries and splits', () => {
  const r = prepareText('Es kostet 3,50 €.   Der Tomate geht es gut.', {
    language: 'de',
    allowedLanguages: ['de'],
    dicts: [dict(['Tomate', 'Tomahte'])],
    normalize: false,
  });
  assert.deepEqual(r.sentences, ['Es kostet 3,50 €.', 'Der Tomahte geht es gut.']);
});

test('a language tag with a region uses its base language', () => {
  const r = prepareText('21', { language: 'en-GB', allowedLanguages: ['en'], dicts: [], normalize: true });
  assert.equal(r.language, 'en');
  assert.deepEqual(r.sentences, ['twenty-one']);
});

test('long text comes back in pieces no longer than the limit', () => {
  const text = Array.from({ length: 50 }, (_, i) => `Sentence ${i + 1} has a few words, and then some more words after the comma`).join('. ');
  const r = prepareText(text, { language: 'en', allowedLanguages: ['en'], dicts: [], normalize: true, maxSentenceChars: 60 });
  assert.ok(r.sentences.length >= 50);
  for (const s of r.sentences) assert.ok(s.length > 0 && s.length <= 60, s);
  assert.equal(r.sentences[0], 'Sentence one has a few words,');
});

test('whitespace-only text gives no sentences', () => {
  assert.deepEqual(prepareText(' \n\t ', { language: 'en', allowedLanguages: ['en'], dicts: [], normalize: true }).sentences, []);
});

test('the length limit holds after dictionaries and after normalisation, naming the limit', () => {
  const base = { language: 'en', allowedLanguages: ['en'], normalize: true, maxChars: 100 };
  const long = 'x'.repeat(480);
  assert.throws(
    () => prepareText('a word and a word', { ...base, dicts: [dict(['word', long])] }),
    (err: unknown) => err instanceof InvalidRequestError && /after applying pronunciation_dicts.*limit of 100/.test(err.message),
  );
  // 40 characters of digits become far more words.
  assert.throws(
    () => prepareText('1234567 7654321 1234567 7654321 1234567', { ...base, dicts: [] }),
    (err: unknown) => err instanceof InvalidRequestError && /after normalisation.*limit of 100/.test(err.message),
  );
  assert.deepEqual(prepareText('Hello there.', { ...base, dicts: [dict(['there', 'over there'])] }).sentences, ['Hello over there.']);
});
