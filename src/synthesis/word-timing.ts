/**
 * Where each word of a synthesised piece of text sits in its audio, for engines that report no
 * word times. The audio is measured, not guessed from the text alone: silence before and after the
 * speech is left out, the longest pauses inside it are taken as the phrase breaks of the text
 * (commas, sentence ends: where a speaker pauses), and within a phrase each word takes a share of
 * the time in proportion to its spoken length (vowel groups, i.e. roughly syllables, plus its letters).
 * An engine that reports where it started each word (eSpeak NG) is taken at its word: each word
 * starts at the first sound at or after its mark and ends with the last sound before the next word.
 */
import { FrameLoudness } from '../audio/pipeline.js';
import type { EngineWordMark } from '../engines/types.js';

export interface TimedWord {
  word: string;
  /** Seconds from the start of the request's audio. */
  start: number;
  end: number;
}

/** Loudness is measured over frames of this many seconds. */
const FRAME_SECONDS = 0.01;

/** Samples of one loudness frame at `sampleRate` (what a pipeline's `loudnessFrame` must be for WordTimer). */
export function loudnessFrameSamples(sampleRate: number): number {
  return Math.max(1, Math.round(sampleRate * FRAME_SECONDS));
}
/** A frame below this fraction of the piece's loudest frame is silence. */
const SILENCE_RATIO = 0.05;
/** A pause inside speech shorter than this is a gap between sounds, not a phrase break. */
const MIN_PAUSE_SECONDS = 0.07;

/** A word ending a phrase: a speaker pauses after it. */
const PHRASE_END = /[,;:.!?…。！？、]["'”’)\]]*$/;

function spokenWeight(word: string): number {
  const letters = word.replace(/[^\p{L}\p{N}]/gu, '');
  const syllables = letters.match(/[aeiouyàâäéèêëïîôöùûü]+/giu)?.length ?? 0;
  return Math.max(1, syllables * 2 + letters.length * 0.5);
}

/** Collects one piece's audio as it streams, then times the piece's words over it. */
export class WordTimer {
  private readonly frameSamples: number;
  /** Mean square per frame. */
  private readonly energy: number[] = [];
  private readonly meter: FrameLoudness;
  private samples = 0;
  private marks: EngineWordMark[] | undefined;

  /**
   * @param text the piece's text as it was spoken (after normalisation)
   * @param offsetSeconds where the piece's audio starts in the request's audio
   */
  constructor(
    private readonly text: string,
    private readonly offsetSeconds: number,
    private readonly sampleRate: number,
  ) {
    this.frameSamples = loudnessFrameSamples(sampleRate);
    this.meter = new FrameLoudness(this.frameSamples);
  }

  observe(samples: Float32Array): void {
    this.observeLoudness(this.meter.push(samples), samples.length);
  }

  /**
   * The piece's next `samples` samples, measured elsewhere (a pipeline with `loudnessFrame` of
   * loudnessFrameSamples(rate), begun with the piece): the frames they complete.
   */
  observeLoudness(frames: ArrayLike<number>, samples: number): void {
    for (let i = 0; i < frames.length; i++) this.energy.push(frames[i]!);
    this.samples += samples;
  }

  /** Where the engine started each word: `start` indexes the text, `seconds` the piece's audio. */
  engineMarks(marks: EngineWordMark[]): void {
    this.marks = marks;
  }

  words(): TimedWord[] {
    const words = this.text.split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w));
    if (words.length === 0) return [];
    const frame = this.frameSamples / this.sampleRate;
    const total = this.samples / this.sampleRate;
    const peak = Math.max(0, ...this.energy);
    const loud = this.energy.map((e) => peak > 0 && e >= peak * SILENCE_RATIO);
    const first = loud.indexOf(true);
    const last = loud.lastIndexOf(true);
    const speech = first < 0 ? { start: 0, end: total } : { start: first * frame, end: Math.min(total, (last + 1) * frame) };
    const marked = this.marks && this.fromMarks(this.marks, loud, frame, speech.end);
    if (marked) return marked;

    // Phrases of the text, and pauses of the audio: as many of the longest pauses as there are breaks.
    const phrases: string[][] = [[]];
    for (const [i, word] of words.entries()) {
      phrases.at(-1)!.push(word);
      if (PHRASE_END.test(word) && i < words.length - 1) phrases.push([]);
    }
    const pauses: { start: number; end: number }[] = [];
    for (let i = first, run = -1; first >= 0 && i <= last; i++) {
      if (!loud[i] && run < 0) run = i;
      if (loud[i] && run >= 0) {
        if ((i - run) * frame >= MIN_PAUSE_SECONDS) pauses.push({ start: run * frame, end: i * frame });
        run = -1;
      }
    }
    const breaks = phrases.length - 1;
    let spans: { start: number; end: number }[];
    if (breaks > 0 && pauses.length >= breaks) {
      const chosen = [...pauses].sort((a, b) => b.end - b.start - (a.end - a.start)).slice(0, breaks).sort((a, b) => a.start - b.start);
      spans = phrases.map((_, i) => ({ start: i === 0 ? speech.start : chosen[i - 1]!.end, end: i === breaks ? speech.end : chosen[i]!.start }));
    } else {
      spans = [speech];
      phrases.splice(0, phrases.length, words);
    }

    const timed: TimedWord[] = [];
    for (const [i, phrase] of phrases.entries()) {
      const span = spans[i]!;
      const weights = phrase.map(spokenWeight);
      const sum = weights.reduce((a, b) => a + b, 0);
      let at = span.start;
      for (const [j, word] of phrase.entries()) {
        const end = at + ((span.end - span.start) * weights[j]!) / sum;
        timed.push({ word, start: this.round(at), end: this.round(end) });
        at = end;
      }
    }
    return timed;
  }

  /**
   * The words at the engine's marks. A word the engine spoke together with the one before it
   * (eSpeak says "in the" as one word) has no mark of its own: the two share the first one's time
   * by spoken length. Undefined when no word has a mark (the engine read the text another way).
   */
  private fromMarks(marks: EngineWordMark[], loud: boolean[], frame: number, speechEnd: number): TimedWord[] | undefined {
    const tokens: { word: string; mark?: number }[] = [];
    for (const token of this.text.matchAll(/\S+/g)) {
      if (!/[\p{L}\p{N}]/u.test(token[0])) continue;
      const from = token.index;
      const to = from + token[0].length;
      tokens.push({ word: token[0], mark: marks.find((m) => m.start >= from && m.start < to)?.seconds });
    }
    if (!tokens.some((t) => t.mark !== undefined)) return undefined;
    const frameAt = (seconds: number) => Math.max(0, Math.floor(seconds / frame + 1e-9));
    // The mark is where the engine began the word, pause before it included: its sound starts at
    // the first loud frame from there (before the next mark).
    const soundFrom = (at: number, before: number) => {
      for (let f = frameAt(at); f < loud.length && f * frame < before; f++) if (loud[f]) return Math.max(at, f * frame);
      return at;
    };
    const anchors = tokens.flatMap((t, i) => (t.mark === undefined ? [] : [i]));
    const starts: number[] = [];
    for (const [k, i] of anchors.entries()) {
      const groupEnd = anchors[k + 1] ?? tokens.length;
      const nextMark = anchors[k + 1] === undefined ? speechEnd : tokens[anchors[k + 1]!]!.mark!;
      // Words before the first mark start the group of the first one.
      const groupStart = k === 0 ? 0 : i;
      const a = soundFrom(tokens[i]!.mark!, nextMark);
      const weights = tokens.slice(groupStart, groupEnd).map((t) => spokenWeight(t.word));
      const sum = weights.reduce((x, y) => x + y, 0);
      let share = 0;
      for (const w of weights) {
        starts.push(a + (Math.max(0, nextMark - a) * share) / sum);
        share += w;
      }
    }
    return tokens.map(({ word }, i) => {
      const start = starts[i]!;
      const next = i + 1 < tokens.length ? starts[i + 1]! : speechEnd;
      // It ends after the last loud frame before the next word.
      let end = Math.max(start, next);
      for (let f = frameAt(next) - 1; f >= 0 && (f + 1) * frame > start; f--) {
        if (loud[f]) {
          end = Math.min(next, (f + 1) * frame);
          break;
        }
      }
      return { word, start: this.round(start), end: this.round(Math.max(start, end)) };
    });
  }

  private round(seconds: number): number {
    return Math.round((this.offsetSeconds + seconds) * 1000) / 1000;
  }
}
