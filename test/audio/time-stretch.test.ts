/** WSOLA time stretching: length scales by 1/tempo, pitch and loudness stay, chunking does not matter. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { concatFloat32 } from '../../src/audio/channel-mix.js';
import { TimeStretcher, timeStretch } from '../../src/audio/time-stretch.js';

const RATE = 24000;

function sine(hz: number, seconds: number): Float32Array {
  const out = new Float32Array(Math.round(seconds * RATE));
  for (let i = 0; i < out.length; i++) out[i] = 0.5 * Math.sin((2 * Math.PI * hz * i) / RATE);
  return out;
}

/** Upward zero crossings per second over the middle of the signal: its frequency. */
function frequency(samples: Float32Array): number {
  const from = Math.floor(samples.length * 0.2);
  const to = Math.floor(samples.length * 0.8);
  let crossings = 0;
  for (let i = from + 1; i < to; i++) if (samples[i - 1]! < 0 && samples[i]! >= 0) crossings++;
  return crossings / ((to - from) / RATE);
}

function rms(samples: Float32Array): number {
  const mid = samples.subarray(Math.floor(samples.length * 0.2), Math.floor(samples.length * 0.8));
  return Math.sqrt(mid.reduce((sum, v) => sum + v * v, 0) / mid.length);
}

function stretchAll(input: Float32Array, tempo: number, chunk: number): Float32Array {
  const s = new TimeStretcher(tempo, RATE);
  const parts: Float32Array[] = [];
  for (let at = 0; at < input.length; at += chunk) parts.push(s.push(input.subarray(at, at + chunk)));
  parts.push(s.flush());
  return concatFloat32(parts);
}

describe('TimeStretcher', () => {
  for (const tempo of [0.5, 2, 1.5, 0.8]) {
    it(`tempo ${tempo}: ${1 / tempo}x the length, the same pitch and loudness`, () => {
      const input = sine(220, 2);
      const out = stretchAll(input, tempo, 4096);
      assert.equal(out.length, Math.round(input.length / tempo));
      assert.ok(Math.abs(frequency(out) - 220) < 3, `${frequency(out)} Hz`);
      assert.ok(Math.abs(rms(out) / rms(input) - 1) < 0.1, `rms ratio ${rms(out) / rms(input)}`);
    });
  }

  it('gives the same samples however the input is chunked', () => {
    const input = sine(180, 1.3);
    const whole = stretchAll(input, 1.7, input.length);
    for (const chunk of [1, 333, 4096]) assert.deepEqual(stretchAll(input, 1.7, chunk), whole, `chunks of ${chunk}`);
  });

  it('streams: output comes before the input ends, and nothing is lost at either end of a short input', async () => {
    async function* pieces() {
      for (let i = 0; i < 10; i++) yield sine(200, 0.1);
    }
    const lengths: number[] = [];
    for await (const out of timeStretch(pieces(), 2, RATE)) lengths.push(out.length);
    assert.ok(lengths.length > 2, `${lengths.length} pieces`);
    assert.equal(lengths.reduce((a, b) => a + b, 0), Math.round((10 * 0.1 * RATE) / 2));
    const tiny = stretchAll(new Float32Array(10).fill(0.1), 0.5, 10);
    assert.equal(tiny.length, 20);
  });

  it('refuses a tempo that is not positive', () => {
    assert.throws(() => new TimeStretcher(0, RATE), RangeError);
    assert.throws(() => new TimeStretcher(Number.NaN, RATE), RangeError);
  });
});
