/**
 * Where each word of a synthesised piece of text sits in its audio, for engines that report no
 * word times. The audio is measured, not guessed from the text alone: silence before and after the
 * speech is left out, the longest pauses inside it are taken as the phrase breaks of the text
 * (commas, sentence ends: where a speaker pauses), and within a phrase each word takes a share of
 * the time in proportion to its spoken length (vowel groups, i.e. roughly syllables, plus its letters).
 */

export interface TimedWord {
  word: string;
  /** Seconds from the start of the request's audio. */
  start: number;
  end: number;
}

/** Loudness is measured over frames of this many seconds. */
const FRAME_SECONDS = 0.01;
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
  private partial = 0;
  private partialCount = 0;
  private samples = 0;

  /**
   * @param text the piece's text as it was spoken (after normalisation)
   * @param offsetSeconds where the piece's audio starts in the request's audio
   */
  constructor(
    private readonly text: string,
    private readonly offsetSeconds: number,
    private readonly sampleRate: number,
  ) {
    this.frameSamples = Math.max(1, Math.round(sampleRate * FRAME_SECONDS));
  }

  observe(samples: Float32Array): void {
    for (const v of samples) {
      this.partial += v * v;
      if (++this.partialCount === this.frameSamples) {
        this.energy.push(this.partial / this.frameSamples);
        this.partial = 0;
        this.partialCount = 0;
      }
    }
    this.samples += samples.length;
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

  private round(seconds: number): number {
    return Math.round((this.offsetSeconds + seconds) * 1000) / 1000;
  }
}
