import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { extractAcousticFeatures } from '../../../src/transcription/analysis/acoustic-features.js';
import { toAnalysisRate } from '../../../src/transcription/analysis/analysis-rate.js';
import { trackPitch } from '../../../src/transcription/analysis/pitch-tracker.js';
import { declaredPitch, ESPEAK_MISSING, speak } from './espeak-voices.js';

const RATE = 16000;

function tone(f0: number, seconds: number, kind: 'sine' | 'sawtooth', rate = RATE): Float32Array {
  const out = new Float32Array(Math.round(seconds * rate));
  for (let i = 0; i < out.length; i++) {
    const phase = (f0 * i) / rate;
    out[i] = kind === 'sine' ? 0.5 * Math.sin(2 * Math.PI * phase) : 0.5 * (2 * (phase % 1) - 1);
  }
  return out;
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

describe('YIN pitch tracker', () => {
  for (const kind of ['sine', 'sawtooth'] as const) {
    for (const f0 of [110, 220, 330]) {
      it(`tracks a ${f0} Hz ${kind} within 2% on every frame`, () => {
        const frames = trackPitch(tone(f0, 0.5, kind), RATE);
        assert.ok(frames.length > 30);
        for (const frame of frames) {
          assert.ok(frame.f0 > 0, `frame at ${frame.time.toFixed(2)} s unvoiced`);
          assert.ok(Math.abs(frame.f0 - f0) / f0 < 0.02, `${frame.f0.toFixed(1)} Hz for ${f0} Hz`);
        }
      });
    }
  }

  it('finds no pitch in white noise', () => {
    let seed = 12345;
    const noise = new Float32Array(RATE / 2).map(() => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31 - 0.5;
    });
    const frames = trackPitch(noise, RATE);
    const voiced = frames.filter((f) => f.f0 > 0).length;
    assert.ok(voiced / frames.length < 0.1, `${voiced} of ${frames.length} noise frames voiced`);
  });

  it('tracks a 48 kHz recording after resampling to the analysis rate', async () => {
    const frames = trackPitch(await toAnalysisRate(tone(147, 0.5, 'sawtooth', 48000), 48000), RATE);
    assert.ok(Math.abs(median(frames.map((f) => f.f0)) - 147) / 147 < 0.02);
  });

  it('recovers the declared pitch range of espeak-ng voices', { skip: ESPEAK_MISSING }, async () => {
    for (const variant of ['m1', 'm3', 'f2', 'f3']) {
      const [base, top] = declaredPitch(variant);
      const { samples, sampleRate } = speak(`en+${variant}`, 'The quick brown fox jumps over the lazy dog. She sells sea shells by the shore.');
      const features = await extractAcousticFeatures(samples, sampleRate, [{ start: 0, end: samples.length / sampleRate }]);
      assert.ok(
        features.f0Median >= base && features.f0Median <= top,
        `en+${variant}: median F0 ${features.f0Median.toFixed(0)} Hz outside its declared ${base}-${top} Hz`,
      );
    }
  });
});
