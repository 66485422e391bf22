/**
 * F0 tracking with YIN (de Cheveigné & Kawahara 2002, "YIN, a fundamental frequency estimator for
 * speech and music", JASA 111(4)): difference function, cumulative-mean normalisation, absolute
 * threshold, parabolic interpolation. Steps 1-5 of the paper; the "best local estimate" step 6 is
 * left out because the baseline only uses robust statistics (percentiles) of the track.
 *
 * Frames: 10 ms hop; each frame reads an integration window of 25 ms plus the longest lag
 * (20 ms at 50 Hz), i.e. 45 ms of audio, close to the usual 40 ms analysis frame.
 */

export interface PitchTrackOptions {
  /** Lowest F0 searched; 50 Hz is below the lowest modal adult male voice (~65 Hz). */
  minF0?: number;
  /** Highest F0 searched; 800 Hz covers infant cries (typically 350-600 Hz). */
  maxF0?: number;
  /** Frame hop in seconds. */
  hop?: number;
  /** Integration window in seconds. */
  window?: number;
  /**
   * YIN absolute threshold on the normalised difference. The paper uses 0.1 on clean studio speech;
   * 0.2 keeps breathy and noisy real-world voicing while rejecting unvoiced frames (their minima
   * sit around 0.5-1).
   */
  threshold?: number;
}

export interface PitchFrame {
  /** Centre of the frame in seconds from the start of the samples. */
  time: number;
  /** F0 in Hz, 0 when the frame is unvoiced. */
  f0: number;
  /** Normalised difference at the chosen lag: 0 = perfectly periodic, ~1 = noise. */
  aperiodicity: number;
}

const DEFAULTS = { minF0: 50, maxF0: 800, hop: 0.01, window: 0.025, threshold: 0.2 };

/** Geometry of the YIN frames for a sample rate, shared with the feature extractor. */
export function pitchFrameGeometry(sampleRate: number, options: PitchTrackOptions = {}) {
  const o = { ...DEFAULTS, ...options };
  const tauMin = Math.max(2, Math.floor(sampleRate / o.maxF0));
  const tauMax = Math.ceil(sampleRate / o.minF0);
  const window = Math.round(o.window * sampleRate);
  const hop = Math.round(o.hop * sampleRate);
  return { tauMin, tauMax, window, hop, frameLength: window + tauMax, threshold: o.threshold };
}

/**
 * Estimates F0 of the frame starting at `offset` (needs `frameLength` samples). Returns f0 = 0 when
 * no lag passes the threshold.
 */
export function estimateFrameF0(
  samples: Float32Array,
  offset: number,
  sampleRate: number,
  geometry: ReturnType<typeof pitchFrameGeometry>,
  scratch?: Float64Array,
): { f0: number; aperiodicity: number } {
  const { tauMin, tauMax, window, threshold } = geometry;
  const d = scratch ?? new Float64Array(tauMax + 2);
  // Step 2: difference function d(τ) = Σ (x_j − x_{j+τ})².
  for (let tau = 1; tau <= tauMax + 1; tau++) {
    let sum = 0;
    for (let j = 0; j < window; j++) {
      const diff = samples[offset + j]! - samples[offset + j + tau]!;
      sum += diff * diff;
    }
    d[tau] = sum;
  }
  // Step 3: cumulative mean normalised difference d'(τ) = d(τ)·τ / Σ_{1..τ} d.
  d[0] = 1;
  let running = 0;
  for (let tau = 1; tau <= tauMax + 1; tau++) {
    running += d[tau]!;
    d[tau] = running > 0 ? (d[tau]! * tau) / running : 1;
  }
  // Step 4: first lag under the threshold, then on to the bottom of that dip.
  let best = -1;
  for (let tau = tauMin; tau <= tauMax; tau++) {
    if (d[tau]! < threshold) {
      while (tau + 1 <= tauMax && d[tau + 1]! < d[tau]!) tau++;
      best = tau;
      break;
    }
  }
  if (best < 0) {
    let min = Infinity;
    for (let tau = tauMin; tau <= tauMax; tau++) if (d[tau]! < min) min = d[tau]!;
    return { f0: 0, aperiodicity: Math.min(1, min) };
  }
  // Step 5: parabolic interpolation of the dip for sub-sample period accuracy.
  const a = d[best - 1]!;
  const b = d[best]!;
  const c = d[best + 1]!;
  const denom = a - 2 * b + c;
  const shift = denom > 0 ? (0.5 * (a - c)) / denom : 0;
  const period = best + Math.max(-0.5, Math.min(0.5, shift));
  return { f0: sampleRate / period, aperiodicity: Math.max(0, b) };
}

/** F0 track of `samples`, one frame per hop. Frames without enough samples at the end are dropped. */
export function trackPitch(samples: Float32Array, sampleRate: number, options: PitchTrackOptions = {}): PitchFrame[] {
  const geometry = pitchFrameGeometry(sampleRate, options);
  const scratch = new Float64Array(geometry.tauMax + 2);
  const frames: PitchFrame[] = [];
  for (let offset = 0; offset + geometry.frameLength <= samples.length; offset += geometry.hop) {
    const { f0, aperiodicity } = estimateFrameF0(samples, offset, sampleRate, geometry, scratch);
    frames.push({ time: (offset + geometry.frameLength / 2) / sampleRate, f0, aperiodicity });
  }
  return frames;
}
