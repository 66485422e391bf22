/**
 * Age group and gender from an AudioSet audio-tagging model (CED or Zipformer pack, run by
 * src/engines/server/audio-tagging.ts). AudioSet has sound classes for who
 * is speaking; this file maps their probabilities to the result's age and gender fields.
 */
import type { AudioEvent, TimeSpan } from '../engines/types.js';
import { AbortedError } from '../errors.js';
import type { AgeGroup } from './types.js';
import { ANALYSIS_RATE, toAnalysisRate } from './analysis-rate.js';
import type { AnalysisHints, SpeakerAnalyzer, SpeakerTraits, TraitRequest } from './types.js';

export const AUDIO_TAGGING = 'audio-tagging';

export type { AudioEvent };

/** Runs the tagger on 16 kHz mono samples; all classes or the top K, in any order. */
export type AudioTaggingRunner = (samples: Float32Array, sampleRate: number) => Promise<AudioEvent[]>;

/** AudioSet ontology display names (class_labels_indices.csv) this mapping reads. */
export const SPEAKER_CLASSES = {
  male: 'Male speech, man speaking',
  female: 'Female speech, woman speaking',
  child: 'Child speech, kid speaking',
  babyCry: 'Baby cry, infant cry',
  babbling: 'Babbling',
} as const;

/**
 * Below this probability a class is not taken as evidence. AudioSet taggers put most of the mass
 * of ordinary speech on the generic "Speech" class and give the who-is-speaking classes small but
 * ordered probabilities; 0.05 keeps those while ignoring noise-level scores.
 */
export const MIN_CLASS_PROBABILITY = 0.05;

/** AudioSet clips are 10 s; the taggers are trained on that length. */
const CHUNK_SECONDS = 10;
/** A minute of a speaker's speech is plenty for who-is-speaking classes. */
const MAX_CHUNKS = 6;

export type SpeakerClassScores = Record<keyof typeof SPEAKER_CLASSES, number>;

/** Probability of each speaker class in `events` (0 when absent). Names compare case-insensitively. */
export function speakerClassScores(events: AudioEvent[]): SpeakerClassScores {
  const byName = new Map(events.map((e) => [e.name.trim().toLowerCase(), e.prob]));
  const score = (name: string) => byName.get(name.toLowerCase()) ?? 0;
  return {
    male: score(SPEAKER_CLASSES.male),
    female: score(SPEAKER_CLASSES.female),
    child: score(SPEAKER_CLASSES.child),
    babyCry: score(SPEAKER_CLASSES.babyCry),
    babbling: score(SPEAKER_CLASSES.babbling),
  };
}

/**
 * The mapping. age: infant when cry/babble beats every speech class; teenager (children and teens,
 * as in the acoustic baseline) when child speech beats male and female speech; adult when male or
 * female speech is evidence at all. AudioSet has no class for old voices, so never `old`.
 * gender: the likelier of male and female speech. A field without evidence above
 * MIN_CLASS_PROBABILITY is left out so that another analyzer can fill it.
 */
export function traitsFromSpeakerScores(s: SpeakerClassScores): { age?: AgeGroup; gender?: 'male' | 'female' } {
  const adult = Math.max(s.male, s.female);
  const infant = Math.max(s.babyCry, s.babbling);
  const out: { age?: AgeGroup; gender?: 'male' | 'female' } = {};
  if (infant >= MIN_CLASS_PROBABILITY && infant > s.child && infant > adult) out.age = 'infant';
  else if (s.child >= MIN_CLASS_PROBABILITY && s.child > adult) out.age = 'teenager';
  else if (adult >= MIN_CLASS_PROBABILITY) out.age = 'adult';
  if (adult >= MIN_CLASS_PROBABILITY) out.gender = s.male >= s.female ? 'male' : 'female';
  return out;
}

/** Age and gender through an AudioSet tagger; never emotions. */
export class AudioTaggingAnalyzer implements SpeakerAnalyzer {
  readonly name = AUDIO_TAGGING;

  constructor(private readonly run: AudioTaggingRunner) {}

  async analyze(
    samples: Float32Array,
    sampleRate: number,
    spans: TimeSpan[],
    want: TraitRequest,
    hints: AnalysisHints = {},
  ): Promise<SpeakerTraits> {
    const traits: SpeakerTraits = { analyzers: {} };
    if (!want.age && !want.gender) return traits;
    const chunks = await speechChunks(samples, sampleRate, spans);
    if (chunks.length === 0) return traits;
    // Duration-weighted mean of each class over the chunks.
    const sum: SpeakerClassScores = { male: 0, female: 0, child: 0, babyCry: 0, babbling: 0 };
    let weight = 0;
    for (const chunk of chunks) {
      if (hints.signal?.aborted) throw new AbortedError();
      const scores = speakerClassScores(await this.run(chunk, ANALYSIS_RATE));
      for (const key of Object.keys(sum) as (keyof SpeakerClassScores)[]) sum[key] += scores[key] * chunk.length;
      weight += chunk.length;
    }
    for (const key of Object.keys(sum) as (keyof SpeakerClassScores)[]) sum[key] /= weight;
    const mapped = traitsFromSpeakerScores(sum);
    if (want.age && mapped.age) {
      traits.age = mapped.age;
      traits.analyzers.age = this.name;
    }
    if (want.gender && mapped.gender) {
      traits.gender = mapped.gender;
      traits.analyzers.gender = this.name;
    }
    return traits;
  }
}

/** The speaker's speech, joined span after span at 16 kHz and cut into ≤ 10 s chunks (≥ 1 s each). */
async function speechChunks(samples: Float32Array, sampleRate: number, spans: TimeSpan[]): Promise<Float32Array[]> {
  const parts: Float32Array[] = [];
  let length = 0;
  const limit = CHUNK_SECONDS * MAX_CHUNKS * ANALYSIS_RATE;
  for (const span of [...spans].sort((a, b) => a.start - b.start)) {
    if (length >= limit) break;
    const start = Math.max(0, Math.floor(span.start * sampleRate));
    const end = Math.min(samples.length, Math.ceil(span.end * sampleRate));
    if (end <= start) continue;
    const part = await toAnalysisRate(samples.subarray(start, end), sampleRate);
    parts.push(part);
    length += part.length;
  }
  const joined = new Float32Array(Math.min(length, limit));
  let at = 0;
  for (const part of parts) {
    const take = Math.min(part.length, joined.length - at);
    joined.set(part.subarray(0, take), at);
    at += take;
  }
  const chunkLength = CHUNK_SECONDS * ANALYSIS_RATE;
  const chunks: Float32Array[] = [];
  for (let from = 0; from < joined.length; from += chunkLength) {
    const chunk = joined.subarray(from, Math.min(joined.length, from + chunkLength));
    if (chunk.length >= ANALYSIS_RATE || chunks.length === 0) chunks.push(chunk);
  }
  return chunks.filter((c) => c.length > 0);
}
