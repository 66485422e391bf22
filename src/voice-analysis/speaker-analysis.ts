/**
 * Speaker analysis as the transcription pipeline calls it: picks a backend per field from what is
 * installed, and runs it on one speaker's speech or on each diarized speaker.
 *
 * Backend per field, best first:
 *   emotions  SenseVoice emotion tags of the speaker's segments (when the recogniser gave any),
 *             else the acoustic baseline;
 *   age       AudioSet tagger (when a pack is installed and it found speaker evidence),
 *             else the acoustic baseline;
 *   gender    as age.
 * The result names the backend of each field in `analyzers`.
 */
import type { AudioTagger, TimeSpan } from '../engines/types.js';
import { AcousticBaselineAnalyzer } from './acoustic-baseline.js';
import { AudioTaggingAnalyzer, type AudioTaggingRunner } from './audio-tagging.js';
import { emotionsFromTags, overlapSeconds, SENSE_VOICE_EMOTION } from './sense-voice-emotion.js';
import type { AnalysisHints, SpeakerAnalyzer, SpeakerTraits, TraitRequest } from './types.js';

export interface SpeakerAnalysisOptions {
  /** An AudioSet tagger (src/engines/server/audio-tagging.ts), or its run function. */
  audioTagging?: AudioTaggingRunner | AudioTagger;
  /** Speech per speaker the acoustic baseline looks at, seconds (default 60). */
  maxSecondsPerSpeaker?: number;
  /** Told when a model-backed analyzer failed and the baseline answered instead. */
  onFallback?: (analyzer: string, error: unknown) => void;
}

export function createSpeakerAnalysis(options: SpeakerAnalysisOptions = {}): SpeakerAnalyzer {
  const baseline = new AcousticBaselineAnalyzer({ maxSeconds: options.maxSecondsPerSpeaker });
  const tagging = options.audioTagging
    ? typeof options.audioTagging === 'function'
      ? new AudioTaggingAnalyzer(options.audioTagging)
      : new AudioTaggingAnalyzer((samples, rate) => (options.audioTagging as AudioTagger).run(samples, rate))
    : undefined;

  return {
    name: 'speaker-analysis',
    async analyze(samples, sampleRate, spans, want, hints: AnalysisHints = {}) {
      const traits: SpeakerTraits = { analyzers: {} };
      if (want.emotions && hints.emotionTags && hints.emotionTags.length > 0) {
        const emotions = emotionsFromTags(hints.emotionTags, spans);
        if (emotions) {
          traits.emotions = emotions;
          traits.analyzers.emotions = SENSE_VOICE_EMOTION;
        }
      }
      if (tagging && (want.age || want.gender)) {
        try {
          merge(traits, await tagging.analyze(samples, sampleRate, spans, { age: want.age, gender: want.gender, emotions: false }, hints));
        } catch (error) {
          if (hints.signal?.aborted) throw error;
          options.onFallback?.(tagging.name, error);
        }
      }
      const rest: TraitRequest = {
        age: want.age && traits.age === undefined,
        gender: want.gender && traits.gender === undefined,
        emotions: want.emotions && traits.emotions === undefined,
      };
      if (rest.age || rest.gender || rest.emotions) merge(traits, await baseline.analyze(samples, sampleRate, spans, rest, hints));
      return traits;
    },
  };
}

function merge(into: SpeakerTraits, from: SpeakerTraits): void {
  if (from.age !== undefined && into.age === undefined) {
    into.age = from.age;
    into.analyzers.age = from.analyzers.age;
  }
  if (from.gender !== undefined && into.gender === undefined) {
    into.gender = from.gender;
    into.analyzers.gender = from.analyzers.gender;
  }
  if (from.emotions !== undefined && into.emotions === undefined) {
    into.emotions = from.emotions;
    into.analyzers.emotions = from.analyzers.emotions;
  }
}

/** Sorted, overlap-free copy of `spans` (VAD and diarizer output may touch or overlap). */
export function mergeSpans(spans: TimeSpan[]): TimeSpan[] {
  const sorted = spans.filter((s) => s.end > s.start).sort((a, b) => a.start - b.start);
  const out: TimeSpan[] = [];
  for (const s of sorted) {
    const last = out[out.length - 1];
    if (last && s.start <= last.end) last.end = Math.max(last.end, s.end);
    else out.push({ start: s.start, end: s.end });
  }
  return out;
}

/** A diarizer turn with its final label (speaker_0, speaker_1, ...). */
export interface LabelledTurn extends TimeSpan {
  speaker: string;
}

/** The speaker with the most speech; the earliest to appear on a tie. Undefined without turns. */
export function dominantSpeaker(turns: LabelledTurn[]): string | undefined {
  let best: string | undefined;
  let bestSeconds = -1;
  for (const [speaker, seconds] of speechSecondsBySpeaker(turns)) {
    if (seconds > bestSeconds) {
      best = speaker;
      bestSeconds = seconds;
    }
  }
  return best;
}

/**
 * Each diarized speaker in order of first appearance, analysed on their own turns (intersected with
 * the VAD speech spans when given), plus the dominant speaker whose traits go at the top level of
 * the result. Speakers are analysed one after another: the baseline is CPU-bound.
 */
export async function analyzeSpeakers(
  analyzer: SpeakerAnalyzer,
  samples: Float32Array,
  sampleRate: number,
  turns: LabelledTurn[],
  want: TraitRequest,
  hints: AnalysisHints & { speechSpans?: TimeSpan[] } = {},
): Promise<{ dominant: string | undefined; speakers: { speaker: string; traits: SpeakerTraits }[] }> {
  const speakers: { speaker: string; traits: SpeakerTraits }[] = [];
  for (const speaker of speechSecondsBySpeaker(turns).keys()) {
    let spans = mergeSpans(turns.filter((t) => t.speaker === speaker));
    if (hints.speechSpans) spans = intersect(spans, mergeSpans(hints.speechSpans));
    const emotionTags = hints.emotionTags?.filter((tag) => overlapSeconds(tag, spans) > 0);
    const traits = await analyzer.analyze(samples, sampleRate, spans, want, { emotionTags, signal: hints.signal });
    speakers.push({ speaker, traits });
  }
  return { dominant: dominantSpeaker(turns), speakers };
}

/** Speech seconds per speaker, keys in order of first appearance. */
function speechSecondsBySpeaker(turns: LabelledTurn[]): Map<string, number> {
  const seconds = new Map<string, number>();
  for (const t of [...turns].sort((a, b) => a.start - b.start)) {
    seconds.set(t.speaker, (seconds.get(t.speaker) ?? 0) + Math.max(0, t.end - t.start));
  }
  return seconds;
}

function intersect(a: TimeSpan[], b: TimeSpan[]): TimeSpan[] {
  const out: TimeSpan[] = [];
  for (const x of a) {
    for (const y of b) {
      const start = Math.max(x.start, y.start);
      const end = Math.min(x.end, y.end);
      if (end > start) out.push({ start, end });
    }
  }
  return out;
}
