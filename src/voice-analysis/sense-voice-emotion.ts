/**
 * Emotion scores from the emotion tags SenseVoice writes per recognised segment (<|HAPPY|>,
 * <|SAD|>, ...). Score of an emotion = the share of the speaker's tagged speech time that carries
 * it, so NEUTRAL, SURPRISED and EMO_UNKNOWN time counts in the total but in none of the five.
 */
import type { TimeSpan } from '../engines/types.js';
import type { Emotions } from './types.js';
import type { EmotionTag } from './types.js';

export const SENSE_VOICE_EMOTION = 'sense-voice-emotion';

const TAG_TO_EMOTION: Record<string, keyof Emotions> = {
  HAPPY: 'happiness',
  SAD: 'sadness',
  ANGRY: 'anger',
  FEARFUL: 'fear',
  DISGUSTED: 'disgust',
};

/** "<|HAPPY|>", "happy", "HAPPY" → "HAPPY". */
export function normaliseEmotionTag(tag: string): string {
  return tag.replace(/^<\|/, '').replace(/\|>$/, '').trim().toUpperCase();
}

/**
 * Share of tagged time per emotion. With `spans`, only the part of each tag inside them counts
 * (one speaker's turns). Undefined when no tagged time remains.
 */
export function emotionsFromTags(tags: EmotionTag[], spans?: TimeSpan[]): Emotions | undefined {
  const totals: Emotions = { happiness: 0, sadness: 0, disgust: 0, fear: 0, anger: 0 };
  let all = 0;
  for (const tag of tags) {
    const seconds = spans ? overlapSeconds(tag, spans) : Math.max(0, tag.end - tag.start);
    if (seconds <= 0) continue;
    all += seconds;
    const field = TAG_TO_EMOTION[normaliseEmotionTag(tag.emotion)];
    if (field) totals[field] += seconds;
  }
  if (all <= 0) return undefined;
  const share = (v: number) => Math.round((v / all) * 1000) / 1000;
  return {
    happiness: share(totals.happiness),
    sadness: share(totals.sadness),
    disgust: share(totals.disgust),
    fear: share(totals.fear),
    anger: share(totals.anger),
  };
}

export function overlapSeconds(span: TimeSpan, spans: TimeSpan[]): number {
  let total = 0;
  for (const s of spans) total += Math.max(0, Math.min(span.end, s.end) - Math.max(span.start, s.start));
  return total;
}
