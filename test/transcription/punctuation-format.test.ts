/**
 * `format=true` with a punctuation pack: the words go through the real punctuation engine
 * (sherpa-onnx OfflinePunctuation on a worker thread) with the hand-made CT-Transformer fixture,
 * whose mark after each word is a fixed table (hello, fine → comma; today → question mark;
 * morning, now → full stop; sherpa ends the text with a full stop). So what comes back follows
 * the model, not the rules: commas, and sentence ends with no pause.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { InferenceCore } from '../../src/engines/inference/inference-core.js';
import { createPunctuator } from '../../src/engines/server/sherpa-punctuation.js';
import { enginePackAs } from '../../src/models/families/index.js';
import type { Punctuator } from '../../src/engines/types.js';
import { AbortedError } from '../../src/errors.js';
import { applyTextOptionsWithModels, type TextOptions } from '../../src/transcription/options/apply.js';
import { punctuateWords } from '../../src/transcription/options/format.js';
import { applyToLiveTranscript, applyToLiveTranscriptWithModels, type LiveTranscriptionOptions } from '../../src/transcription/options/live.js';
import { ONLINE_PUNCTUATION_FIXTURE, punctuationFixturePack } from '../fixtures/punctuation-pack.js';

/** Words 0.3 s apart, no pause anywhere (the rules would make one sentence of them). */
function timed(text: string) {
  return text.split(' ').map((word, i) => ({ word, start: i * 0.3, end: i * 0.3 + 0.25, speaker: 'speaker_0' }));
}
const text = (words: Array<{ word: string }>) => words.map((w) => w.word).join(' ');
const options: TextOptions = { language: 'en', numerals: false, format: true, redactPci: false, redactPii: false, pauseSeconds: 0.8 };

describe('format with a punctuation pack', () => {
  let core: InferenceCore;
  let dir: string;
  let punctuator: Punctuator;
  before(async () => {
    const fixture = await punctuationFixturePack();
    dir = fixture.dir;
    core = new InferenceCore({ workers: 1 });
    punctuator = createPunctuator(core, enginePackAs('offline-punctuation', fixture.pack));
  });
  after(async () => {
    await core?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("puts the model's marks after the words and starts each of its sentences with a capital; times untouched", async () => {
    const words = timed('HELLO HOW ARE YOU TODAY I AM FINE THANK YOU');
    const formatted = await punctuateWords(words, punctuator);
    assert.equal(text(formatted!), 'Hello, how are you today? I am fine, thank you.');
    assert.deepEqual(formatted!.map((w) => [w.start, w.end, w.speaker]), words.map((w) => [w.start, w.end, w.speaker]));
  });

  it('with numerals and redaction: digits and placeholders are one word each for the model, and keep their form', async () => {
    const words = timed('okay my card is four two four two four two four two four two four two four two four two and i paid twenty five dollars now thanks');
    const outcome = await applyTextOptionsWithModels(words, { ...options, numerals: true, redactPci: true }, { punctuator });
    assert.equal(text(outcome.words), 'Okay, my card is [CREDITCARDNUMBER_1] and i paid $25 now. Thanks.');
    assert.deepEqual(outcome.redactedEntities, ['[CREDITCARDNUMBER_1]']);
  });

  it('falls back to the rules when the recogniser punctuates already, or the language is not the pack’s', async () => {
    const punctuated = timed('Hello there. How are you');
    assert.equal(await punctuateWords(punctuated, punctuator), undefined);
    assert.equal(text((await applyTextOptionsWithModels(punctuated, options, { punctuator })).words), 'Hello there. How are you?');
    // German is not among the pack's languages (zh, en): the rules format, with no comma after "hello".
    assert.equal(text((await applyTextOptionsWithModels(timed('hello wie geht es'), { ...options, language: 'de' }, { punctuator })).words), 'Hello wie geht es.');
    // No pack: the rules.
    assert.equal(text((await applyTextOptionsWithModels(timed('hello how are you today'), options, {})).words), 'Hello how are you today.');
  });

  it('formats by the rules when the punctuation model fails, and still stops for a client that left', async () => {
    const failing: Punctuator = { ...punctuator, punctuate: async () => Promise.reject(new Error('inference process died')) };
    const outcome = await applyTextOptionsWithModels(timed('hello how are you today'), options, { punctuator: failing });
    assert.equal(text(outcome.words), 'Hello how are you today.');
    const gone = new AbortController();
    gone.abort();
    const aborted: Punctuator = { ...punctuator, punctuate: async () => Promise.reject(new AbortedError()) };
    await assert.rejects(applyTextOptionsWithModels(timed('hello how are you today'), options, { punctuator: aborted, signal: gone.signal }), AbortedError);
  });

  it('stops waiting after waitMs: the rules format, and the late call is told to stop', async () => {
    let stopped: AbortSignal | undefined;
    const slow: Punctuator = {
      ...punctuator,
      punctuate: (text, { signal } = {}) =>
        new Promise((resolve) => {
          stopped = signal;
          setTimeout(() => resolve(punctuator.punctuate(text)), 300);
        }),
    };
    const outcome = await applyTextOptionsWithModels(timed('hello how are you today'), options, { punctuator: slow, waitMs: 20 });
    assert.equal(text(outcome.words), 'Hello how are you today.');
    assert.equal(stopped?.aborted, true, 'the call was aborted');
    // In time, the model's answer.
    const inTime = await applyTextOptionsWithModels(timed('hello how are you today'), options, { punctuator: slow, waitMs: 5_000 });
    assert.equal(text(inTime.words), 'Hello, how are you today?');
  });
});

/**
 * The online (CNN-BiLSTM) pack, which also restores case, through sherpa-onnx OnlinePunctuation
 * on a worker thread with the hand-made fixture (test/fixtures/models/fake-online-punct-en-cnn-bilstm-table):
 * john → "John." , london → "London,", hello → "hello,", today → "today?", bbc and tv in capitals.
 */
describe('format with the online punctuation pack (marks and case)', () => {
  let core: InferenceCore;
  let dir: string;
  let punctuator: Punctuator;
  before(async () => {
    const fixture = await punctuationFixturePack(ONLINE_PUNCTUATION_FIXTURE);
    dir = fixture.dir;
    core = new InferenceCore({ workers: 1 });
    punctuator = createPunctuator(core, enginePackAs('online-punctuation', fixture.pack));
  });
  after(async () => {
    await core?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("puts the model's marks and its capitals on the words: names, acronyms, sentence ends with no pause", async () => {
    const words = timed('HELLO MY NAME IS JOHN I LIVE IN LONDON HOW ARE YOU TODAY');
    const formatted = await punctuateWords(words, punctuator);
    assert.equal(text(formatted!), 'Hello, my name is John. I live in London, how are you today?');
    assert.deepEqual(formatted!.map((w) => [w.start, w.end]), words.map((w) => [w.start, w.end]), 'times untouched');
    // The model ends nothing here: the last word gets the full stop.
    assert.equal(text((await punctuateWords(timed('WE WATCH BBC TV ON MONDAY'), punctuator))!), 'We watch BBC TV on Monday.');
  });

  it('on a live socket: finals through the model (after numerals and redaction), partials by the rules', async () => {
    const live: LiveTranscriptionOptions = { text: { ...options, numerals: true, redactPci: true } };
    const heard = { transcript: 'HELLO MY NAME IS JOHN I PAID TWENTY FIVE DOLLARS TODAY', start: 0, end: 3.6, words: timed('HELLO MY NAME IS JOHN I PAID TWENTY FIVE DOLLARS TODAY') };
    const models = { punctuator, waitMs: 5_000 };
    const final = await applyToLiveTranscriptWithModels({ ...heard, is_final: true }, live, models);
    assert.equal(final.transcript, 'Hello, my name is John. I paid $25 today?');
    assert.deepEqual(final.redacted_entities, []);
    const dollars = final.words.find((w) => w.word.startsWith('$25'))!;
    assert.deepEqual([dollars.start, dollars.end], [heard.words[7]!.start, heard.words[9]!.end], 'a number over words spans them');
    const partial = await applyToLiveTranscriptWithModels({ ...heard, is_final: false }, live, models);
    assert.equal(partial.transcript, 'Hello my name is john I paid $25 today.');
    assert.deepEqual(partial, applyToLiveTranscript({ ...heard, is_final: false }, live), 'a partial is the rules\' work');
    // Without word times, the transcript alone.
    const bare = await applyToLiveTranscriptWithModels({ ...heard, words: [], is_final: true }, live, models);
    assert.equal(bare.transcript, 'Hello, my name is John. I paid $25 today?');
    assert.deepEqual(bare.words, []);
  });
});
