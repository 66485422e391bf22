/**
 * What a voice sounds like, measured with Parley's own analysis: median F0 and its spread
 * (pYIN, pitch-tracker.ts), speaking rate (syllable nuclei per second) and a gender class
 * (acoustic-baseline.ts: F0 and vocal-tract length). Used on a clone's sample, where it is kept
 * as the clone's `profile`, and on synthesised speech, to fit the built-in match to the sample.
 */
import type { TimeSpan } from '../engines/types.js';
import { AbortedError } from '../errors.js';
import { classifyVoice, type VoiceClass } from '../voice-analysis/acoustic-baseline.js';
import { extractAcousticFeatures } from '../voice-analysis/acoustic-features.js';
import { ANALYSIS_RATE, toAnalysisRate } from '../voice-analysis/analysis-rate.js';
import { PitchPathDecoder, pitchCandidates, pitchFrameGeometry } from '../voice-analysis/pitch-tracker.js';
import { mergeSpans } from '../voice-analysis/speaker-analysis.js';

export interface VoiceProfile {
  /** Median F0 of the voiced speech, Hz. */
  medianF0Hz: number;
  /** 10th to 90th percentile of F0, semitones. */
  pitchRangeSemitones: number;
  /** Syllable nuclei per second of active speech. */
  speakingRate: number;
  /** From F0 and vocal-tract length; `child` covers children's (and very high) voices. */
  genderClass: VoiceClass;
  /** Seconds of speech the profile was measured on. */
  speechSeconds: number;
}

/** Pitch statistics of a stretch of audio; NaN when nothing in it is voiced. */
export interface PitchSummary {
  medianHz: number;
  p10Hz: number;
  p90Hz: number;
  voicedSeconds: number;
}

export const semitonesBetween = (a: number, b: number): number => 12 * Math.log2(a / b);

/** Profile of the speech in `spans`; undefined when it has too little voiced speech to tell. */
export async function measureVoiceProfile(samples: Float32Array, sampleRate: number, spans: TimeSpan[], signal?: AbortSignal): Promise<VoiceProfile | undefined> {
  const features = await extractAcousticFeatures(samples, sampleRate, mergeSpans(spans), { signal });
  const decision = classifyVoice(features);
  if (!decision) return undefined;
  return {
    medianF0Hz: round(features.f0Median, 1),
    pitchRangeSemitones: round(semitonesBetween(features.f0P90, features.f0P10), 2),
    speakingRate: round(features.syllableRate, 2),
    genderClass: decision.voiceClass,
    speechSeconds: round(features.speechSeconds, 2),
  };
}

/**
 * F0 of the whole of `samples` with the pitch tracker alone (no formants, no syllables: a few times
 * cheaper than the profile), yielding to the event loop every 2 s of audio.
 */
export async function measurePitch(samples: Float32Array, sampleRate: number, signal?: AbortSignal): Promise<PitchSummary> {
  const x = await toAnalysisRate(samples, sampleRate);
  const geometry = pitchFrameGeometry(ANALYSIS_RATE);
  const scratch = new Float64Array(geometry.tauMax + 2);
  const path = new PitchPathDecoder(geometry);
  let frames = 0;
  for (let offset = 0; offset + geometry.frameLength <= x.length; offset += geometry.hop) {
    path.push(pitchCandidates(x, offset, geometry, scratch));
    if (++frames % 200 === 0) {
      await new Promise((resolve) => setImmediate(resolve));
      if (signal?.aborted) throw new AbortedError();
    }
  }
  const voiced = path
    .finish()
    .map((p) => p.f0)
    .filter((f) => f > 0)
    .sort((a, b) => a - b);
  return {
    medianHz: quantile(voiced, 0.5),
    p10Hz: quantile(voiced, 0.1),
    p90Hz: quantile(voiced, 0.9),
    voicedSeconds: voiced.length * geometry.hopSeconds,
  };
}

/**
 * The stretch of at most `maxSeconds` holding the most speech, cut at span edges (ties: the
 * earliest). A clone conditions on continuous audio, so this is one stretch, not spans glued together.
 */
export function bestSpeechWindow(spans: TimeSpan[], maxSeconds: number): { start: number; end: number; speechSeconds: number } | undefined {
  const merged = mergeSpans(spans);
  let best: { start: number; end: number; speechSeconds: number } | undefined;
  for (let first = 0; first < merged.length; first++) {
    const start = merged[first]!.start;
    const limit = start + maxSeconds;
    let speech = 0;
    let end = start;
    for (let i = first; i < merged.length && merged[i]!.start < limit; i++) {
      const s = merged[i]!;
      const e = Math.min(s.end, limit);
      speech += e - s.start;
      end = e;
    }
    if (!best || speech > best.speechSeconds + 1e-9) best = { start, end, speechSeconds: speech };
  }
  return best;
}

/** Sorted-array quantile with linear interpolation; NaN when empty. */
function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const pos = q * (sorted.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

function round(v: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}
