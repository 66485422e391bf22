/**
 * The built-in acoustic baseline: gender, age group and emotion scores from a handful of textbook
 * acoustic cues, with no model to download. It is a fallback, meant to be right on clear cases
 * (an adult man vs an adult woman reading) and honest about the rest.
 *
 * HOW IT DECIDES (all parameters are literature values, none fitted to the corpus labels; the one
 * choice made while looking at corpus output, which of Praat's two advised formant ceilings to use,
 * is explained in formants.ts)
 *
 * Cues (acoustic-features.ts): median F0 over voiced frames (pYIN, pitch-tracker.ts), vocal-tract
 * length from the spacing of Burg-LPC formants (formants.ts), F0 variability in semitones, syllable
 * rate, alpha ratio (spectral balance).
 *
 * 1. Voice class, from F0 and vocal-tract length, by naive Bayes over three classes with equal
 *    priors:
 *      class         F0 mean (SD)         vocal-tract length mean (SD)
 *      adult male    115 Hz (2.6 st)      17.0 cm (1.0)
 *      adult female  205 Hz (1.9 st)      14.5 cm (1.0)
 *      child 6-12    316 Hz (2.0 st)      12.5 cm (1.0)
 *    F0: the textbook speaking-F0 ranges men 85-155 Hz, women 165-255 Hz, children 250-400 Hz
 *    (e.g. Baken & Orlikoff, "Clinical Measurement of Speech and Voice", 2000), read as mean ± 2 SD
 *    on a log scale (mean = geometric midpoint). Vocal-tract length: MRI growth data (Fitch & Giedd
 *    1999, JASA 106(3); Vorperian et al. 2009, JASA 125(3)), roughly 16-18 cm for men, 14-15 cm
 *    for women, 11.5-13.5 cm between 6 and 12 years; the 1 cm SD also absorbs the estimator's noise.
 *    Vocal-tract length is Gaussian. F0 is not: those ranges hold for speech at normal effort, and
 *    F0 is a state cue as much as an anatomical one. Raising the voice raises F0 for men, women and
 *    children alike, by up to about an octave from close talk to calling across 187.5 m
 *    (Traunmüller & Eriksson 2000, JASA 107(6), "Acoustic effects of variation in vocal effort by
 *    men, women, and children"; their preliminary report, Andersson, Eriksson & Traunmüller 1996,
 *    TMH-QPSR 2/1996: mean F0 rose "by a factor close to two", its SD in semitones roughly
 *    constant; Jessen, Köster & Gfroerer 2005, IJSLL 12(2), Lombard speech: all of 100 men raised
 *    F0), and aroused emotions do the same (Juslin & Laukka 2003; Scherer 2003), while the tract's
 *    formant spacing stays. So the F0 likelihood of a class (f0Likelihood) is a mixture over the
 *    unknown effort, with even prior odds: half the Gaussian above (normal effort), half the same
 *    Gaussian shifted up by an amount spread evenly over 0-12 semitones (raised effort). An F0 far
 *    above a class' normal range then costs that class little against a class whose normal range
 *    it hits, and the tract length decides; an F0 below a class' range still counts fully against
 *    it (effort does not lower F0 an octave). Without the mixture, a man's acted happy or fearful
 *    voice at 220-270 Hz was "female" whatever his formants said.
 *    Without a length estimate (too few frames with three formants) F0 decides alone.
 * 2. gender = the likelier of adult male / adult female. For a child voice this is a guess: before
 *    puberty boys and girls differ little in F0 or vocal-tract length.
 * 3. age:
 *    - infant: median F0 ≥ 450 Hz (infant cries and babbling sit around 350-600 Hz, above any
 *      child's or adult's speaking voice) and no vocal-tract estimate of 10 cm or more (an infant's
 *      tract is 6-8 cm; adults screaming at that pitch still show an adult-length tract);
 *    - teenager: the child class wins. The spec has no "child" value; children of 6-12 and teens
 *      are both reported as `teenager`, the youngest group that still talks. Teenagers after voice
 *      change sound adult and are reported `adult` — an acoustic limit, not a bug;
 *    - adult: otherwise;
 *    - old: never. Ageing shows as small F0 shifts inside the adult ranges and as jitter/shimmer
 *      that 10 ms frames and compressed uploads do not measure reliably; guessing would be wrong
 *      more often than right, so the baseline does not claim it.
 * 4. emotions: four cues, each in units of a typical spread around neutral read speech:
 *      pitch level   = semitones of median F0 above the class mean / 3
 *      pitch spread  = (F0 SD in semitones − 2.5) / 1.5     (neutral read speech: 2-3 st)
 *      tempo         = (syllables per second − 4.0) / 1.0   (read speech 3.5-4.5 syll/s)
 *      vocal effort  = (alpha ratio dB + 15) / 4            (reference −15 dB: the median over the
 *                                                            corpus' neutral read speech, en/ and
 *                                                            age_gender/; no emotion label used)
 *    Each emotion has a prototype in that space, following the directions summarised by Juslin &
 *    Laukka (2003, Psychol. Bull. 129(5), Table 7) and, for disgust, Banse & Scherer (1996, JPSP
 *    70(3)): anger and happiness are high and varied in pitch, fast and effortful (anger most
 *    effortful), fear is high, flat and fast, sadness low, flat, slow and soft, disgust low and
 *    slow. Neutral is the origin. Scores are a softmax over the six of −distance²/(2·0.5): with
 *    a unit width, speech exactly at the neutral reference would still give over half its mass
 *    to the five emotions (the prototypes sit 1.2-2.1 units from the origin), with 0.5 it keeps
 *    0.72 for neutral. The five emotions are reported and neutral takes the rest, matching the SenseVoice scores (share of
 *    speech time per emotion). Expect little better than chance between anger, happiness and fear.
 */
import type { TimeSpan } from '../engines/types.js';
import type { AgeGroup, Emotions } from './types.js';
import { extractAcousticFeatures, type AcousticFeatures } from './acoustic-features.js';
import type { AnalysisHints, SpeakerAnalyzer, SpeakerTraits, TraitRequest } from './types.js';

export const ACOUSTIC_BASELINE = 'acoustic-baseline';

export type VoiceClass = 'male' | 'female' | 'child';

const VOICE_CLASSES: { name: VoiceClass; f0: number; f0Sd: number; vtl: number; vtlSd: number }[] = [
  { name: 'male', f0: 115, f0Sd: 2.6, vtl: 17.0, vtlSd: 1.0 },
  { name: 'female', f0: 205, f0Sd: 1.9, vtl: 14.5, vtlSd: 1.0 },
  { name: 'child', f0: 316, f0Sd: 2.0, vtl: 12.5, vtlSd: 1.0 },
];

/** Largest F0 rise with vocal effort, semitones: an octave (Traunmüller & Eriksson 2000; see step 1). */
const EFFORT_SHIFT_ST = 12;
/** Prior probability of raised effort: unknown, so even odds with normal effort. */
const RAISED_EFFORT_PRIOR = 0.5;

const INFANT_MIN_F0 = 450;
const INFANT_MAX_VTL = 10;
/** Less voiced speech than this gives no stable F0 median: no age, gender or emotion then. */
const MIN_VOICED_SECONDS = 0.25;

type EmotionClass = keyof Emotions | 'neutral';
/** Cue order: pitch level, pitch spread, tempo, vocal effort. */
const EMOTION_PROTOTYPES: Record<EmotionClass, [number, number, number, number]> = {
  neutral: [0, 0, 0, 0],
  anger: [1, 1, 0.5, 1.5],
  happiness: [1, 1, 0.5, 0.5],
  fear: [1.5, -0.5, 1, 0.5],
  sadness: [-0.5, -1, -1, -1],
  disgust: [-0.5, 0.5, -1, 0],
};

const EMOTION_WIDTH_SQUARED = 0.5;

const semitones = (ratio: number) => 12 * Math.log2(ratio);

export interface VoiceDecision {
  voiceClass: VoiceClass;
  gender: 'male' | 'female';
  age: AgeGroup;
  /** Log-likelihood per class, for explanation and tests. */
  logLikelihood: Record<VoiceClass, number>;
}

/**
 * Likelihood of a median F0 `x` semitones from a class mean whose speakers spread with SD `sd`
 * semitones, when the vocal effort is unknown: half the mass at normal effort (Gaussian), half
 * with F0 raised by an effort shift spread evenly over 0..EFFORT_SHIFT_ST (Gaussian ⊛ uniform).
 */
export function f0Likelihood(x: number, sd: number): number {
  const normal = Math.exp((-0.5 * x * x) / (sd * sd)) / (sd * Math.sqrt(2 * Math.PI));
  const raised = (normalCdf(x / sd) - normalCdf((x - EFFORT_SHIFT_ST) / sd)) / EFFORT_SHIFT_ST;
  return (1 - RAISED_EFFORT_PRIOR) * normal + RAISED_EFFORT_PRIOR * raised;
}

/** Standard normal CDF (Abramowitz & Stegun 7.1.26 erf, |error| < 1.5e-7). */
function normalCdf(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const erf = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-x * x);
  return z >= 0 ? 0.5 * (1 + erf) : 0.5 * (1 - erf);
}

/** Steps 1-3 of the rules above; undefined when there is too little voiced speech. */
export function classifyVoice(f: AcousticFeatures): VoiceDecision | undefined {
  if (!(f.voicedSeconds >= MIN_VOICED_SECONDS) || !Number.isFinite(f.f0Median)) return undefined;
  const logLikelihood = {} as Record<VoiceClass, number>;
  for (const c of VOICE_CLASSES) {
    let ll = Math.log(f0Likelihood(semitones(f.f0Median / c.f0), c.f0Sd));
    if (Number.isFinite(f.vocalTractCm)) {
      const zVtl = (f.vocalTractCm - c.vtl) / c.vtlSd;
      ll += -0.5 * zVtl * zVtl - Math.log(c.vtlSd);
    }
    logLikelihood[c.name] = ll;
  }
  const voiceClass = VOICE_CLASSES.reduce((best, c) => (logLikelihood[c.name] > logLikelihood[best] ? c.name : best), 'male' as VoiceClass);
  const gender = logLikelihood.male >= logLikelihood.female ? 'male' : 'female';
  const infant = f.f0Median >= INFANT_MIN_F0 && !(f.vocalTractCm >= INFANT_MAX_VTL);
  const age: AgeGroup = infant ? 'infant' : voiceClass === 'child' ? 'teenager' : 'adult';
  return { voiceClass, gender, age, logLikelihood };
}

/** Step 4: emotion scores in [0, 1], adding up to at most 1 (neutral takes the rest). */
export function scoreEmotions(f: AcousticFeatures, voiceClass: VoiceClass): Emotions {
  const reference = VOICE_CLASSES.find((c) => c.name === voiceClass)!.f0;
  const orZero = (v: number) => (Number.isFinite(v) ? v : 0);
  const cues = [
    orZero(semitones(f.f0Median / reference) / 3),
    orZero((f.f0SdSemitones - 2.5) / 1.5),
    orZero((f.syllableRate - 4.0) / 1.0),
    orZero((f.alphaRatio + 15) / 4),
  ];
  const logits = Object.entries(EMOTION_PROTOTYPES).map(([name, p]) => {
    const d2 = p.reduce((sum, v, i) => sum + (cues[i]! - v) ** 2, 0);
    return [name as EmotionClass, -d2 / (2 * EMOTION_WIDTH_SQUARED)] as const;
  });
  const max = Math.max(...logits.map(([, l]) => l));
  const weights = logits.map(([name, l]) => [name, Math.exp(l - max)] as const);
  const total = weights.reduce((s, [, w]) => s + w, 0);
  const share = (name: EmotionClass) => round3(weights.find(([n]) => n === name)![1] / total);
  return {
    happiness: share('happiness'),
    sadness: share('sadness'),
    disgust: share('disgust'),
    fear: share('fear'),
    anger: share('anger'),
  };
}

function round3(v: number): number {
  return Math.round(v * 1000) / 1000;
}

export class AcousticBaselineAnalyzer implements SpeakerAnalyzer {
  readonly name = ACOUSTIC_BASELINE;

  constructor(private readonly options: { maxSeconds?: number } = {}) {}

  async analyze(
    samples: Float32Array,
    sampleRate: number,
    spans: TimeSpan[],
    want: TraitRequest,
    hints: AnalysisHints = {},
  ): Promise<SpeakerTraits> {
    const traits: SpeakerTraits = { analyzers: {} };
    if (!want.age && !want.gender && !want.emotions) return traits;
    const features = await extractAcousticFeatures(samples, sampleRate, spans, {
      maxSeconds: this.options.maxSeconds,
      signal: hints.signal,
    });
    const voice = classifyVoice(features);
    if (!voice) return traits;
    if (want.age) {
      traits.age = voice.age;
      traits.analyzers.age = this.name;
    }
    if (want.gender) {
      traits.gender = voice.gender;
      traits.analyzers.gender = this.name;
    }
    if (want.emotions) {
      traits.emotions = scoreEmotions(features, voice.voiceClass);
      traits.analyzers.emotions = this.name;
    }
    return traits;
  }
}
