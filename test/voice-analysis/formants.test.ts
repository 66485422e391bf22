import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  estimateFormants,
  FORMANT_RATE,
  FORMANT_WINDOW_S,
  polynomialRoots,
  toFormantRate,
  vocalTractLength,
} from '../../src/voice-analysis/formants.js';

const RATE = 16000;
const C = 35000;

/** Resonances of a uniform tube of `cm` closed at the glottis: (2i − 1)·c / 4L. */
const tube = (cm: number, n: number) => Array.from({ length: n }, (_, i) => ((2 * i + 1) * C) / (4 * cm));

/**
 * A vowel by the source-filter model (Fant 1960), at 16 kHz: an impulse train at `f0` through two
 * one-pole low-passes (the glottal pulse, −12 dB/octave), a first difference (lip radiation,
 * +6 dB/octave) and a cascade of second-order resonators at `formants` (Klatt 1980).
 */
function vowel(f0: number, formants: number[], seconds = 0.3): Float32Array {
  let x = new Float64Array(Math.round(seconds * RATE));
  const period = RATE / f0;
  for (let t = 0; t < x.length; t += period) x[Math.round(t)] = 1;
  for (let pass = 0; pass < 2; pass++) for (let n = 1; n < x.length; n++) x[n] = x[n]! + 0.97 * x[n - 1]!;
  for (let n = x.length - 1; n > 0; n--) x[n] = x[n]! - x[n - 1]!;
  for (const [i, f] of formants.entries()) {
    const bandwidth = 60 + 30 * i;
    const r = Math.exp((-Math.PI * bandwidth) / RATE);
    const a1 = 2 * r * Math.cos((2 * Math.PI * f) / RATE);
    const a2 = -r * r;
    const y = new Float64Array(x.length);
    for (let n = 0; n < x.length; n++) y[n] = x[n]! + a1 * (y[n - 1] ?? 0) + a2 * (y[n - 2] ?? 0);
    x = y;
  }
  const peak = x.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
  return Float32Array.from(x, (v) => (0.5 * v) / peak);
}

async function middleFrame(samples: Float32Array): Promise<Float32Array> {
  const y = await toFormantRate(samples, RATE);
  const length = Math.round(FORMANT_WINDOW_S * FORMANT_RATE);
  const from = Math.floor((y.length - length) / 2);
  return y.subarray(from, from + length);
}

describe('formant estimation (Burg LPC, root solving)', () => {
  it('finds the roots of a polynomial with known roots', () => {
    // (z − 0.5)(z + 0.25)(z² − 2·0.9·cos(0.6)·z + 0.81): two real roots and a pole pair 0.9·e^(±0.6i).
    const c1 = -2 * 0.9 * Math.cos(0.6);
    const quad = [1, c1, 0.81];
    const lin = [1, -0.25, -0.125]; // (z − 0.5)(z + 0.25)
    const poly = [0, 0, 0, 0, 0].map((_, k) => quad.reduce((s, q, i) => s + q * (lin[k - i] ?? 0), 0));
    const order = (a: [number, number], b: [number, number]) => Math.round(1e6 * (a[0] - b[0])) || a[1] - b[1];
    const roots = polynomialRoots(poly).sort(order);
    const want: [number, number][] = [
      [-0.25, 0],
      [0.5, 0],
      [0.9 * Math.cos(0.6), -0.9 * Math.sin(0.6)],
      [0.9 * Math.cos(0.6), 0.9 * Math.sin(0.6)],
    ];
    want.sort(order);
    roots.forEach(([re, im], i) => {
      assert.ok(Math.abs(re - want[i]![0]) < 1e-9 && Math.abs(im - want[i]![1]) < 1e-9, `root ${re}, ${im} vs ${want[i]}`);
    });
  });

  for (const [who, f0, cm] of [
    ['a man', 110, 17.5],
    ['a woman', 220, 14.5],
    ['a high female voice', 400, 14.5],
  ] as const) {
    it(`recovers F1-F4 and the tract length of ${who} (F0 ${f0} Hz, ${cm} cm tube)`, async () => {
      const truth = tube(cm, 4);
      const formants = estimateFormants(await middleFrame(vowel(f0, truth)));
      assert.equal(formants.length, 4, `found ${formants.map((f) => f.frequency.toFixed(0)).join(', ')} Hz`);
      formants.forEach((f, i) => {
        // Within 8% or a third of the harmonic spacing: LPC formants are pulled towards harmonics.
        const tolerance = Math.max(0.08 * truth[i]!, f0 / 3);
        assert.ok(Math.abs(f.frequency - truth[i]!) < tolerance, `F${i + 1} ${f.frequency.toFixed(0)} Hz, true ${truth[i]!.toFixed(0)} Hz`);
      });
      const length = vocalTractLength(formants.map((f) => f.frequency))!;
      assert.ok(Math.abs(length - cm) < 0.75, `${length.toFixed(2)} cm for a ${cm} cm tube`);
    });
  }

  it('gives no formants for silence', () => {
    assert.deepEqual(estimateFormants(new Float32Array(550)), []);
  });

  it('needs three formants for a length', () => {
    assert.equal(vocalTractLength([500, 1500]), undefined);
    assert.ok(Math.abs(vocalTractLength(tube(17, 3))! - 17) < 1e-9);
  });
});
