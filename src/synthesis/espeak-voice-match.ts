/**
 * The built-in match of a cloned voice: an eSpeak NG voice fitted to the sample's profile, for
 * servers with no zero-shot cloning pack. It is not the speaker's timbre, only what eSpeak can
 * move: the variant (vocal-tract class), base pitch, pitch range and rate.
 *
 * eSpeak's pitch and range settings (0..99) do not map to hertz the same way for every variant
 * and language, so each is fitted by measuring what eSpeak really produces with the same pitch
 * tracker that measured the sample: range first (it also moves the median a little), then the
 * base pitch by interpolating log F0 between measured settings, refined until within
 * PITCH_TOLERANCE_ST, then the rate from the syllable rate at eSpeak's default rate. About eight
 * short syntheses and pitch tracks per clone (bench/cloning.ts prints the time).
 */
import { concatFloat32 } from '../audio/channel-mix.js';
import { espeakSampleRate, espeakVoiceForLanguage, type EspeakNgTts, type EspeakVoiceSettings } from '../engines/espeak-ng-tts.js';
import type { VoiceClass } from '../transcription/analysis/acoustic-baseline.js';
import { measurePitch, measureVoiceProfile, semitonesBetween, type VoiceProfile } from './voice-profile.js';

export type MatchedEspeakSettings = Required<EspeakVoiceSettings>;

/** eSpeak's default rate; the fitted rate scales it. */
const BASE_WORDS_PER_MINUTE = 175;
/** Variant per class: the m3/f3 pair is eSpeak's most distinct, f5 reaches highest (child voices). */
const VARIANTS: Record<VoiceClass, string> = { male: 'm3', female: 'f3', child: 'f5' };
/** Refine the base pitch until the median is this close to the sample's, semitones. */
const PITCH_TOLERANCE_ST = 0.5;
const MAX_REFINEMENTS = 3;
/** What eSpeak says while it is measured: ~3 s of voiced English (longer costs time, not accuracy). */
const CALIBRATION_TEXT = 'The quick brown fox jumps over the lazy dog, and runs home.';

export async function fitEspeakVoice(espeak: EspeakNgTts, profile: VoiceProfile, language: string): Promise<MatchedEspeakSettings> {
  const voice = `${espeakVoiceForLanguage(language) ?? 'en-us'}+${VARIANTS[profile.genderClass]}`;
  const render = async (pitch: number, range: number, wordsPerMinute = BASE_WORDS_PER_MINUTE) => {
    const pieces: Float32Array[] = [];
    for await (const piece of espeak.speak({ voice, wordsPerMinute, pitch, range }, CALIBRATION_TEXT, { speed: 1, language })) pieces.push(piece);
    return concatFloat32(pieces);
  };
  const medianAt = async (pitch: number, range: number) => (await measurePitch(await render(pitch, range), espeakSampleRate)).medianHz;

  // Range: eSpeak's p10-p90 spread grows about in proportion to its range setting.
  const neutral = await measurePitch(await render(50, 50), espeakSampleRate);
  const spreadAt50 = semitonesBetween(neutral.p90Hz, neutral.p10Hz);
  const range = Number.isFinite(spreadAt50) && spreadAt50 > 0.1 ? clamp99((50 * profile.pitchRangeSemitones) / spreadAt50) : 50;

  // Base pitch: interpolate log F0 over measured settings, then refine at the estimate.
  const points = new Map<number, number>();
  for (const pitch of [0, 50, 99]) points.set(pitch, await medianAt(pitch, range));
  let pitch = interpolatePitch(points, profile.medianF0Hz);
  for (let i = 0; i < MAX_REFINEMENTS && !points.has(pitch); i++) {
    const f0 = await medianAt(pitch, range);
    points.set(pitch, f0);
    if (Math.abs(semitonesBetween(f0, profile.medianF0Hz)) <= PITCH_TOLERANCE_ST) break;
    pitch = interpolatePitch(points, profile.medianF0Hz);
  }
  pitch = closestMeasured(points, profile.medianF0Hz, pitch);

  // Rate: eSpeak's syllable rate at its default rate, measured the way the sample's was.
  const atBase = await render(pitch, range);
  const measuredAtBase = await measureVoiceProfile(atBase, espeakSampleRate, [{ start: 0, end: atBase.length / espeakSampleRate }]);
  const wordsPerMinute =
    measuredAtBase && measuredAtBase.speakingRate > 0 && profile.speakingRate > 0
      ? Math.round((BASE_WORDS_PER_MINUTE * profile.speakingRate) / measuredAtBase.speakingRate)
      : BASE_WORDS_PER_MINUTE;
  return { voice, pitch, range, wordsPerMinute: Math.min(450, Math.max(80, wordsPerMinute)) };
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
