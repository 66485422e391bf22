/**
 * Keyword boosting measured on the labelled corpus (bench/keywords.ts calibrates with it,
 * test/transcription/keyword-accuracy.test.ts asserts with it).
 *
 * The files: every English recording with a reference text, each recording once: en/ (read
 * speech), emotion/ (RAVDESS sentences) and age_gender/ (speechocean762 prompts, read by
 * non-native speakers: a misread word cannot be recovered by boosting it, which only makes recall
 * harder). formats/ is left out: its files are re-encodings of the JFK recording in en/, and its
 * stereo file's text is a recogniser's output, not a reference.
 *
 * For each file, the keywords are the reference words the plain decode missed (distinct, lower
 * case). Recall: the share of those words the boosted decode hears. WER: word errors over the
 * reference words, boosted against plain. False alarms: a list of words the file does not contain
 * (other files' missed words) given alone as keywords, and how many of them the decode then hears.
 */
import { decodeAudio } from '../../src/audio/decode.js';
import type { PcmAudio } from '../../src/audio/pcm.js';
import { readFileSync } from 'node:fs';
import { corpusEntries, type CorpusEntry } from '../engines/stt-fixtures.js';
import { corpusFile } from './models.js';
import { normaliseWords, wordErrors } from './transcript-accuracy.js';

/** Unspoken keywords given to each file in the false-alarm measure. */
export const FALSE_KEYWORDS_PER_FILE = 4;

/** The recordings keyword boosting is measured on, in manifest order. */
export function keywordCorpusEntries(): CorpusEntry[] {
  return corpusEntries().filter((e) => e.language === 'en' && e.text && /^(en|emotion|age_gender)\//.test(e.file));
}

/** Calibration takes the files at even positions, the held-out half those at odd ones. */
export function halves<T>(items: T[]): { calibration: T[]; heldOut: T[] } {
  return { calibration: items.filter((_, i) => i % 2 === 0), heldOut: items.filter((_, i) => i % 2 === 1) };
}

export interface KeywordClip {
  file: string;
  audio: PcmAudio;
  reference: string[];
  /** The plain decode's words (normalised). */
  plain: string[];
  /** Reference words the plain decode missed: the keywords. */
  missed: string[];
  /** Words the recording does not contain: the false-alarm keywords. */
  unspoken: string[];
}

/** A decode of the audio, keywords given as `keywords` takes them; returns the transcript. */
export type Transcribe = (audio: PcmAudio, keywords?: Array<{ word: string; weight: number }>) => Promise<string>;

export async function loadKeywordClips(entries: CorpusEntry[], transcribe: Transcribe): Promise<KeywordClip[]> {
  const clips: KeywordClip[] = [];
  for (const entry of entries) {
    const audio = await decodeAudio(readFileSync(corpusFile(entry.file)));
    const reference = normaliseWords(entry.text!);
    const plain = normaliseWords(await transcribe(audio));
    const heard = new Set(plain);
    clips.push({ file: entry.file, audio, reference, plain, missed: [...new Set(reference)].filter((w) => !heard.has(w)), unspoken: [] });
  }
  // Each file's unspoken words: the missed words of the files after it (wrapping round) that it does not say.
  clips.forEach((clip, i) => {
    const said = new Set(clip.reference);
    for (let k = 1; k < clips.length && clip.unspoken.length < FALSE_KEYWORDS_PER_FILE; k++) {
      for (const w of clips[(i + k) % clips.length]!.missed) {
        if (!said.has(w) && !clip.unspoken.includes(w) && clip.unspoken.length < FALSE_KEYWORDS_PER_FILE) clip.unspoken.push(w);
      }
    }
  });
  return clips;
}

export interface KeywordFigures {
  files: number;
  referenceWords: number;
  missedWords: number;
  plainErrors: number;
  /** Missed words the boosted decode heard. */
  recovered: number;
  boostedErrors: number;
}

export const recall = (f: KeywordFigures) => f.recovered / Math.max(1, f.missedWords);
export const plainWer = (f: KeywordFigures) => f.plainErrors / f.referenceWords;
export const boostedWer = (f: KeywordFigures) => f.boostedErrors / f.referenceWords;

/** Recall and WER with each file's missed words boosted at `weight` (an intensifier, as `keywords` takes it). */
export async function measureRecall(clips: KeywordClip[], weight: number, transcribe: Transcribe): Promise<KeywordFigures> {
  const figures: KeywordFigures = { files: clips.length, referenceWords: 0, missedWords: 0, plainErrors: 0, recovered: 0, boostedErrors: 0 };
  for (const clip of clips) {
    const words = clip.missed.length ? normaliseWords(await transcribe(clip.audio, clip.missed.map((word) => ({ word, weight })))) : clip.plain;
    const heard = new Set(words);
    figures.referenceWords += clip.reference.length;
    figures.missedWords += clip.missed.length;
    figures.plainErrors += wordErrors(clip.reference, clip.plain);
    figures.recovered += clip.missed.filter((w) => heard.has(w)).length;
    figures.boostedErrors += wordErrors(clip.reference, words);
  }
  return figures;
}

export interface FalseAlarmFigures {
  /** Unspoken keywords given, over all files. */
  given: number;
  /** Of those, how many the decode heard. */
  heard: number;
  /** Word errors with the unspoken keywords boosted, minus those of the plain decode. */
  addedErrors: number;
  referenceWords: number;
}

/** How often words that were not said come out when boosted at `weight`. */
export async function measureFalseAlarms(clips: KeywordClip[], weight: number, transcribe: Transcribe): Promise<FalseAlarmFigures> {
  const figures: FalseAlarmFigures = { given: 0, heard: 0, addedErrors: 0, referenceWords: 0 };
  for (const clip of clips) {
    const words = normaliseWords(await transcribe(clip.audio, clip.unspoken.map((word) => ({ word, weight }))));
    const heard = new Set(words);
    figures.given += clip.unspoken.length;
    figures.heard += clip.unspoken.filter((w) => heard.has(w)).length;
    figures.addedErrors += wordErrors(clip.reference, words) - wordErrors(clip.reference, clip.plain);
    figures.referenceWords += clip.reference.length;
  }
  return figures;
}
