/**
 * The built-in match of a cloned voice: an eSpeak NG voice fitted to the sample's profile, for
 * servers with no zero-shot cloning pack. It is not the speaker's timbre, only what eSpeak can
 * move: the variant (vocal-tract class), base pitch, pitch range and rate.
 *
 * eSpeak's pitch and range settings (0..99) do not map to hertz the same way for every variant
 * and language, so each is fitted by measuring what eSpeak really produces with the same pitch
 * tracker that measured the sample: range first (it also moves the median a little), then the
 * base pitch by interpolating log F0 between measured settings, refined until within
 * PITCH_TOLERANCE_ST, then the rate from the syllable rate in two secant steps. About six short
 * syntheses and pitch tracks and two syllable counts per clone (bench/cloning.ts prints the time).
 */
import { concatFloat32 } from '../audio/channel-mix.js';
import { espeakSampleRate, espeakVoiceForLanguage, type EspeakNgTts, type EspeakVoiceSettings } from '../engines/server/espeak-ng-tts.js';
import type { VoiceClass } from '../voice-analysis/acoustic-baseline.js';
import { measurePitch, measureVoiceProfile, semitonesBetween, type VoiceProfile } from './voice-profile.js';

export type MatchedEspeakSettings = Required<EspeakVoiceSettings>;

/** eSpeak's default rate; the fitted rate scales it. */
const BASE_WORDS_PER_MINUTE = 175;
/**
 * Variants per class, preferred first: the m3/f3 pair is eSpeak's most distinct, f5 reaches
 * highest (child voices). Measured ranges of median F0 over pitch 0..99 (en-us, range 50): m3
 * 68-171 Hz, f3 142-334 Hz, f5 127-349 Hz.
 */
const VARIANTS: Record<VoiceClass, string[]> = { male: ['m3', 'f3'], female: ['f3', 'm3'], child: ['f5', 'f3'] };
/** A variant that gets this close to the sample's median is kept without trying the next. */
const REACH_TOLERANCE_ST = 1;
/** Rate estimates: at eSpeak's default rate, then at the first estimate. */
const RATE_STEPS = 2;
/** Refine the base pitch until the median is this close to the sample's, semitones. */
const PITCH_TOLERANCE_ST = 0.5;
const MAX_REFINEMENTS = 3;
/** What eSpeak says while it is measured: ~3 s of voiced English (longer costs time, not accuracy). */
const CALIBRATION_TEXT = 'The quick brown fox jumps over the lazy dog, and runs home.';

export async function fitEspeakVoice(espeak: EspeakNgTts, profile: VoiceProfile, language: string): Promise<MatchedEspeakSettings> {
  const base = espeakVoiceForLanguage(language) ?? 'en-us';
  const render = async (settings: MatchedEspeakSettings) => {
    const pieces: Float32Array[] = [];
    for await (const piece of espeak.speak(settings, CALIBRATION_TEXT, { speed: 1, language })) pieces.push(piece);
    return concatFloat32(pieces);
  };

  // The speaker's class picks the variant; when its pitch is out of that variant's reach (a man
  // speaking at 240 Hz is above m3's top), the other variant is tried and the closer one kept.
  let best: PitchFit | undefined;
  for (const variant of VARIANTS[profile.genderClass]) {
    const fit = await fitPitch(`${base}+${variant}`, profile, render);
    if (!best || Math.abs(fit.errorSt) < Math.abs(best.errorSt)) best = fit;
    if (Math.abs(best.errorSt) <= REACH_TOLERANCE_ST) break;
  }
  const { voice, pitch, range } = best!;

  // Rate: eSpeak's syllable rate measured the way the sample's was, at its default rate, then
  // once more at the estimate (the syllable detector does not scale linearly with the rate).
  const rateAt = async (wordsPerMinute: number) => {
    const audio = await render({ voice, pitch, range, wordsPerMinute });
    return (await measureVoiceProfile(audio, espeakSampleRate, [{ start: 0, end: audio.length / espeakSampleRate }]))?.speakingRate ?? NaN;
  };
  let wordsPerMinute = BASE_WORDS_PER_MINUTE;
  for (let i = 0; i < RATE_STEPS && profile.speakingRate > 0; i++) {
    const measured = await rateAt(wordsPerMinute);
    if (!(measured > 0)) break;
    wordsPerMinute = clampRate((wordsPerMinute * profile.speakingRate) / measured);
  }
  return { voice, pitch, range, wordsPerMinute };
}

interface PitchFit {
  voice: string;
  pitch: number;
  range: number;
  /** Median F0 at the chosen setting minus the target, semitones. */
  errorSt: number;
}

/** Range, then base pitch, for one eSpeak voice with variant. */
async function fitPitch(voice: string, profile: VoiceProfile, render: (s: MatchedEspeakSettings) => Promise<Float32Array>): Promise<PitchFit> {
  const at = async (pitch: number, range: number) =>
    measurePitch(await render({ voice, pitch, range, wordsPerMinute: BASE_WORDS_PER_MINUTE }), espeakSampleRate);

  // Range: eSpeak's p10-p90 spread grows about in proportion to its range setting.
  const neutral = await at(50, 50);
  const spreadAt50 = semitonesBetween(neutral.p90Hz, neutral.p10Hz);
  const range = Number.isFinite(spreadAt50) && spreadAt50 > 0.1 ? clamp99((50 * profile.pitchRangeSemitones) / spreadAt50) : 50;

  // Base pitch: interpolate log F0 over measured settings, then refine at the estimate.
  const points = new Map<number, number>();
  for (const pitch of [0, 50, 99]) points.set(pitch, (await at(pitch, range)).medianHz);
  let pitch = interpolatePitch(points, profile.medianF0Hz);
  for (let i = 0; i < MAX_REFINEMENTS && !points.has(pitch); i++) {
    const f0 = (await at(pitch, range)).medianHz;
    points.set(pitch, f0);
    if (Math.abs(semitonesBetween(f0, profile.medianF0Hz)) <= PITCH_TOLERANCE_ST) break;
    pitch = interpolatePitch(points, profile.medianF0Hz);
  }
  pitch = closestMeasured(points, profile.medianF0Hz, pitch);
  return { voice, pitch, range, errorSt: semitonesBetween(points.get(pitch)!, profile.medianF0Hz) };
}

/** The setting whose log F0 interpolates to `targetHz` between the nearest measured settings (clamped to 0..99). */
export function interpolatePitch(points: Map<number, number>, targetHz: number): number {
  const sorted = [...points].filter(([, f]) => Number.isFinite(f) && f > 0).sort((a, b) => a[0] - b[0]);
  if (sorted.length === 0) return 50;
  const target = Math.log(targetHz);
  if (target <= Math.log(sorted[0]![1])) return sorted[0]![0];
  for (let i = 1; i < sorted.length; i++) {
    const [p0, f0] = sorted[i - 1]!;
    const [p1, f1] = sorted[i]!;
    const l0 = Math.log(f0);
    const l1 = Math.log(f1);
    if (target <= l1) return l1 === l0 ? p0 : clamp99(p0 + ((target - l0) / (l1 - l0)) * (p1 - p0));
  }
  return sorted[sorted.length - 1]![0];
}

/** Of the measured settings, the one nearest the target in F0 (the estimate when it was measured and is no worse). */
function closestMeasured(points: Map<number, number>, targetHz: number, estimate: number): number {
  let best = estimate;
  let bestError = points.has(estimate) ? Math.abs(semitonesBetween(points.get(estimate)!, targetHz)) : Infinity;
  for (const [pitch, f0] of points) {
    const error = Math.abs(semitonesBetween(f0, targetHz));
    if (error < bestError) {
      best = pitch;
      bestError = error;
    }
  }
  return best;
}

const clamp99 = (v: number) => Math.min(99, Math.max(0, Math.round(v)));
/** eSpeak's 80..450 words per minute (speak_lib.h). */
const clampRate = (v: number) => Math.min(450, Math.max(80, Math.round(v)));
