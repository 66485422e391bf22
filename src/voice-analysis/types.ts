/**
 * Speaker analysis: age group, gender and emotion scores for one speaker's speech
 * (the transcription result's `age`, `gender` and `emotions` fields).
 */
import type { TimeSpan } from '../engines/types.js';

export type AgeGroup = 'infant' | 'teenager' | 'adult' | 'old';

export interface Emotions {
  happiness: number;
  sadness: number;
  disgust: number;
  fear: number;
  anger: number;
}

export type TraitField = 'age' | 'gender' | 'emotions';

export interface SpeakerTraits {
  age?: AgeGroup;
  gender?: 'male' | 'female';
  /**
   * Each score in [0, 1]: the share of the speaker's speech that carries that emotion. The five
   * scores add up to at most 1; the remainder is neutral (or an emotion outside the five).
   */
  emotions?: Emotions;
  /** Which analyzer produced each field that is present, e.g. {gender: 'acoustic-baseline'}. */
  analyzers: Partial<Record<TraitField, string>>;
}

/** The fields the caller wants; an analyzer leaves the others out. */
export type TraitRequest = Record<TraitField, boolean>;

/** A recogniser's emotion label for a stretch of audio (SenseVoice: HAPPY, SAD, ANGRY, NEUTRAL...). */
export interface EmotionTag extends TimeSpan {
  emotion: string;
}

export interface AnalysisHints {
  /** Emotion tags the recogniser produced for segments of this speaker, times in seconds. */
  emotionTags?: EmotionTag[];
  signal?: AbortSignal;
}

/**
 * Analyses one speaker. `spans` are that speaker's speech (VAD spans, or the diarizer's turns of
 * one speaker), in seconds from the start of `samples`; nothing outside them is looked at. A field
 * that was asked for may still be missing when the speech gives nothing to judge it by (e.g. no
 * voiced frames); the caller leaves it out of the result then.
 */
export interface SpeakerAnalyzer {
  readonly name: string;
  analyze(
    samples: Float32Array,
    sampleRate: number,
    spans: TimeSpan[],
    want: TraitRequest,
    hints?: AnalysisHints,
  ): Promise<SpeakerTraits>;
}
