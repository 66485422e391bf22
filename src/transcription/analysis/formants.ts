/**
 * Rough formant frequencies of a voiced frame from an LPC spectral envelope, and a vocal-tract
 * length estimate from them.
 *
 * LPC: pre-emphasis 0.97, Hamming window, autocorrelation method solved by Levinson-Durbin, order
 * 2 + fs/1000 (the usual rule of thumb: one pole pair per kHz of bandwidth plus two for the glottal
 * source and radiation). Formants are the peaks of 1/|A(e^jω)|² between 200 and 5500 Hz, lowest
 * first; peak picking on the envelope is cruder than root solving (close formants can merge), which
 * is why callers take the median over many frames.
 *
 * Vocal-tract length: a uniform tube closed at the glottis resonates at F_i = (2i − 1)·c / 4L, so a
 * least-squares fit of F_i against (2i − 1)/2 through the origin gives the formant spacing
 * ΔF = c / 2L (Reby & McComb 2003 "Anatomical constraints generate honesty", Anim. Behav. 65; the
 * "formant dispersion" of Fitch 1997). c = 35 000 cm/s (warm, humid air in the vocal tract).
 */

import { fftInPlace } from './fft.js';

const SPEED_OF_SOUND_CM = 35000;
const FFT_SIZE = 1024;

/** LPC coefficients a[0..order] (a[0] = 1) of `frame`, or undefined for a silent frame. */
export function lpcCoefficients(frame: ArrayLike<number>, order: number): Float64Array | undefined {
  const n = frame.length;
  const x = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const emphasised = frame[i]! - (i > 0 ? 0.97 * frame[i - 1]! : 0);
    x[i] = emphasised * (0.54 - 0.46 * Math.cos((2 * Math.PI * i) / (n - 1)));
  }
  const r = new Float64Array(order + 1);
  for (let lag = 0; lag <= order; lag++) {
    let sum = 0;
    for (let i = lag; i < n; i++) sum += x[i]! * x[i - lag]!;
    r[lag] = sum;
  }
  if (r[0]! <= 1e-12) return undefined;
  r[0] = r[0]! * (1 + 1e-9); // tiny white-noise floor keeps the recursion stable on pure tones
  const a = new Float64Array(order + 1);
  a[0] = 1;
  let error = r[0]!;
  for (let i = 1; i <= order; i++) {
    let acc = r[i]!;
    for (let j = 1; j < i; j++) acc += a[j]! * r[i - j]!;
    const k = -acc / error;
    const previous = a.slice();
    for (let j = 1; j < i; j++) a[j] = previous[j]! + k * previous[i - j]!;
    a[i] = k;
    error *= 1 - k * k;
    if (error <= 0) return undefined;
  }
  return a;
}

/** Frequencies (Hz) of the envelope peaks between 200 and 5500 Hz, lowest first, at most `max`. */
export function estimateFormants(frame: ArrayLike<number>, sampleRate: number, max = 4): number[] {
  const order = 2 + Math.round(sampleRate / 1000);
  const a = lpcCoefficients(frame, order);
  if (!a) return [];
  const re = new Float64Array(FFT_SIZE);
  const im = new Float64Array(FFT_SIZE);
  re.set(a);
  fftInPlace(re, im);
  const binHz = sampleRate / FFT_SIZE;
  const envelope = (k: number) => 1 / (re[k]! * re[k]! + im[k]! * im[k]! + 1e-18);
  const lo = Math.max(1, Math.ceil(200 / binHz));
  const hi = Math.min(FFT_SIZE / 2 - 1, Math.floor(5500 / binHz));
  const peaks: number[] = [];
  for (let k = lo; k <= hi && peaks.length < max; k++) {
    const y0 = envelope(k - 1);
    const y1 = envelope(k);
    const y2 = envelope(k + 1);
    if (y1 > y0 && y1 >= y2) {
      // Parabolic interpolation on the log envelope refines the peak to a fraction of a bin.
      const l0 = Math.log(y0);
      const l1 = Math.log(y1);
      const l2 = Math.log(y2);
      const denom = l0 - 2 * l1 + l2;
      const shift = denom < 0 ? (0.5 * (l0 - l2)) / denom : 0;
      peaks.push((k + shift) * binHz);
    }
  }
  return peaks;
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
