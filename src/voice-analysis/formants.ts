/**
 * Formant frequencies of a voiced frame, and a vocal-tract length estimate from them.
 *
 * Formants follow Praat's "Sound: To Formant (burg)..." (Boersma & Weenink, Praat manual; the method
 * of most phonetic formant measurements):
 *   - the sound is brought to twice the formant ceiling. Praat's manual advises 5000 Hz for men and
 *     5500 Hz for women, so that about five formants lie below it. One ceiling serves every voice
 *     here, the men's 5000 Hz: the baseline's main question is whether a tract is male-length, and
 *     a ceiling too high for a long tract (5500 Hz over ~5.5 formants of a 17.5 cm tract) leaves
 *     the five pole pairs to split and merge formants and shortens the estimate, while a ceiling a
 *     little low for a short tract costs at most its F4 (a 14.5 cm tract has F1-F4 at
 *     0.6/1.8/3.0/4.2 kHz, all below 5000 Hz). This choice, and the 700 Hz bandwidth cut below, were
 *     made after seeing corpus output (at 5500 Hz one man's read speech measured 12.5 cm; at 500 Hz
 *     fewer frames kept three formants), so bench/analysis.ts is not a clean held-out test of them;
 *   - pre-emphasis from 50 Hz (x[i] − e^(−2π·50/fs)·x[i−1]), a Gaussian window of 50 ms physical
 *     length (25 ms effective), as Praat;
 *   - Burg's linear prediction of order 10, i.e. five formants below the ceiling (Praat's default
 *     "maximum number of formants" 5), solved for the polynomial's roots: a root z gives a formant
 *     at arg(z)·fs/2π with bandwidth −ln|z|·fs/π. Praat keeps roots between 50 Hz and ceiling − 50 Hz.
 * Unlike peaks of the LPC envelope (this file's earlier method, order 2 + fs/1000 = 18 at 16 kHz),
 * roots carry a bandwidth: roots wider than 700 Hz are dropped before numbering F1, F2, …, because
 * such a pole shapes the spectral tilt rather than marking a resonance (formant bandwidths of speech
 * are ~50-300 Hz at F1-F3 and below ~500 Hz at F4: Hawks & Miller 1995, JASA 97(2)).
 * Known limit: at F0 of about 500 Hz and above, harmonics are so sparse that the predictor can still
 * put its poles on single harmonics (a 500 Hz source through a 14.5 cm tube reads as ~20 cm); callers
 * take the median over many frames, and F0 tells such voices apart on its own.
 *
 * Vocal-tract length: a uniform tube closed at the glottis resonates at F_i = (2i − 1)·c / 4L, so a
 * least-squares fit of F_i against (2i − 1)/2 through the origin gives the formant spacing
 * ΔF = c / 2L (Reby & McComb 2003 "Anatomical constraints generate honesty", Anim. Behav. 65; the
 * "formant dispersion" of Fitch 1997). c = 35 000 cm/s (warm, humid air in the vocal tract).
 */

import { resampleForAnalysis } from './analysis-rate.js';

const SPEED_OF_SOUND_CM = 35000;

/** Formant ceiling, Hz (Praat's value for men, see above); the formant analysis runs at twice this rate. */
export const FORMANT_CEILING = 5000;
export const FORMANT_RATE = 2 * FORMANT_CEILING;
/** Two poles per formant, five formants below the ceiling. */
const LPC_ORDER = 10;
const PRE_EMPHASIS_FROM_HZ = 50;
/** Physical length of the Gaussian window, seconds (Praat: twice the 25 ms "window length"). */
export const FORMANT_WINDOW_S = 0.05;
/** Wider poles shape the spectral tilt and do not count as formants. */
const MAX_BANDWIDTH_HZ = 700;

export interface Formant {
  frequency: number;
  bandwidth: number;
}

/** Brings a signal to the formant analysis rate (2 × ceiling). */
export function toFormantRate(samples: Float32Array, sampleRate: number): Promise<Float32Array> {
  return resampleForAnalysis(samples, sampleRate, FORMANT_RATE);
}

/** Praat's Gaussian window, exp(−12·(t/T − ½)²) shifted and scaled to reach 0 at the edges. */
export function gaussianWindow(length: number): Float64Array {
  const edge = Math.exp(-12);
  const w = new Float64Array(length);
  for (let i = 0; i < length; i++) {
    const t = (i + 0.5) / length - 0.5;
    w[i] = (Math.exp(-12 * t * t) - edge) / (1 - edge);
  }
  return w;
}

/**
 * Burg's method: coefficients a[0..order] (a[0] = 1) of the prediction-error filter
 * A(z) = Σ a_k z^−k, or undefined for a silent or too short frame.
 */
export function burgCoefficients(x: ArrayLike<number>, order: number): Float64Array | undefined {
  const n = x.length;
  if (n <= order) return undefined;
  const f = Float64Array.from(x);
  const b = Float64Array.from(x);
  const a = new Float64Array(order + 1);
  a[0] = 1;
  let energy = 0;
  for (let i = 0; i < n; i++) energy += f[i]! * f[i]!;
  if (!(energy > 1e-20)) return undefined;
  for (let m = 1; m <= order; m++) {
    let num = 0;
    let den = 0;
    for (let i = m; i < n; i++) {
      num += f[i]! * b[i - 1]!;
      den += f[i]! * f[i]! + b[i - 1]! * b[i - 1]!;
    }
    if (!(den > 0)) return undefined;
    const k = (-2 * num) / den;
    const previous = a.slice();
    for (let j = 1; j <= m; j++) a[j] = previous[j]! + k * previous[m - j]!;
    // From the end down, so b[i − 1] is still the previous stage's value when b[i] and f[i] use it.
    for (let i = n - 1; i >= m; i--) {
      const fi = f[i]!;
      f[i] = fi + k * b[i - 1]!;
      b[i] = b[i - 1]! + k * fi;
    }
  }
  return a;
}

/**
 * Complex roots of z^p + c[1]·z^(p−1) + … + c[p] (c[0] = 1) by the Durand-Kerner iteration from
 * fixed starting points on a circle (deterministic), as [re, im] pairs.
 */
export function polynomialRoots(c: ArrayLike<number>): [number, number][] {
  const p = c.length - 1;
  const re = new Float64Array(p);
  const im = new Float64Array(p);
  for (let k = 0; k < p; k++) {
    // The classic start (0.4 + 0.9i)^k: distinct, off the real axis, neither on a symmetry line.
    const r = Math.pow(Math.hypot(0.4, 0.9), k);
    const angle = k * Math.atan2(0.9, 0.4);
    re[k] = r * Math.cos(angle);
    im[k] = r * Math.sin(angle);
  }
  for (let iteration = 0; iteration < 500; iteration++) {
    let moved = 0;
    for (let k = 0; k < p; k++) {
      // Value of the polynomial at z_k (Horner).
      let vr = 1;
      let vi = 0;
      for (let j = 1; j <= p; j++) {
        const nr = vr * re[k]! - vi * im[k]! + c[j]!;
        vi = vr * im[k]! + vi * re[k]!;
        vr = nr;
      }
      // Divided by Π_{j≠k} (z_k − z_j).
      let dr = 1;
      let di = 0;
      for (let j = 0; j < p; j++) {
        if (j === k) continue;
        const xr = re[k]! - re[j]!;
        const xi = im[k]! - im[j]!;
        const nr = dr * xr - di * xi;
        di = dr * xi + di * xr;
        dr = nr;
      }
      const mag = dr * dr + di * di;
      if (mag === 0) continue;
      const qr = (vr * dr + vi * di) / mag;
      const qi = (vi * dr - vr * di) / mag;
      re[k] = re[k]! - qr;
      im[k] = im[k]! - qi;
      moved = Math.max(moved, Math.hypot(qr, qi));
    }
    if (moved < 1e-12) break;
  }
  return Array.from(re, (r, k) => [r, im[k]!] as [number, number]);
}

/**
 * Formants (frequency and bandwidth, Hz) of one frame at FORMANT_RATE, lowest first, at most `max`.
 * `frame` is the raw (not pre-emphasised, not windowed) signal under the window.
 */
export function estimateFormants(frame: ArrayLike<number>, max = 4, window = gaussianWindow(frame.length)): Formant[] {
  const n = frame.length;
  const emphasis = Math.exp((-2 * Math.PI * PRE_EMPHASIS_FROM_HZ) / FORMANT_RATE);
  const x = new Float64Array(n);
  for (let i = 0; i < n; i++) x[i] = (frame[i]! - (i > 0 ? emphasis * frame[i - 1]! : 0)) * window[i]!;
  const a = burgCoefficients(x, LPC_ORDER);
  if (!a) return [];
  const formants: Formant[] = [];
  for (const [re, im] of polynomialRoots(a)) {
    if (!(im > 0)) continue;
    const frequency = (Math.atan2(im, re) * FORMANT_RATE) / (2 * Math.PI);
    const bandwidth = (-Math.log(Math.hypot(re, im)) * FORMANT_RATE) / Math.PI;
    if (frequency < 50 || frequency > FORMANT_CEILING - 50) continue;
    if (!(bandwidth > 0 && bandwidth <= MAX_BANDWIDTH_HZ)) continue;
    formants.push({ frequency, bandwidth });
  }
  return formants.sort((p, q) => p.frequency - q.frequency).slice(0, max);
}

/** Vocal-tract length in cm from formants F1..Fn (n ≥ 3), or undefined with fewer. */
export function vocalTractLength(formants: number[]): number | undefined {
  if (formants.length < 3) return undefined;
  let num = 0;
  let den = 0;
  formants.forEach((f, i) => {
    const k = (2 * i + 1) / 2;
    num += k * f;
    den += k * k;
  });
  const spacing = num / den;
  return SPEED_OF_SOUND_CM / (2 * spacing);
}
