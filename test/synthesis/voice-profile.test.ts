import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { interpolatePitch } from '../../src/synthesis/espeak-voice-match.js';
import { bestSpeechWindow, measurePitch, semitonesBetween } from '../../src/synthesis/voice-profile.js';

describe('bestSpeechWindow', () => {
  it('keeps the stretch of at most maxSeconds with the most speech, cut at span edges', () => {
    // 4 s of speech, a long pause, then 12 s of speech in three spans.
    const spans = [
      { start: 0, end: 4 },
      { start: 30, end: 34 },
      { start: 34.5, end: 38.5 },
      { start: 39, end: 43 },
    ];
    assert.deepEqual(bestSpeechWindow(spans, 15), { start: 30, end: 43, speechSeconds: 12 });
    // A 10 s window: two spans and the start of the third (cut at the window's end).
    assert.deepEqual(bestSpeechWindow(spans, 10), { start: 30, end: 40, speechSeconds: 9 });
  });

  it('merges overlapping spans, prefers the earliest on a tie, and has nothing for no speech', () => {
    assert.deepEqual(bestSpeechWindow([{ start: 1, end: 3 }, { start: 2, end: 4 }, { start: 10, end: 13 }], 5), { start: 1, end: 4, speechSeconds: 3 });
    assert.equal(bestSpeechWindow([], 15), undefined);
  });
});

describe('interpolatePitch', () => {
  const points = new Map([
    [0, 100],
    [50, 150],
    [99, 250],
  ]);
  it('interpolates log F0 between the measured settings and clamps outside them', () => {
    assert.equal(interpolatePitch(points, 150), 50);
    const p = interpolatePitch(points, 200);
    assert.ok(p > 50 && p < 99, String(p));
    assert.equal(Math.round(50 + (Math.log(200 / 150) / Math.log(250 / 150)) * 49), p);
    assert.equal(interpolatePitch(points, 60), 0);
    assert.equal(interpolatePitch(points, 400), 99);
  });
});

describe('measurePitch', () => {
  it('gives the median F0 of a voiced signal', async () => {
    const rate = 16_000;
    const samples = new Float32Array(rate).map((_, i) => 0.3 * Math.sin((2 * Math.PI * 180 * i) / rate) + 0.15 * Math.sin((2 * Math.PI * 360 * i) / rate));
    const pitch = await measurePitch(samples, rate);
    assert.ok(Math.abs(semitonesBetween(pitch.medianHz, 180)) < 0.2, String(pitch.medianHz));
    assert.ok(pitch.voicedSeconds > 0.8, String(pitch.voicedSeconds));
  });
});
