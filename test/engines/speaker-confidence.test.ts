import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { speakerConfidences } from '../../src/engines/speaker-confidence.js';

const v = (...xs: number[]) => Float32Array.from(xs);

describe('speakerConfidences', () => {
  it('is high for a segment near its own centroid, 0.5 between two, low when another speaker is nearer', () => {
    const got = speakerConfidences([
      { start: 0, end: 2, speaker: 0, embedding: v(1, 0, 0) },
      { start: 2, end: 4, speaker: 0, embedding: v(0.9, 0.1, 0) },
      { start: 4, end: 6, speaker: 1, embedding: v(0, 1, 0) },
      { start: 6, end: 8, speaker: 1, embedding: v(0, 0.95, 0.05) },
      // Given speaker 1 but as near speaker 0's voice as speaker 1's.
      { start: 8, end: 8.5, speaker: 1, embedding: v(1, 1, 0) },
      // Given speaker 0 but sounding like speaker 1.
      { start: 9, end: 9.2, speaker: 0, embedding: v(0, 1, 0) },
    ]);
    for (const c of got) assert.ok(c !== undefined && c >= 0 && c <= 1);
    assert.ok(got[0]! > 0.9 && got[2]! > 0.9, JSON.stringify(got));
    assert.ok(Math.abs(got[4]! - 0.5) < 0.1, JSON.stringify(got));
    assert.ok(got[5]! < 0.5, JSON.stringify(got));
  });

  it('a segment too short to embed takes its speaker mean; one speaker is scored against an unrelated voice', () => {
    const got = speakerConfidences([
      { start: 0, end: 1, speaker: 3, embedding: v(1, 0) },
      { start: 1, end: 2, speaker: 3, embedding: v(0.8, 0.6) },
      { start: 2, end: 2.1, speaker: 3 },
      { start: 3, end: 4, speaker: 4 },
    ]);
    assert.ok(got[0]! > 0.9);
    assert.equal(got[2], (got[0]! + got[1]!) / 2);
    assert.equal(got[3], undefined);
  });
});
