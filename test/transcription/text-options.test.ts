/** The text options on timed words: numerals, redaction (PCI and PII), formatting, and keyword parsing. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidRequestError } from '../../src/errors.js';
import { applyTextOptions, applyTextOptionsToUtterance, textOptionsFor, type TextOptions } from '../../src/transcription/options/apply.js';
import { applyKeywordCasing, applyKeywordCasingToText, hotwordBoost, hotwordsOf, keywordsFromPrompt, parseKeywords } from '../../src/transcription/options/keywords.js';
import { applyToLiveTranscript, liveTranscriptionOptions } from '../../src/transcription/options/live.js';
import { luhnValid } from '../../src/transcription/options/redact.js';

const off: TextOptions = { language: 'en', numerals: false, format: false, redactPci: false, redactPii: false, pauseSeconds: 0.8 };

/** Words 0.3 s apart, each 0.25 s long; a "|" in the text is a 1 s pause. */
function timed(text: string) {
  let t = 0;
  const words: Array<{ word: string; start: number; end: number; speaker: string }> = [];
  for (const w of text.split(' ')) {
    if (w === '|') {
      t += 1;
      continue;
    }
    words.push({ word: w, start: t, end: t + 0.25, speaker: 'speaker_0' });
    t += 0.3;
  }
  return words;
}

const text = (words: Array<{ word: string }>) => words.map((w) => w.word).join(' ');

describe('text options', () => {
  it('numerals: digits, and a number over several words spans from its first start to its last end', () => {
    const words = timed('it was nineteen eighty four and I paid twenty five dollars');
    const out = applyTextOptions(words, { ...off, numerals: true });
    assert.equal(text(out.words), 'it was 1984 and I paid $25');
    const year = out.words[2]!;
    assert.deepEqual([year.start, year.end], [words[2]!.start, words[4]!.end]);
    const amount = out.words.at(-1)!;
    assert.deepEqual([amount.start, amount.end, amount.speaker], [words[8]!.start, words[10]!.end, 'speaker_0']);
    assert.equal(out.redactedEntities, undefined);
  });

  it("numerals 'auto' (the default): digits where the language has number rules, the words as spoken elsewhere", () => {
    const en = textOptionsFor({ numerals: 'auto' }, 'en', 0.8);
    assert.equal(en?.numerals, true);
    assert.equal(text(applyTextOptions(timed('twenty five dollars'), en!).words), '$25');
    assert.equal(textOptionsFor({ numerals: 'auto' }, 'de', 0.8), undefined, 'no German rules yet: nothing to apply');
    assert.equal(textOptionsFor({ numerals: 'auto', format: true }, 'de', 0.8)?.numerals, false);
    assert.equal(textOptionsFor({ numerals: false }, 'en', 0.8), undefined, 'false turns them off in English too');
    assert.equal(textOptionsFor({}, 'en', 0.8), undefined, 'unset (the OpenAI route) is off');
  });

  it('redact_pci: a spoken card number, expiry and CVV become placeholders, digits kept elsewhere only with numerals', () => {
    const words = timed('my card number is forty two forty two forty two forty two forty two forty two forty two forty two the expiry is twelve twenty eight and the security code is one two three thanks');
    const out = applyTextOptions(words, { ...off, redactPci: true });
    assert.equal(text(out.words), 'my card number is [CREDITCARDNUMBER_1] the expiry is [CREDITCARDEXPIRY_1] and the security code is [CREDITCARDCVV_1] thanks');
    assert.deepEqual(out.redactedEntities, ['[CREDITCARDNUMBER_1]', '[CREDITCARDEXPIRY_1]', '[CREDITCARDCVV_1]']);
    const card = out.words[4]!;
    assert.deepEqual([card.start, card.end], [words[4]!.start, words[19]!.end]);
  });

  it('redaction numbers stay stable for the same value and count up for another', () => {
    const out = applyTextOptions(timed('card 4111 1111 1111 1111, or 4242424242424242 again 4111111111111111.'), { ...off, redactPci: true });
    assert.equal(text(out.words), 'card [CREDITCARDNUMBER_1], or [CREDITCARDNUMBER_2] again [CREDITCARDNUMBER_1].');
    assert.deepEqual(out.redactedEntities, ['[CREDITCARDNUMBER_1]', '[CREDITCARDNUMBER_2]']);
  });

  it('a digit string failing Luhn is not a card number; bank account and routing numbers after their cue words are', () => {
    assert.equal(luhnValid('4242424242424241'), false);
    const out = applyTextOptions(timed('order 4242424242424241 account number 12345678 routing number 021000021'), { ...off, redactPci: true });
    assert.equal(text(out.words), 'order 4242424242424241 account number [BANKACCOUNTNUMBER_1] routing number [ROUTINGNUMBER_1]');
  });

  it('redact_pii: emails, phone numbers, national ids, dates of birth, street addresses; names are said not to be redacted', () => {
    const out = applyTextOptions(
      timed('mail john dot smith at example dot com or jane@example.org call me on five five five one two three four five six seven my social security number is 123-45-6789 I was born on march third nineteen eighty I live at 221 baker street apartment 4 ok'),
      { ...off, redactPii: true },
    );
    assert.equal(
      text(out.words),
      'mail [EMAIL_1] or [EMAIL_2] call me on [PHONENUMBER_1] my social security number is [NATIONALID_1] I was born on [DATEOFBIRTH_1] I live at [ADDRESS_1] ok',
    );
    assert.equal(out.namesRedacted, false);
  });

  it('format: sentence case, end punctuation at pauses, questions, all-capitals lowered with "I" kept', () => {
    const out = applyTextOptions(timed("HELLO THERE I'M FINE | WHAT IS YOUR NAME | THANKS"), { ...off, format: true });
    assert.equal(text(out.words), "Hello there I'm fine. What is your name? Thanks.");
    const cased = applyTextOptions(timed('we met Anna, | ok'), { ...off, format: true });
    assert.equal(text(cased.words), 'We met Anna. Ok.');
  });

  it('all options together, and on a live utterance without word times', () => {
    const out = applyTextOptions(timed('THE CVV IS ONE TWO THREE | IT COSTS TWENTY PERCENT MORE'), { ...off, numerals: true, format: true, redactPci: true });
    assert.equal(text(out.words), 'The cvv is [CREDITCARDCVV_1]. It costs 20% more.');
    const live = applyTextOptionsToUtterance({ transcript: 'MY CARD IS FOUR ONE ONE ONE ONE ONE ONE ONE ONE ONE ONE ONE ONE ONE ONE ONE', words: [], start: 1, end: 4 }, { ...off, redactPci: true });
    assert.equal(live.transcript, 'MY CARD IS [CREDITCARDNUMBER_1]');
    assert.deepEqual(live.words, []);
  });

  it('keywords: word:intensifier entries within bounds, default intensifier 1, each broken rule named', () => {
    assert.deepEqual(parseKeywords('Parley:3, speech server:1.5,Anna,NVIDIA:0,smiling:26'), [
      { word: 'Parley', weight: 3 },
      { word: 'speech server', weight: 1.5 },
      { word: 'Anna', weight: 1 },
      { word: 'NVIDIA', weight: 0 },
      { word: 'smiling', weight: 26 },
    ]);
    const rejects = (value: string, rule: RegExp) => assert.throws(() => parseKeywords(value), (e: unknown) => e instanceof InvalidRequestError && rule.test(e.message));
    rejects('a:-1', /numbers from 0 to 100 \(got "-1" for "a"\)/);
    rejects('a:101', /from 0 to 100/);
    rejects('a:x', /from 0 to 100/);
    rejects('a,,b', /no empty entry/);
    rejects('x'.repeat(101), /1 to 100 characters/);
    rejects('<script>', /only letters/);
    const list = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(',');
    assert.equal(parseKeywords(list(10_000)).length, 10_000, 'up to 10,000 keywords');
    rejects(list(10_001), /at most 10000 entries \(got 10001\)/);
    rejects(Array.from({ length: 2_000 }, () => 'x'.repeat(100)).join(','), /at most 200000 characters in all/);
    assert.deepEqual(keywordsFromPrompt('Names: Siobhan, Parley and Siobhan.').map((k) => k.word), ['Names', 'Siobhan', 'Parley', 'and']);
  });
});

describe('keyword intensifiers and casing', () => {
  it('an intensifier becomes a boost that grows through 1 to 3 and stops growing above 5', () => {
    const boosts = [0.5, 1, 2, 3, 5, 8, 20, 100].map(hotwordBoost);
    for (let i = 1; i < boosts.length; i++) assert.ok(boosts[i]! >= boosts[i - 1]!, `never falls: ${boosts.join(', ')}`);
    assert.ok(boosts[1]! < boosts[2]! && boosts[2]! < boosts[3]!, 'rises through the working range');
    assert.ok(hotwordBoost(100) <= 3 && hotwordBoost(100) - hotwordBoost(5) < 0.01, `saturates: 5 → ${hotwordBoost(5)}, 100 → ${hotwordBoost(100)}`);
    assert.deepEqual(hotwordsOf(parseKeywords('Blackwell,Jensen Huang:2,NVIDIA:0')), [
      { phrase: 'Blackwell', score: hotwordBoost(1) },
      { phrase: 'Jensen Huang', score: hotwordBoost(2) },
    ], 'intensifier 0: listed, not boosted');
  });

  it("the transcript writes each keyword's words in the keyword's casing, marks kept", () => {
    const keywords = parseKeywords('blackwell,Blackwell:2,Jensen Huang,CUDA,iPhone,the,Sonnet');
    const words = ['THE', 'BLACKWELL', 'chip,', 'jensen', 'HUANG.', 'Cuda', 'iphone', 'BLACK', '"sonnet"'].map((word, i) => ({ word, start: i, end: i + 0.5 }));
    assert.deepEqual(applyKeywordCasing(words, keywords).map((w) => w.word), ['THE', 'Blackwell', 'chip,', 'Jensen', 'Huang.', 'CUDA', 'iPhone', 'BLACK', '"Sonnet"']);
    assert.deepEqual(applyKeywordCasing(words, keywords)[1], { word: 'Blackwell', start: 1, end: 1.5 }, 'times kept');
    assert.equal(applyKeywordCasingToText('The blackwell rollout', keywords), 'The Blackwell rollout', 'a lower-case keyword leaves the sentence start capitalised');
    assert.equal(applyKeywordCasingToText('THE SECURITY CODE', parseKeywords('security code')), 'THE SECURITY CODE', 'lower-case keywords ask for no casing');
    assert.equal(applyKeywordCasingToText('THE SONNET', keywordsFromPrompt('Read the Sonnet')), 'THE SONNET', "an OpenAI prompt's words are boosted only");
    assert.equal(applyKeywordCasingToText('THE BLACKWELL', undefined), 'THE BLACKWELL');
  });

  it('a live transcript takes the casing too, after formatting', () => {
    const message = { transcript: 'GOOD MORNING NVIDIA', words: [{ word: 'GOOD', start: 0, end: 0.3 }, { word: 'MORNING', start: 0.3, end: 0.7 }, { word: 'NVIDIA', start: 0.8, end: 1.2 }], start: 0, end: 1.2, is_final: true };
    const plain = applyToLiveTranscript(message, liveTranscriptionOptions({ keywords: parseKeywords('NVIDIA,Morning') }, 'en', 0.8));
    assert.equal(plain.transcript, 'GOOD Morning NVIDIA');
    assert.deepEqual(plain.words.map((w) => w.word), ['GOOD', 'Morning', 'NVIDIA']);
    const formatted = applyToLiveTranscript(message, liveTranscriptionOptions({ keywords: parseKeywords('NVIDIA'), format: true }, 'en', 0.8));
    assert.equal(formatted.transcript, 'Good morning NVIDIA.');
  });
});
