/**
 * Speaker-level acoustic measurements over speech spans: F0 statistics (pYIN: YIN candidates, one
 * path per span, pitch-tracker.ts), vocal-tract length
 * (Burg-LPC formants, formants.ts), spectral balance, and tempo (syllable nuclei per second).
 * Everything is measured at 16 kHz, frame hop 10 ms, except formants, which Praat-style run on the
 * span resampled to twice the formant ceiling (10 kHz) with a 50 ms Gaussian window centred on each
 * voiced frame. Deterministic: no randomness, fixed frame grid per span.
 */
import type { TimeSpan } from '../engines/types.js';
import { AbortedError } from '../errors.js';
import { ANALYSIS_RATE, toAnalysisRate } from './analysis-rate.js';
import { powerSpectrum } from './fft.js';
import { estimateFormants, FORMANT_RATE, FORMANT_WINDOW_S, gaussianWindow, toFormantRate, vocalTractLength } from './formants.js';
import { PitchPathDecoder, pitchCandidates, pitchFrameGeometry } from './pitch-tracker.js';

export interface AcousticFeatures {
  /** Seconds of active speech: each span trimmed to its first..last frame above the energy gate. */
  speechSeconds: number;
  /** Seconds of voiced frames (the pitch path is voiced there and the frame passed the energy gate). */
  voicedSeconds: number;
  /** Percentiles of F0 over voiced frames, Hz; NaN when there are none. */
  f0Median: number;
  f0P10: number;
  f0P90: number;
  /** Standard deviation of F0 in semitones around its median (intonation liveliness). */
  f0SdSemitones: number;
  /** Median vocal-tract length estimate, cm; NaN when too few frames gave three formants. */
  vocalTractCm: number;
  /** Median spectral centroid of voiced frames, Hz. */
  spectralCentroid: number;
  /** Median alpha ratio of voiced frames: energy 1-5 kHz over 50 Hz-1 kHz, dB (vocal effort). */
  alphaRatio: number;
  /** Syllable nuclei per second of active speech (de Jong & Wempe 2009 style). */
  syllableRate: number;
}

export interface FeatureOptions {
  /** Analyse at most this much of the spans (in order); a speaker's traits are stable well within it. */
  maxSeconds?: number;
  signal?: AbortSignal;
}

/** Frames below (loudest 95th percentile − 30 dB) are treated as pauses or background. */
const GATE_BELOW_P95_DB = 30;
/** Absolute floor: digital near-silence is never speech. */
const GATE_FLOOR_DB = -70;
/** de Jong & Wempe (2009) count an intensity peak as a syllable nucleus after a dip of ≥ 2 dB. */
const MIN_DIP_DB = 2;
const SPECTRUM_FFT = 1024;
/** 25 ms spectral / LPC window, centred in the pitch frame. */
const SPECTRAL_WINDOW_S = 0.025;

interface Frame {
  db: number;
  bandDb: number;
  f0: number;
  centroid: number;
  alpha: number;
  vtl: number;
}

export async function extractAcousticFeatures(
  samples: Float32Array,
  sampleRate: number,
  spans: TimeSpan[],
  options: FeatureOptions = {},
): Promise<AcousticFeatures> {
  const maxSeconds = options.maxSeconds ?? 60;
  const geometry = pitchFrameGeometry(ANALYSIS_RATE);
  const scratch = new Float64Array(geometry.tauMax + 2);
  const spectralLength = Math.round(SPECTRAL_WINDOW_S * ANALYSIS_RATE);
  const hann = new Float64Array(spectralLength).map((_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (spectralLength - 1)));
  const binHz = ANALYSIS_RATE / SPECTRUM_FFT;
  const formantLength = Math.round(FORMANT_WINDOW_S * FORMANT_RATE);
  const formantWindow = gaussianWindow(formantLength);

  const perSpan: Frame[][] = [];
  let budget = maxSeconds;
  for (const span of [...spans].sort((a, b) => a.start - b.start)) {
    if (budget <= 0) break;
    if (options.signal?.aborted) throw new AbortedError();
    const start = Math.max(0, Math.floor(span.start * sampleRate));
    const end = Math.min(samples.length, Math.ceil(Math.min(span.end, span.start + budget) * sampleRate));
    if (end <= start) continue;
    budget -= (end - start) / sampleRate;
    const x = await toAnalysisRate(samples.subarray(start, end), sampleRate);
    const formantSignal = await toFormantRate(samples.subarray(start, end), sampleRate);
    const frames: Frame[] = [];
    const pitchPath = new PitchPathDecoder(geometry);
    const frame = new Float64Array(spectralLength);
    for (let offset = 0; offset + geometry.frameLength <= x.length; offset += geometry.hop) {
      const centre = offset + Math.floor(geometry.frameLength / 2);
      const from = centre - Math.floor(spectralLength / 2);
      let energy = 0;
      for (let i = 0; i < spectralLength; i++) {
        const v = x[from + i]!;
        energy += v * v;
        frame[i] = v * hann[i]!;
      }
      const db = 10 * Math.log10(energy / spectralLength + 1e-12);
      const power = powerSpectrum(frame, SPECTRUM_FFT);
      let band = 0;
      let low = 0;
      let high = 0;
      let weighted = 0;
      let total = 0;
      for (let k = 1; k < power.length; k++) {
        const hz = k * binHz;
        const p = power[k]!;
        if (hz >= 300 && hz <= 2500) band += p;
        if (hz >= 50 && hz < 1000) low += p;
        else if (hz >= 1000 && hz <= 5000) high += p;
        weighted += hz * p;
        total += p;
      }
      pitchPath.push(pitchCandidates(x, offset, geometry, scratch));
      frames.push({
        db,
        bandDb: 10 * Math.log10(band + 1e-12),
        f0: 0,
        centroid: total > 0 ? weighted / total : 0,
        alpha: 10 * Math.log10((high + 1e-12) / (low + 1e-12)),
        vtl: NaN,
      });
      // Let the event loop run every 2 s of audio (~30-60 ms of CPU), however long the span.
      if (frames.length % 200 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    // The pitch path's forward pass ran with the frames; backtracking gives the whole span's path,
    // then formants are measured on its voiced frames.
    const path = pitchPath.finish();
    for (let i = 0; i < frames.length; i++) {
      const f0 = path[i]!.f0;
      frames[i]!.f0 = f0;
      const offset = i * geometry.hop;
      const formantFrom = Math.round(((offset + geometry.frameLength / 2) / ANALYSIS_RATE) * FORMANT_RATE - formantLength / 2);
      if (f0 > 0 && formantFrom >= 0 && formantFrom + formantLength <= formantSignal.length) {
        const formants = estimateFormants(formantSignal.subarray(formantFrom, formantFrom + formantLength), 4, formantWindow);
        frames[i]!.vtl = vocalTractLength(formants.map((f) => f.frequency)) ?? NaN;
      }
      if ((i + 1) % 200 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    perSpan.push(frames);
  }
  return summarise(perSpan, geometry.hop / ANALYSIS_RATE);
}

function summarise(perSpan: Frame[][], hopSeconds: number): AcousticFeatures {
  const all = perSpan.flat();
  const gate = Math.max(GATE_FLOOR_DB, percentile(all.map((f) => f.db), 0.95) - GATE_BELOW_P95_DB);
  let activeFrames = 0;
  let nuclei = 0;
  const voiced: Frame[] = [];
  for (const frames of perSpan) {
    const first = frames.findIndex((f) => f.db >= gate);
    if (first < 0) continue;
    let last = frames.length - 1;
    while (frames[last]!.db < gate) last--;
    activeFrames += last - first + 1;
    for (const f of frames) if (f.f0 > 0 && f.db >= gate) voiced.push(f);
    nuclei += countSyllableNuclei(frames.slice(first, last + 1), gate);
  }
  const f0s = voiced.map((f) => f.f0);
  const f0Median = percentile(f0s, 0.5);
  const semitones = f0s.map((f) => 12 * Math.log2(f / f0Median));
  const sd = semitones.length > 1 ? Math.sqrt(semitones.reduce((s, v) => s + v * v, 0) / (semitones.length - 1)) : NaN;
  const vtls = voiced.map((f) => f.vtl).filter((v) => Number.isFinite(v));
  const speechSeconds = activeFrames * hopSeconds;
  return {
    speechSeconds,
    voicedSeconds: voiced.length * hopSeconds,
    f0Median,
    f0P10: percentile(f0s, 0.1),
    f0P90: percentile(f0s, 0.9),
    f0SdSemitones: sd,
    // Fewer than 20 frames (0.2 s) with three formants is too little to trust.
    vocalTractCm: vtls.length >= 20 ? percentile(vtls, 0.5) : NaN,
    spectralCentroid: percentile(voiced.map((f) => f.centroid), 0.5),
    alphaRatio: percentile(voiced.map((f) => f.alpha), 0.5),
    syllableRate: speechSeconds > 0 ? nuclei / speechSeconds : NaN,
  };
}

/**
 * Syllable nuclei: peaks of the 300-2500 Hz band energy that are voiced, above the gate, and
 * separated from the previous nucleus by a dip of at least 2 dB (de Jong & Wempe 2009, "Praat script
 * to detect syllable nuclei and measure speech rate automatically", Behav. Res. Methods 41(2);
 * band-limited energy instead of their broadband intensity, to play down fricatives). Checked against
 * syllable counts (vowel groups) of the transcripts of the corpus' 11 English read-speech clips
 * (en/): with pYIN voicing the estimate/true ratio averages 1.06 (per clip 0.88-1.25); with
 * frame-wise YIN it was 0.99, and with 50 ms smoothing and voicing required at the exact peak frame
 * 0.70, i.e. syllables merged.
 */
function countSyllableNuclei(frames: Frame[], gate: number): number {
  const smooth = frames.map((_, i) => {
    let sum = 0;
    let weight = 0;
    for (let j = -SMOOTH; j <= SMOOTH; j++) {
      const f = frames[i + j];
      if (!f) continue;
      const w = SMOOTH + 1 - Math.abs(j);
      sum += w * f.bandDb;
      weight += w;
    }
    return sum / weight;
  });
  let count = 0;
  let lastPeak = -Infinity;
  let minSinceLast = Infinity;
  for (let i = 0; i < frames.length; i++) {
    const v = smooth[i]!;
    minSinceLast = Math.min(minSinceLast, v);
    const isPeak = (i === 0 || v > smooth[i - 1]!) && (i === frames.length - 1 || v >= smooth[i + 1]!);
    if (!isPeak || !voicedNear(frames, i) || frames[i]!.db < gate) continue;
    if (v - minSinceLast >= MIN_DIP_DB && (lastPeak === -Infinity || lastPeak - minSinceLast >= MIN_DIP_DB)) {
      count++;
      lastPeak = v;
      minSinceLast = v;
    } else if (v > lastPeak && count > 0) {
      // Same nucleus, higher top: move the peak up so the next dip is measured from it.
      lastPeak = v;
      minSinceLast = v;
    } else if (count === 0) {
      count = 1;
      lastPeak = v;
      minSinceLast = v;
    }
  }
  return count;
}

/** Band energy is smoothed over ±1 frame (triangular, ~20 ms) before peak picking. */
const SMOOTH = 1;
/** A nucleus must be voiced within ±2 frames (20 ms): the voicing decision can miss the frame at the energy top. */
const VOICED_NEAR = 2;

function voicedNear(frames: Frame[], i: number): boolean {
  for (let j = i - VOICED_NEAR; j <= i + VOICED_NEAR; j++) if ((frames[j]?.f0 ?? 0) > 0) return true;
  return false;
}

/** Linear-interpolated percentile of `values` (q in [0, 1]); NaN for an empty list. */
function percentile(values: number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const pos = q * (sorted.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}
