import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { extractAcousticFeatures } from '../../src/voice-analysis/acoustic-features.js';
import { toAnalysisRate } from '../../src/voice-analysis/analysis-rate.js';
import { estimateFrameF0, pitchFrameGeometry, trackPitch } from '../../src/voice-analysis/pitch-tracker.js';
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

/** Harmonic voice with F0 following `f0At` (Hz at time t), harmonic k at amplitude `amp(k)`, 12 harmonics below Nyquist. */
function voice(f0At: (t: number) => number, seconds: number, amp: (k: number) => number): Float32Array {
  const out = new Float32Array(Math.round(seconds * RATE));
  let phase = 0;
  for (let i = 0; i < out.length; i++) {
    const f0 = f0At(i / RATE);
    phase += f0 / RATE;
    let v = 0;
    for (let k = 1; k <= 12; k++) if (k * f0 < RATE / 2) v += amp(k) * Math.sin(2 * Math.PI * k * phase);
    out[i] = 0.2 * v;
  }
  return out;
}

function lcgNoise(length: number, level: number, seed = 12345): Float32Array {
  return new Float32Array(length).map(() => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return level * (2 * (seed / 2 ** 31) - 1);
  });
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

describe('pYIN pitch tracker', () => {
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

  it('stays on the fundamental when the 2nd harmonic is 20 dB stronger (plain YIN goes an octave up)', () => {
    // 140 Hz with a 5 Hz, ±2% vibrato; harmonic 1 at 0.1, harmonic 2 at 1, then 0.5/k.
    const f0At = (t: number) => 140 * (1 + 0.02 * Math.sin(2 * Math.PI * 5 * t));
    const x = voice(f0At, 1, (k) => (k === 1 ? 0.1 : k === 2 ? 1 : 0.5 / k));
    const geometry = pitchFrameGeometry(RATE);
    let yinOctaveUp = 0;
    let n = 0;
    for (let offset = 0; offset + geometry.frameLength <= x.length; offset += geometry.hop, n++) {
      const { f0 } = estimateFrameF0(x, offset, RATE, geometry);
      if (Math.abs(f0 / (2 * f0At((offset + geometry.frameLength / 2) / RATE)) - 1) < 0.03) yinOctaveUp++;
    }
    assert.ok(yinOctaveUp > n / 2, `the trap is not one: plain YIN went up on only ${yinOctaveUp} of ${n} frames`);
    const frames = trackPitch(x, RATE);
    assert.ok(frames.length > 90);
    for (const frame of frames) {
      const want = f0At(frame.time);
      assert.ok(Math.abs(frame.f0 / want - 1) < 0.03, `${frame.f0.toFixed(1)} Hz at ${frame.time.toFixed(2)} s for ${want.toFixed(1)} Hz`);
    }
  });

  for (const [from, to] of [
    [110, 220],
    [300, 150],
  ]) {
    it(`follows a glide from ${from} to ${to} Hz over 1 s without halving or doubling`, () => {
      const f0At = (t: number) => from * (to / from) ** Math.min(1, Math.max(0, t));
      const frames = trackPitch(voice(f0At, 1, (k) => 1 / k), RATE);
      assert.ok(frames.length > 90);
      for (const frame of frames) {
        const want = f0At(frame.time);
        assert.ok(Math.abs(frame.f0 / want - 1) < 0.03, `${frame.f0.toFixed(1)} Hz at ${frame.time.toFixed(2)} s for ${want.toFixed(1)} Hz`);
      }
    });
  }

  it('keeps noise between two voiced stretches unvoiced', () => {
    const tone1 = voice(() => 120, 0.5, (k) => 1 / k);
    const noise = lcgNoise(RATE, 0.3);
    const tone2 = voice(() => 120, 0.5, (k) => 1 / k);
    const x = new Float32Array(tone1.length + noise.length + tone2.length);
    x.set(tone1);
    x.set(noise, tone1.length);
    x.set(tone2, tone1.length + noise.length);
    const frames = trackPitch(x, RATE);
    // Frames wholly inside the noise (each frame reads 45 ms of audio).
    const inside = frames.filter((f) => f.time > 0.55 && f.time < 1.45);
    const voiced = inside.filter((f) => f.f0 > 0).length;
    assert.ok(voiced / inside.length < 0.1, `${voiced} of ${inside.length} noise frames voiced`);
    const tones = frames.filter((f) => f.time < 0.45 || f.time > 1.55);
    for (const f of tones) assert.ok(Math.abs(f.f0 / 120 - 1) < 0.02, `${f.f0.toFixed(1)} Hz at ${f.time.toFixed(2)} s in a 120 Hz tone`);
  });
});
