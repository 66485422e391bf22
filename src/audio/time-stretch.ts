/**
 * Tempo change without pitch change (WSOLA: waveform-similarity overlap-add), streaming: speech
 * goes in as it is made and comes out a frame hop later. Frames of 30 ms, Hann-windowed, are laid
 * down every 15 ms of output; each is taken from near its nominal place in the input (within
 * ±10 ms), where it best continues the previous frame, so periods line up and no phasing is heard.
 * Used for the speeds OpenAI's API allows beyond what the engines do themselves (0.25-0.5, 2-4).
 */

import { concatFloat32 } from './channel-mix.js';

const FRAME_SECONDS = 0.03;
const TOLERANCE_SECONDS = 0.01;

export class TimeStretcher {
  private readonly frame: number;
  private readonly hop: number;
  private readonly tolerance: number;
  private readonly window: Float32Array;
  /** Input not yet consumed; `start` is the absolute index of its first sample. */
  private input = new Float32Array(0);
  private start = 0;
  private received = 0;
  private produced = 0;
  /** Absolute input position where the next frame nominally starts. */
  private nominal = 0;
  /** Absolute start of the previous frame taken, or -1 before the first. */
  private previous = -1;
  /** The second half of the previous windowed frame, waiting for the next frame's first half. */
  private tail: Float32Array;

  /** `tempo` > 1 speeds up (2 = half as long), < 1 slows down. */
  constructor(
    readonly tempo: number,
    sampleRate: number,
  ) {
    if (!(tempo > 0)) throw new RangeError(`tempo must be positive, got ${tempo}`);
    this.hop = Math.max(1, Math.round((FRAME_SECONDS * sampleRate) / 2));
    this.frame = this.hop * 2;
    this.tolerance = Math.round(TOLERANCE_SECONDS * sampleRate);
    // Periodic Hann: two windows a half-frame apart sum to exactly 1.
    this.window = new Float32Array(this.frame);
    for (let i = 0; i < this.frame; i++) this.window[i] = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / this.frame);
    this.tail = new Float32Array(this.hop);
  }

  push(samples: Float32Array): Float32Array {
    this.append(samples);
    this.received += samples.length;
    return this.run(false);
  }

  /** The rest: the input is padded with silence so its last frames come out, and the output cut to length/tempo. */
  flush(): Float32Array {
    this.append(new Float32Array(this.frame + 2 * this.tolerance + this.hop));
    const out = this.run(true);
    const expected = Math.round(this.received / this.tempo);
    const keep = Math.max(0, Math.min(out.length, expected - (this.produced - out.length)));
    return out.subarray(0, keep);
  }

  private append(samples: Float32Array): void {
    const joined = new Float32Array(this.input.length + samples.length);
    joined.set(this.input);
    joined.set(samples, this.input.length);
    this.input = joined;
  }

  private run(ending: boolean): Float32Array {
    const pieces: Float32Array[] = [];
    const end = this.start + this.input.length;
    for (;;) {
      if (ending && this.nominal >= this.received) break;
      const nominal = Math.round(this.nominal);
      const natural = this.previous + this.hop;
      // A frame needs its whole search range, and the natural continuation, in the buffer.
      if (nominal + this.tolerance + this.frame > end || (this.previous >= 0 && natural + this.frame > end)) break;
      const from = this.previous < 0 ? nominal : this.bestStart(nominal, natural);
      const out = new Float32Array(this.hop);
      const at = from - this.start;
      for (let i = 0; i < this.hop; i++) out[i] = this.tail[i]! + this.window[i]! * this.input[at + i]!;
      for (let i = 0; i < this.hop; i++) this.tail[i] = this.window[this.hop + i]! * this.input[at + this.hop + i]!;
      pieces.push(out);
      this.previous = from;
      this.nominal += this.hop * this.tempo;
    }
    // Keep from the earliest sample a later frame may read.
    const keepFrom = Math.max(this.start, Math.min(Math.round(this.nominal) - this.tolerance, this.previous + this.hop));
    if (keepFrom > this.start) {
      this.input = this.input.slice(keepFrom - this.start);
      this.start = keepFrom;
    }
    const result = concatFloat32(pieces);
    this.produced += result.length;
    return result;
  }

  /** The start within ±tolerance of `nominal` whose first half-frame best matches what follows the previous frame. */
  private bestStart(nominal: number, natural: number): number {
    const lowest = Math.max(this.start, nominal - this.tolerance);
    const highest = nominal + this.tolerance;
    const target = natural - this.start;
    let best = Math.max(lowest, Math.min(highest, nominal));
    let bestScore = -Infinity;
    for (let candidate = lowest; candidate <= highest; candidate++) {
      const c = candidate - this.start;
      let score = 0;
      // Every other sample: half the work, and speech has little energy near the Nyquist rate.
      for (let i = 0; i < this.hop; i += 2) score += this.input[c + i]! * this.input[target + i]!;
      if (score > bestScore) {
        bestScore = score;
        best = candidate;
      }
    }
    return best;
  }
}

/** `pcm` at `tempo` times the speed; yields as frames are ready. */
export async function* timeStretch(pcm: AsyncIterable<Float32Array>, tempo: number, sampleRate: number): AsyncGenerator<Float32Array> {
  const stretcher = new TimeStretcher(tempo, sampleRate);
  for await (const samples of pcm) {
    const out = stretcher.push(samples);
    if (out.length) yield out;
  }
  const last = stretcher.flush();
  if (last.length) yield last;
}
