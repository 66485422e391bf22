/**
 * Speaker labels for words and the utterances built from them: each word
 * takes the diarizer's speaker that overlaps it most, and speakers are renamed speaker_0,
 * speaker_1, … in the order they first speak. A word's speaker confidence is that of the turns it
 * was given by (the diarizer's measure, see engines/speaker-confidence.ts).
 */
import type { SpeakerTurn } from '../engines/types.js';
import type { Utterance, Word } from './types.js';
import type { TimedWord } from './words.js';

export function speakerLabel(index: number): string {
  return `speaker_${index}`;
}

/** `speaker_2` → 2: the current layout's integer speaker. */
export function speakerIndex(label: string): number {
  return Number(label.slice(label.lastIndexOf('_') + 1));
}

/** Every word is speaker_0: the answer when diarization was not asked for. */
export function labelSingleSpeaker(words: TimedWord[]): Word[] {
  return words.map((w) => ({ ...w, speaker: speakerLabel(0) }));
}

/**
 * The diarizer's speaker with the largest overlap per word; a word that no turn touches takes the
 * nearest turn's speaker. Turns need not be sorted. Without turns every word is speaker_0.
 */
export function assignSpeakers(words: TimedWord[], turns: SpeakerTurn[]): Word[] {
  if (turns.length === 0) return labelSingleSpeaker(words);
  const sorted = [...turns].sort((a, b) => a.start - b.start);
  const labels = new Map<number, string>();
  // Turns can nest (a long turn containing short ones): a turn can be skipped for good only when it
  // and every turn before it end before the current word, since words are ordered.
  const endedBy: number[] = [];
  sorted.forEach((t, i) => endedBy.push(Math.max(t.end, i > 0 ? endedBy[i - 1]! : -Infinity)));
  let first = 0;
  return words.map((word) => {
    while (first < sorted.length && endedBy[first]! <= word.start) first++;
    const overlap = new Map<number, number>();
    /** Per speaker: seconds of overlap with a turn that has a confidence, and those seconds × it. */
    const scored = new Map<number, { seconds: number; sum: number }>();
    for (let i = first; i < sorted.length && sorted[i]!.start < word.end; i++) {
      const t = sorted[i]!;
      const seconds = Math.min(word.end, t.end) - Math.max(word.start, t.start);
      if (seconds > 0) {
        overlap.set(t.speaker, (overlap.get(t.speaker) ?? 0) + seconds);
        if (t.confidence !== undefined) {
          const sc = scored.get(t.speaker) ?? { seconds: 0, sum: 0 };
          sc.seconds += seconds;
          sc.sum += seconds * t.confidence;
          scored.set(t.speaker, sc);
        }
      }
    }
    let speaker: number | undefined;
    let best = 0;
    for (const [s, seconds] of overlap) {
      if (seconds > best) {
        best = seconds;
        speaker = s;
      }
    }
    // The word's speaker confidence: that of the turns of its speaker it lies in, weighted by overlap.
    let confidence: number | undefined;
    if (speaker === undefined) {
      const nearest = nearestTurn(sorted, word);
      speaker = nearest.speaker;
      confidence = nearest.confidence;
    } else {
      const sc = scored.get(speaker);
      if (sc && sc.seconds > 0) confidence = sc.sum / sc.seconds;
    }
    let label = labels.get(speaker);
    if (!label) {
      label = speakerLabel(labels.size);
      labels.set(speaker, label);
    }
    return { ...word, speaker: label, ...(confidence !== undefined && { speakerConfidence: Math.round(confidence * 1000) / 1000 }) };
  });
}

function nearestTurn(turns: SpeakerTurn[], word: TimedWord): SpeakerTurn {
  const middle = (word.start + word.end) / 2;
  let best = turns[0]!;
  let bestDistance = Infinity;
  for (const t of turns) {
    const distance = middle < t.start ? t.start - middle : middle > t.end ? middle - t.end : 0;
    if (distance < bestDistance) {
      bestDistance = distance;
      best = t;
    }
  }
  return best;
}

/** Consecutive words of one speaker, split where the speaker changes or a pause exceeds `pauseSeconds`. */
export function buildUtterances(words: Word[], pauseSeconds: number): Utterance[] {
  const utterances: Utterance[] = [];
  let current: { words: string[]; start: number; end: number; speaker: string } | undefined;
  for (const word of words) {
    if (current && current.speaker === word.speaker && word.start - current.end <= pauseSeconds) {
      current.words.push(word.word);
      current.end = word.end;
      continue;
    }
    if (current) utterances.push(toUtterance(current));
    current = { words: [word.word], start: word.start, end: word.end, speaker: word.speaker };
  }
  if (current) utterances.push(toUtterance(current));
  return utterances;
}

function toUtterance(u: { words: string[]; start: number; end: number; speaker: string }): Utterance {
  return { text: u.words.join(' '), start: u.start, end: u.end, speaker: u.speaker };
}
