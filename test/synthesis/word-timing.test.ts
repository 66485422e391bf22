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
});
