import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SpeechSegmenter, splitWithOverlap } from '../../src/transcription/speech-segments.js';

const RATE = 1000;

/** Times rounded to ms, so expectations can be written as decimals. */
const near = (spans: { start: number; end: number }[]) => spans.map((s) => ({ start: Math.round(s.start * 1000) / 1000, end: Math.round(s.end * 1000) / 1000 }));

function run(segmenter: SpeechSegmenter, spans: { start: number; end: number }[]) {
  return [...spans.flatMap((s) => segmenter.push(s)), ...segmenter.finish()];
}

describe('SpeechSegmenter', () => {
  it('merges short gaps, pads segments without crossing neighbours, and holds a segment until the next span', () => {
    const segmenter = new SpeechSegmenter(new Float32Array(10 * RATE), RATE, { mergeGapSeconds: 0.3, padSeconds: 0.2 });
    assert.deepEqual(segmenter.push({ start: 1, end: 2 }), []);
    assert.deepEqual(segmenter.push({ start: 2.25, end: 3 }), [], 'a 0.25 s gap merges');
    assert.deepEqual(near(segmenter.push({ start: 4, end: 5 })), [{ start: 0.8, end: 3.2 }]);
    assert.deepEqual(near(segmenter.push({ start: 5.34, end: 9.9 })), [{ start: 3.8, end: 5.17 }], 'padding stops halfway to the next span');
    assert.deepEqual(near(segmenter.finish()), [{ start: 5.17, end: 9.95 }], 'and halfway to the end of the audio');
  });

  it('cuts a long segment at its quietest point, every piece within the limit', () => {
    const samples = new Float32Array(70 * RATE).fill(0.5);
    samples.fill(0, 24 * RATE, 24 * RATE + 100); // a pause at 24 s
    samples.fill(0, 52 * RATE, 52 * RATE + 100); // and at 52 s
    const pieces = run(new SpeechSegmenter(samples, RATE, { maxSegmentSeconds: 30, padSeconds: 0 }), [{ start: 0, end: 70 }]);
    assert.equal(pieces.length, 3);
    assert.ok(pieces[0]!.end > 24 && pieces[0]!.end < 24.1, `first cut in the 24 s pause, got ${pieces[0]!.end}`);
    assert.ok(pieces[1]!.end > 52 && pieces[1]!.end < 52.1, `second cut in the 52 s pause, got ${pieces[1]!.end}`);
    pieces.forEach((p, i) => {
      assert.ok(p.end - p.start <= 30, `piece ${i} ≤ 30 s`);
      if (i > 0) assert.equal(p.start, pieces[i - 1]!.end);
    });
    assert.equal(pieces.at(-1)!.end, 70);
  });

  it('does not merge spans into a segment longer than the limit', () => {
    const pieces = run(new SpeechSegmenter(new Float32Array(60 * RATE), RATE, { maxSegmentSeconds: 30, padSeconds: 0 }), [
      { start: 0, end: 20 },
      { start: 20.1, end: 40 },
    ]);
    assert.deepEqual(pieces, [
      { start: 0, end: 20 },
      { start: 20.1, end: 40 },
    ]);
  });

  it('cuts long speech into pieces that share the overlap around each cut, each within the limit', () => {
    const samples = new Float32Array(70 * RATE).fill(0.5);
    samples.fill(0, 24 * RATE, 24 * RATE + 100); // a pause at 24 s
    const pieces = run(new SpeechSegmenter(samples, RATE, { maxSegmentSeconds: 30, padSeconds: 0, overlapSeconds: 2 }), [{ start: 0, end: 70 }]);
    assert.ok(pieces.length >= 3);
    assert.equal(pieces[0]!.start, 0);
    assert.equal(pieces.at(-1)!.end, 70);
    assert.ok(Math.abs((pieces[0]!.end + pieces[1]!.start) / 2 - 24.05) < 0.05, 'the first cut is in the pause, the overlap centred on it');
    pieces.forEach((p, i) => {
      assert.ok(p.end - p.start <= 30 + 1e-9, `piece ${i} ≤ 30 s`);
      if (i > 0) assert.ok(Math.abs(pieces[i - 1]!.end - p.start - 2) < 1e-9, `pieces ${i - 1} and ${i} share 2 s`);
    });
  });

  it('refuses an overlap that would leave a piece no room to advance', () => {
    assert.throws(() => splitWithOverlap({ start: 0, end: 100 }, new Float32Array(100), 1, 10, 5), RangeError);
    assert.deepEqual(splitWithOverlap({ start: 0, end: 8 }, new Float32Array(8), 1, 10, 2), [{ start: 0, end: 8 }], 'a span within the limit stays whole');
  });
});
