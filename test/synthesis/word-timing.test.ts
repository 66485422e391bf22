/**
 * WordTimer on made audio: bursts of tone (speech) and silence at known times, so where each word
 * must fall is known exactly.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { concatFloat32 } from '../../src/audio/channel-mix.js';
import { WordTimer } from '../../src/synthesis/word-timing.js';

const RATE = 16_000;

/** Audio of [seconds, loud] spans. */
function audio(spans: [number, boolean][]): Float32Array {
  return concatFloat32(spans.map(([seconds, loud]) => Float32Array.from({ length: Math.round(seconds * RATE) }, (_, i) => (loud ? 0.5 * Math.sin((2 * Math.PI * 220 * i) / RATE) : 0))));
}

describe('WordTimer', () => {
  it('leaves out leading and trailing silence and puts phrases on either side of the pause', () => {
    const timer = new WordTimer('Hello there, friend.', 2, RATE);
    const samples = audio([[0.2, false], [0.6, true], [0.3, false], [0.4, true], [0.25, false]]);
    // Fed in uneven slices, as the engine hands them over.
    timer.observe(samples.subarray(0, 1234));
    timer.observe(samples.subarray(1234));
    const words = timer.words();
    assert.deepEqual(words.map((w) => w.word), ['Hello', 'there,', 'friend.']);
    // Offsets are seconds of the request: the piece starts 2 s in.
    assert.ok(Math.abs(words[0]!.start - 2.2) <= 0.011, JSON.stringify(words));
    assert.ok(Math.abs(words[1]!.end - 2.8) <= 0.011, JSON.stringify(words));
    assert.ok(Math.abs(words[2]!.start - 3.1) <= 0.011, JSON.stringify(words));
    assert.ok(Math.abs(words[2]!.end - 3.5) <= 0.011, JSON.stringify(words));
    assert.ok(words[0]!.end <= words[1]!.start + 1e-9, 'in order');
  });

  it('gives a longer word a longer share of its phrase', () => {
    const timer = new WordTimer('a extraordinary', 0, RATE);
    timer.observe(audio([[1, true]]));
    const [a, long] = timer.words();
    assert.ok(long!.end - long!.start > 3 * (a!.end - a!.start));
    assert.equal(long!.end, 1);
  });

  it('has no words for text without any, and times silence-only audio over its whole length', () => {
    assert.deepEqual(new WordTimer(' … ', 0, RATE).words(), []);
    const timer = new WordTimer('hm', 0, RATE);
    timer.observe(new Float32Array(RATE / 2));
    assert.deepEqual(timer.words(), [{ word: 'hm', start: 0, end: 0.5 }]);
  });

  it("takes an engine's word marks: each word from its first sound after the mark to its last sound before the next word", () => {
    // "one two three": marks at 0, 0.5 and 1.0 s; each word's sound begins 0.1 s after its mark
    // (the pause before it) and lasts 0.3 s.
    const timer = new WordTimer('One two three.', 1, RATE);
    timer.observe(audio([[0.1, false], [0.3, true], [0.2, false], [0.3, true], [0.2, false], [0.3, true], [0.1, false]]));
    timer.engineMarks([
      { start: 0, length: 3, seconds: 0 },
      { start: 4, length: 3, seconds: 0.5 },
      { start: 8, length: 5, seconds: 1.0 },
    ]);
    const words = timer.words();
    assert.deepEqual(words.map((w) => w.word), ['One', 'two', 'three.']);
    const near = (got: number, want: number) => assert.ok(Math.abs(got - want) <= 0.011, `${got} vs ${want}: ${JSON.stringify(words)}`);
    near(words[0]!.start, 1.1);
    near(words[0]!.end, 1.4);
    near(words[1]!.start, 1.6);
    near(words[1]!.end, 1.9);
    near(words[2]!.start, 2.1);
    near(words[2]!.end, 2.4);
  });

  it('shares a mark between a word and the unmarked word the engine spoke with it, by spoken length', () => {
    // eSpeak reports "in the" as one word: "the" has no mark of its own.
    const timer = new WordTimer('in the evening', 0, RATE);
    timer.observe(audio([[1.2, true]]));
    timer.engineMarks([
      { start: 0, length: 2, seconds: 0 },
      { start: 7, length: 7, seconds: 0.6 },
    ]);
    const [inWord, the, evening] = timer.words();
    assert.equal(inWord!.start, 0);
    assert.ok(the!.start > 0.15 && the!.start < 0.45, JSON.stringify(the));
    assert.equal(the!.end, 0.6);
    assert.equal(evening!.start, 0.6);
  });

  it('times from the audio alone when no word has a mark', () => {
    const timer = new WordTimer('a extraordinary', 0, RATE);
    timer.observe(audio([[1, true]]));
    timer.engineMarks([]);
    const [a, long] = timer.words();
    assert.ok(long!.end - long!.start > 3 * (a!.end - a!.start));
  });
});
