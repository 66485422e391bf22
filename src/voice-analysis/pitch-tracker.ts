/**
 * F0 tracking with pYIN (Mauch & Dixon 2014, "pYIN: a fundamental frequency estimator using
 * probabilistic threshold distributions", ICASSP): YIN candidates per frame, one path through them.
 *
 * Per frame, YIN (de Cheveigné & Kawahara 2002, "YIN, a fundamental frequency estimator for speech
 * and music", JASA 111(4)) steps 1-3 and 5: difference function d(τ), cumulative-mean-normalised
 * difference d′(τ), parabolic interpolation of the period. YIN's step 4 (the first local minimum of
 * d′ under an absolute threshold) is made probabilistic: the threshold is drawn from a prior, Beta(2,
 * 18) (mean 0.1, the first of the paper's three) on 100 steps 0.01..1, and each local minimum's
 * probability is the prior mass of the thresholds for which it is that first minimum; the mass of
 * thresholds under which no minimum falls goes, times 0.01, to the global minimum. YIN's preference
 * for the shortest period that is periodic enough is kept (a periodic signal is as periodic at 2, 3,
 * ... periods, and a sampled one often more so at a multiple of a non-integer period), and a half
 * period that only just passes (the 2nd harmonic dominating) gets little mass.
 *
 * Then pYIN's hidden Markov model, decoded by Viterbi over the frames handed in together
 * (trackPitch: the whole signal; the feature extractor: one speech span): states are pitch bins of
 * 0.1 semitone from minF0 to maxF0, each voiced or unvoiced; the pitch moves between frames with a
 * triangular probability over at most 4 semitones total width (35.92 octaves/s × 10 ms hop, rounded),
 * voicing switches with probability 0.01; a voiced bin is observed with the summed probability of the
 * candidates in it, every unvoiced bin with (1 − the frame's total candidate probability) / bins.
 * These are librosa.pyin's defaults (librosa 0.10 documentation), which follow the paper; the one
 * deviation is that a frame's candidate only gets the mass of its first-below-threshold thresholds
 * (the paper's rule) rather than librosa's Boltzmann spread over later minima. The output F0 is the
 * chosen candidate's interpolated frequency, not the bin centre (as the pYIN Vamp plugin does).
 *
 * Why: frame by frame, YIN's first dip was the half period whenever the 2nd harmonic pushed d′(T/2)
 * under 0.2, and the track jumped between F0 and 2·F0 inside an utterance (acted angry or sad male
 * speech: 190 ↔ 390 Hz). Taking the deepest dip instead errs an octave down. Along the HMM path an
 * octave jump is not a reachable transition within a voiced stretch, so the path keeps to the
 * candidate that is likeliest over the stretch.
 *
 * Not chosen: Praat's path finder (Boersma 1993, IFA Proceedings 17; "Sound: To Pitch (ac)...")
 * with 1 − d′ as the candidate strength. Its octave cost (0.01 per octave) breaks ties between
 * equally strong multiples of the period, which holds for its autocorrelation; d′ sampled at integer
 * lags is not tied — a 110 Hz sawtooth at 16 kHz gives 1 − d′ = 0.985 at T (145.45 samples) and
 * 1.000 at 2T (290.9 ≈ 291) — so that path went an octave down on plain synthetic tones.
 *
 * Voicing changed with it: pYIN calls a frame voiced more readily than YIN at a fixed 0.2 threshold
 * (a weakly periodic frame next to voiced ones joins the voiced stretch). `threshold` is now only
 * used by estimateFrameF0, the plain per-frame YIN kept for reference.
 *
 * Frames: 10 ms hop; each frame reads an integration window of 25 ms plus the longest lag
 * (20 ms at 50 Hz), i.e. 45 ms of audio, close to the usual 40 ms analysis frame. Deterministic:
 * ties go to the earlier state.
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
   * sit around 0.5-1). Used by estimateFrameF0 only; the pYIN track draws thresholds from a prior.
   */
  threshold?: number;
}

export interface PitchFrame {
  /** Centre of the frame in seconds from the start of the samples. */
  time: number;
  /** F0 in Hz, 0 when the frame is unvoiced. */
  f0: number;
  /** Normalised difference at the chosen lag: 0 = perfectly periodic, ~1 = noise. Unvoiced: the lowest d′. */
  aperiodicity: number;
}

/** The candidates of one frame: local minima of d′, as F0 (Hz), pYIN probability and depth d′. */
export interface PitchCandidates {
  f0: number[];
  probability: number[];
  depth: number[];
  /** Lowest d′ over the lag range, capped at 1 (the aperiodicity reported when the frame is unvoiced). */
  minDifference: number;
}

const DEFAULTS = { minF0: 50, maxF0: 800, hop: 0.01, window: 0.025, threshold: 0.2 };

/** pYIN's defaults as librosa.pyin has them (see the header). */
const N_THRESHOLDS = 100;
/** Threshold prior Beta(2, 18), mean 0.1 (β must stay an integer for thresholdCdf). */
const BETA_B = 18;
const NO_DIP_PROBABILITY = 0.01;
const BINS_PER_SEMITONE = 10;
const MAX_TRANSITION_OCTAVES_PER_S = 35.92;
const SWITCH_PROBABILITY = 0.01;

/** Geometry of the YIN frames for a sample rate, shared with the feature extractor. */
export function pitchFrameGeometry(sampleRate: number, options: PitchTrackOptions = {}) {
  const o = { ...DEFAULTS, ...options };
  const tauMin = Math.max(2, Math.floor(sampleRate / o.maxF0));
  const tauMax = Math.ceil(sampleRate / o.minF0);
  const window = Math.round(o.window * sampleRate);
  const hop = Math.round(o.hop * sampleRate);
  return {
    sampleRate,
    tauMin,
    tauMax,
    window,
    hop,
    frameLength: window + tauMax,
    threshold: o.threshold,
    minF0: o.minF0,
    ceiling: o.maxF0,
    hopSeconds: hop / sampleRate,
  };
}

export type PitchFrameGeometry = ReturnType<typeof pitchFrameGeometry>;

/** YIN steps 2-3 into d[0..tauMax+1]: d′(τ) = d(τ)·τ / Σ_{1..τ} d, d(τ) = Σ (x_j − x_{j+τ})². */
function normalisedDifference(samples: Float32Array, offset: number, geometry: PitchFrameGeometry, d: Float64Array): void {
  const { tauMax, window } = geometry;
  for (let tau = 1; tau <= tauMax + 1; tau++) {
    let sum = 0;
    for (let j = 0; j < window; j++) {
      const diff = samples[offset + j]! - samples[offset + j + tau]!;
      sum += diff * diff;
    }
    d[tau] = sum;
  }
  d[0] = 1;
  let running = 0;
  for (let tau = 1; tau <= tauMax + 1; tau++) {
    running += d[tau]!;
    d[tau] = running > 0 ? (d[tau]! * tau) / running : 1;
  }
}

/** YIN step 5: parabolic interpolation of the dip at `tau`: sub-sample period and the dip's depth. */
function interpolateDip(d: Float64Array, tau: number): { period: number; value: number } {
  const a = d[tau - 1]!;
  const b = d[tau]!;
  const c = d[tau + 1]!;
  const denom = a - 2 * b + c;
  const shift = denom > 0 ? Math.max(-0.5, Math.min(0.5, (0.5 * (a - c)) / denom)) : 0;
  return { period: tau + shift, value: Math.max(0, b - 0.25 * (a - c) * shift) };
}

/**
 * Plain per-frame YIN, steps 1-5 (first dip under the threshold, no continuity between frames), for
 * the frame starting at `offset` (needs `frameLength` samples). Returns f0 = 0 when no lag passes
 * the threshold. trackPitch and the feature extractor use the path-tracked pitchCandidates +
 * PitchPathDecoder instead.
 */
export function estimateFrameF0(
  samples: Float32Array,
  offset: number,
  sampleRate: number,
  geometry: PitchFrameGeometry,
  scratch?: Float64Array,
): { f0: number; aperiodicity: number } {
  const { tauMin, tauMax, threshold } = geometry;
  const d = scratch ?? new Float64Array(tauMax + 2);
  normalisedDifference(samples, offset, geometry, d);
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
  const { period } = interpolateDip(d, best);
  return { f0: sampleRate / period, aperiodicity: Math.max(0, d[best]!) };
}

/**
 * CDF of the threshold prior Beta(2, 18) (pYIN's distribution of mean 0.1): for integer parameters
 * I_x(a, b) = P(Binomial(a + b − 1, x) ≥ a), here 1 − (1 − x)^19 − 19·x·(1 − x)^18.
 */
function thresholdCdf(x: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const q = 1 - x;
  const q18 = q ** (BETA_B);
  return 1 - q18 * q - (BETA_B + 1) * x * q18;
}

/** Thresholds s_i = i/100, i = 1..100: index of the last grid threshold ≤ v (0 if none). */
function gridAtOrBelow(v: number): number {
  return Math.max(0, Math.min(N_THRESHOLDS, Math.floor(v * N_THRESHOLDS + 1e-9)));
}

/**
 * pYIN candidates of the frame starting at `offset` (needs `frameLength` samples): for every
 * threshold s of the prior, YIN's step 4 picks the first local minimum of d′ with d′ < s; a minimum
 * is a candidate when it is that first one for some threshold (it is deeper than every minimum at a
 * shorter lag), and its probability is the prior mass of those thresholds. The thresholds under
 * which no minimum falls give the global minimum 1% of their mass (pYIN's p_a = 0.01).
 */
export function pitchCandidates(
  samples: Float32Array,
  offset: number,
  geometry: PitchFrameGeometry,
  scratch?: Float64Array,
): PitchCandidates {
  const { tauMin, tauMax, sampleRate } = geometry;
  const d = scratch ?? new Float64Array(tauMax + 2);
  normalisedDifference(samples, offset, geometry, d);
  const f0: number[] = [];
  const probability: number[] = [];
  const depth: number[] = [];
  let record = Infinity;
  let min = Infinity;
  for (let tau = tauMin; tau <= tauMax; tau++) {
    const v = d[tau]!;
    if (v < min) min = v;
    if (!(v < d[tau - 1]! && v <= d[tau + 1]!) || v >= record) continue;
    // Thresholds s_i with v < s_i ≤ previous record: this minimum is the first one under them.
    const lo = gridAtOrBelow(v);
    const hi = gridAtOrBelow(record);
    record = v;
    const p = hi > lo ? thresholdCdf(hi / N_THRESHOLDS) - thresholdCdf(lo / N_THRESHOLDS) : 0;
    f0.push(sampleRate / interpolateDip(d, tau).period);
    probability.push(p);
    depth.push(Math.max(0, v));
  }
  if (f0.length > 0) probability[f0.length - 1]! += NO_DIP_PROBABILITY * thresholdCdf(gridAtOrBelow(record) / N_THRESHOLDS);
  return { f0, probability, depth, minDifference: Math.min(1, min) };
}

/**
 * The most likely path through the candidates of consecutive frames: pYIN's hidden Markov model
 * (see the header), decoded by Viterbi. Frames are pushed one at a time (the forward pass runs as
 * they come, so a caller can yield to the event loop between frames however long the span), and
 * `finish` backtracks: per frame the chosen F0 (0 = unvoiced) and its d′.
 */
export class PitchPathDecoder {
  private readonly nBins: number;
  private readonly half: number;
  private readonly logTriangle: Float64Array;
  private readonly logRowSum: Float64Array;
  private readonly logStay = Math.log(1 - SWITCH_PROBABILITY);
  private readonly logSwitch = Math.log(SWITCH_PROBABILITY);
  private readonly frames: PitchCandidates[] = [];
  // Back pointers: ≥ 0 an unvoiced bin of the previous frame, < 0 its voiced candidate −1 − k.
  private readonly backUnvoiced: Int16Array[] = [];
  private readonly backVoiced: Int16Array[] = [];
  // Unvoiced states: one per bin (pYIN keeps the pitch through unvoiced stretches). Voiced states:
  // only bins holding a candidate (every other voiced bin has observation probability 0).
  private unvoiced: Float64Array;
  private voiced = new Float64Array(0);
  private prevBins: number[] = [];

  constructor(private readonly geometry: PitchFrameGeometry) {
    const { minF0, ceiling } = geometry;
    this.nBins = Math.floor(BINS_PER_SEMITONE * 12 * Math.log2(ceiling / minF0)) + 1;
    const maxSemitones = Math.round(MAX_TRANSITION_OCTAVES_PER_S * 12 * geometry.hopSeconds);
    this.half = Math.floor((maxSemitones * BINS_PER_SEMITONE) / 2);
    // Triangular pitch transition, each row normalised over the bins it can reach (librosa's
    // transition_local(..., window="triangle")); as log probabilities.
    const half = this.half;
    this.logTriangle = new Float64Array(half + 1).map((_, k) => Math.log(half + 1 - k));
    this.logRowSum = new Float64Array(this.nBins).map((_, b) => {
      let sum = 0;
      for (let k = Math.max(0, b - half); k <= Math.min(this.nBins - 1, b + half); k++) sum += half + 1 - Math.abs(k - b);
      return Math.log(sum);
    });
    this.unvoiced = new Float64Array(this.nBins);
  }

  private logTrans(from: number, to: number): number {
    return this.logTriangle[Math.abs(from - to)]! - this.logRowSum[from]!;
  }

  private binOf(f: number): number {
    return Math.max(0, Math.min(this.nBins - 1, Math.round(BINS_PER_SEMITONE * 12 * Math.log2(f / this.geometry.minF0))));
  }

  private unvoicedLogObs(frame: PitchCandidates): number {
    const voicedProbability = Math.min(1, frame.probability.reduce((s, p) => s + p, 0));
    return Math.log(Math.max(1e-300, (1 - voicedProbability) / this.nBins));
  }

  /** Result of bestPredecessor (fields, not a returned pair: it runs ~500 times a frame). */
  private bestLog = -Infinity;
  private bestState = 0;

  /**
   * The best previous state for a state at bin `b`, among the unvoiced bins and voiced candidates
   * within reach; `fromUnvoiced` / `fromVoiced` are the log probabilities of arriving from each
   * voicing (stay or switch). Back-pointer encoding as in `backUnvoiced`.
   */
  private bestPredecessor(b: number, fromUnvoiced: number, fromVoiced: number): void {
    const { nBins, half, unvoiced, voiced, prevBins } = this;
    let best = -Infinity;
    let arg = 0;
    for (let k = Math.max(0, b - half); k <= Math.min(nBins - 1, b + half); k++) {
      const v = unvoiced[k]! + fromUnvoiced + this.logTrans(k, b);
      if (v > best) {
        best = v;
        arg = k;
      }
    }
    for (let c = 0; c < prevBins.length; c++) {
      const k = prevBins[c]!;
      if (Math.abs(k - b) > half) continue;
      const v = voiced[c]! + fromVoiced + this.logTrans(k, b);
      if (v > best) {
        best = v;
        arg = -1 - c;
      }
    }
    this.bestLog = best;
    this.bestState = arg;
  }

  /** One forward step of the Viterbi. */
  push(frame: PitchCandidates): void {
    const { nBins, logStay, logSwitch } = this;
    const bins = frame.f0.map((f) => this.binOf(f));
    const vo = frame.probability.map((p) => (p > 0 ? Math.log(p) : -Infinity));
    const uo = this.unvoicedLogObs(frame);
    if (this.frames.length === 0) {
      // Uniform start over the 2·nBins states.
      const start = -Math.log(2 * nBins);
      this.unvoiced.fill(uo + start);
      this.voiced = Float64Array.from(vo, (o) => o + start);
      this.backUnvoiced.push(new Int16Array(nBins));
      this.backVoiced.push(new Int16Array(bins.length));
    } else {
      const nextUnvoiced = new Float64Array(nBins);
      const bu = new Int16Array(nBins);
      for (let b = 0; b < nBins; b++) {
        this.bestPredecessor(b, logStay, logSwitch);
        nextUnvoiced[b] = this.bestLog + uo;
        bu[b] = this.bestState;
      }
      const nextVoiced = new Float64Array(bins.length);
      const bv = new Int16Array(bins.length);
      for (let c = 0; c < bins.length; c++) {
        if (vo[c] === -Infinity) {
          nextVoiced[c] = -Infinity;
          continue;
        }
        this.bestPredecessor(bins[c]!, logSwitch, logStay);
        nextVoiced[c] = this.bestLog + vo[c]!;
        bv[c] = this.bestState;
      }
      this.unvoiced = nextUnvoiced;
      this.voiced = nextVoiced;
      this.backUnvoiced.push(bu);
      this.backVoiced.push(bv);
    }
    this.prevBins = bins;
    this.frames.push(frame);
  }

  /** Backtracks from the best final state; `state` ≥ 0 unvoiced bin, < 0 voiced candidate −1 − c. */
  finish(): { f0: number; aperiodicity: number }[] {
    const n = this.frames.length;
    if (n === 0) return [];
    let state = 0;
    let best = -Infinity;
    for (let b = 0; b < this.nBins; b++) if (this.unvoiced[b]! > best) [best, state] = [this.unvoiced[b]!, b];
    for (let c = 0; c < this.voiced.length; c++) if (this.voiced[c]! > best) [best, state] = [this.voiced[c]!, -1 - c];
    const out: { f0: number; aperiodicity: number }[] = new Array(n);
    for (let t = n - 1; t >= 0; t--) {
      const frame = this.frames[t]!;
      if (state >= 0) {
        out[t] = { f0: 0, aperiodicity: frame.minDifference };
        state = this.backUnvoiced[t]![state]!;
      } else {
        const c = -1 - state;
        out[t] = { f0: frame.f0[c]!, aperiodicity: frame.depth[c]! };
        state = this.backVoiced[t]![c]!;
      }
    }
    return out;
  }
}

/**
 * F0 track of `samples`, one frame per hop, path-tracked over the whole signal. Frames without
 * enough samples at the end are dropped.
 */
export function trackPitch(samples: Float32Array, sampleRate: number, options: PitchTrackOptions = {}): PitchFrame[] {
  const geometry = pitchFrameGeometry(sampleRate, options);
  const scratch = new Float64Array(geometry.tauMax + 2);
  const path = new PitchPathDecoder(geometry);
  const times: number[] = [];
  for (let offset = 0; offset + geometry.frameLength <= samples.length; offset += geometry.hop) {
    path.push(pitchCandidates(samples, offset, geometry, scratch));
    times.push((offset + geometry.frameLength / 2) / sampleRate);
  }
  return path.finish().map((p, i) => ({ time: times[i]!, ...p }));
}
