import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createStreamingResampler, resample } from '../../src/audio/resample.js';
import { correlation, dominantFrequency, sine, twoTone } from './signal-fixtures.js';

function rms(samples: Float32Array): number {
  let sum = 0;
  for (const s of samples) sum += s * s;
  return Math.sqrt(sum / samples.length);
}

async function resampleInChunks(samples: Float32Array, from: number, to: number, sizes: number[]): Promise<Float32Array> {
  const resampler = await createStreamingResampler(from, to);
  const parts: Float32Array[] = [];
  for (let offset = 0, k = 0; offset < samples.length; k++) {
    const size = sizes[k % sizes.length];
    parts.push(resampler.process(samples.subarray(offset, offset + size)));
    offset += size;
  }
  parts.push(resampler.flush());
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

describe('resample', () => {
  for (const to of [44100, 8000]) {
    test(`1 kHz sine 22050 → ${to} Hz keeps frequency, length and phase`, async () => {
      const input = sine(1000, 22050, 2);
      const output = await resample(input, 22050, to);
      assert.equal(output.length, (input.length * to) / 22050);
      assert.ok(Math.abs(dominantFrequency(output, to) - 1000) <= to / 4096);
      // Output sample k is the input at time k/to: no delay, no gain change.
      const ideal = sine(1000, to, 2);
      assert.ok(correlation(output.subarray(100, -100), ideal.subarray(100, -100)) > 0.999);
      assert.ok(Math.abs(rms(output.subarray(100, -100)) / rms(ideal) - 1) < 0.01);
    });
  }

  test('downsampling removes content above the new Nyquist frequency', async () => {
    const output = await resample(sine(6000, 22050, 1), 22050, 8000);
    assert.ok(rms(output.subarray(100, -100)) < 0.005, `aliased energy ${rms(output)}`);
  });

  test('equal rates return the input unchanged', async () => {
    const input = twoTone(16000, 0.1);
    assert.equal(await resample(input, 16000, 16000), input);
  });

  test('streaming in uneven chunks equals resampling the whole signal', async () => {
    const input = twoTone(22050, 3);
    for (const to of [44100, 24000, 16000, 8000]) {
      const whole = await resample(input, 22050, to);
      const streamed = await resampleInChunks(input, 22050, to, [1, 333, 4096, 20000, 7, 2500]);
      assert.equal(streamed.length, whole.length);
      let maxDiff = 0;
      for (let i = 0; i < whole.length; i++) maxDiff = Math.max(maxDiff, Math.abs(whole[i] - streamed[i]));
      assert.ok(maxDiff < 1e-6, `${to} Hz: max difference ${maxDiff}`);
    }
  });

  test('a flushed resampler refuses more input; dispose is idempotent', async () => {
    const resampler = await createStreamingResampler(24000, 16000);
    resampler.process(new Float32Array(1000));
    resampler.flush();
    assert.throws(() => resampler.process(new Float32Array(10)));
    resampler.dispose();
    resampler.dispose();
    await assert.rejects(createStreamingResampler(0, 16000), RangeError);
  });

  test('resamplers release their WASM memory on flush', async () => {
    // WASM memory only grows, and shows in `external`: 3000 leaked resamplers add ~450 MB there,
    // released ones about 30 MB (the heap's working size).
    const before = process.memoryUsage().external;
    for (let i = 0; i < 3000; i++) {
      const resampler = await createStreamingResampler(24000, 22050);
      resampler.process(new Float32Array(2400));
      resampler.flush();
    }
    const grown = (process.memoryUsage().external - before) / 1e6;
    assert.ok(grown < 150, `external memory grew by ${grown.toFixed(0)} MB`);
  });
});
