/**
 * Word error counting and the "raw engine" reference that the pipeline is measured against
 * (bench/stt.ts and test/transcription/fidelity.test.ts).
 */
import type { Recognizer } from '../../src/engines/types.js';
import { joinWords } from '../../src/transcription/words.js';
import { corpusEntries, type CorpusEntry } from '../engines/stt-fixtures.js';

/** Lower case, apostrophes kept, every other non-letter/digit a word break ("cold-hearted" → two words). */
export function normaliseWords(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[’‘]/g, "'")
    .replace(/[^\p{L}\p{N}']+/gu, ' ')
    .split(' ')
    .map((w) => w.replace(/^'+|'+$/g, ''))
    .filter(Boolean);
}

/** Word-level edit distance (substitutions + deletions + insertions). */
export function wordErrors(reference: string[], hypothesis: string[]): number {
  let previous = Array.from({ length: hypothesis.length + 1 }, (_, j) => j);
  for (let i = 1; i <= reference.length; i++) {
    const current = [i];
    for (let j = 1; j <= hypothesis.length; j++) {
      const substitution = previous[j - 1]! + (reference[i - 1] === hypothesis[j - 1] ? 0 : 1);
      current.push(Math.min(substitution, previous[j]! + 1, current[j - 1]! + 1));
    }
    previous = current;
  }
  return previous[hypothesis.length]!;
}

/** Word errors (substitutions, insertions, deletions) per reference word. */
export function wordErrorRate(reference: string, hypothesis: string): number {
  const ref = normaliseWords(reference);
  return ref.length === 0 ? 0 : wordErrors(ref, normaliseWords(hypothesis)) / ref.length;
}

/**
 * English recordings whose `text` is an exact reference: en/ (read speech) and emotion/ (RAVDESS
 * scripted sentences). The speechocean762 prompts are left out, as the corpus README says
 * (non-native readers who misread them), and so are the format variants (the JFK recording again).
 */
export function labelledEnglishEntries(): CorpusEntry[] {
  return corpusEntries().filter((e) => e.text && e.language === 'en' && (e.file.startsWith('en/') || e.file.startsWith('emotion/')));
}

/**
 * The recogniser on its own, as its upstream examples run it: a streaming model on the whole
 * recording; a model with a window of its own (or `windowSeconds`) on consecutive fixed windows.
 * `samples` are at the recogniser's rate.
 */
export async function rawTranscript(recognizer: Recognizer, samples: Float32Array, language = 'en', windowSeconds = 30): Promise<string> {
  if (recognizer.streaming) return (await recognizer.recognize(samples, { language })).text;
  const window = Math.round((recognizer.windowSeconds ?? windowSeconds) * recognizer.sampleRate);
  const texts: string[] = [];
  for (let at = 0; at < samples.length; at += window) {
    texts.push((await recognizer.recognize(samples.subarray(at, at + window), { language })).text);
  }
  return joinWords(texts);
}
