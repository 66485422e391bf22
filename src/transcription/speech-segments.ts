/**
 * VAD spans → the segments handed to a recogniser, one span at a time so recognition can start
 * while the VAD is still scanning:
 * - spans closer than `mergeGapSeconds` are joined while the result stays ≤ `maxSegmentSeconds`;
 * - each segment is padded by `padSeconds` on both sides (Silero cuts tight, and clipped onsets
 *   cost recognisers whole phonemes), without reaching into its neighbours or past the audio;
 * - a segment longer than `maxSegmentSeconds` (Whisper's window is 30 s) is cut at its
 *   lowest-energy 25 ms frame, so the cut falls in a pause rather than a word when there is one,
 *   and the pieces overlap by `overlapSeconds` around the cut, so a word cut there is heard whole
 *   by at least one of them (stitch.ts joins their words).
 */
import type { TimeSpan } from '../engines/types.js';

export interface SegmenterOptions {
  mergeGapSeconds?: number;
  padSeconds?: number;
  maxSegmentSeconds?: number;
  /** Audio shared by the two pieces of a cut segment; default 0 (pieces meet at the cut). */
  overlapSeconds?: number;
}

export class SpeechSegmenter {
  private readonly mergeGap: number;
  private readonly pad: number;
  private readonly maxLength: number;
  private readonly overlap: number;
  private readonly duration: number;
  private pending: TimeSpan | undefined;
  /** End of the last segment handed out; the next one is never padded back over it. */
  private emittedEnd = 0;

  constructor(
    private readonly samples: Float32Array,
    private readonly sampleRate: number,
    options: SegmenterOptions = {},
  ) {
    this.mergeGap = options.mergeGapSeconds ?? 0.3;
    this.pad = options.padSeconds ?? 0.1;
    this.maxLength = options.maxSegmentSeconds ?? 30;
    this.overlap = options.overlapSeconds ?? 0;
    this.duration = samples.length / sampleRate;
  }

  /** Takes the next VAD span (spans arrive in order); returns the segments it completes. */
  push(span: TimeSpan): TimeSpan[] {
    const start = Math.max(0, Math.min(span.start, this.duration));
    const end = Math.max(start, Math.min(span.end, this.duration));
    if (end <= start) return [];
    const pending = this.pending;
    if (pending && start - pending.end < this.mergeGap && end - pending.start <= this.maxLength) {
      pending.end = Math.max(pending.end, end);
      return [];
    }
    this.pending = { start, end };
    return pending ? this.complete(pending, start) : [];
  }

  /** The segments still held back once the VAD is done. */
  finish(): TimeSpan[] {
    const pending = this.pending;
    this.pending = undefined;
    return pending ? this.complete(pending, this.duration) : [];
  }

  private complete(span: TimeSpan, nextStart: number): TimeSpan[] {
    const start = Math.max(this.emittedEnd, span.start - this.pad, 0);
    // Pad up to the middle of the gap at most, leaving the other half to the next segment.
    const end = Math.min(span.end + this.pad, span.end + Math.max(0, nextStart - span.end) / 2, this.duration);
    const pieces = this.split({ start, end });
    this.emittedEnd = end;
    return pieces;
  }

  private split(span: TimeSpan): TimeSpan[] {
    return splitWithOverlap(span, this.samples, this.sampleRate, this.maxLength, this.overlap);
  }
}

/**
 * `span` cut into pieces of at most `maxLength` seconds, each cut at the quietest 25 ms frame
 * (10 ms hop) its range allows, consecutive pieces sharing `overlap` seconds centred on the cut.
 * The overlap must be under half of `maxLength`, so every piece still advances.
 */
export function splitWithOverlap(span: TimeSpan, samples: Float32Array, sampleRate: number, maxLength: number, overlap = 0): TimeSpan[] {
  if (!(overlap >= 0 && overlap < maxLength / 2)) throw new RangeError(`overlap ${overlap} s must be ≥ 0 and under half of the ${maxLength} s limit`);
  const half = overlap / 2;
  const pieces: TimeSpan[] = [];
  let { start } = span;
  while (span.end - start > maxLength) {
    // The piece reaches half an overlap past its cut, so the cut is at most max - half after its start.
    const reach = maxLength - half;
    const length = span.end - start;
    // Both pieces within the limit when the rest fits in two; beyond that keep each piece ≥ reach/2.
    const low = length <= 2 * reach ? span.end - reach : start + reach / 2;
    const cut = quietestPoint(samples, sampleRate, Math.max(low, start + half + 0.01), start + reach);
    pieces.push({ start, end: Math.min(span.end, cut + half) });
    start = cut - half;
  }
  pieces.push({ start, end: span.end });
  return pieces;
}

/** How far back from the longest allowed piece a cut is looked for: a pause turns up well within this. */
const CUT_SEARCH_SECONDS = 30;

/**
 * Centre of the lowest-energy 25 ms frame (10 ms hop) between two times, in seconds. The frame
 * energy slides along (one pass over the samples), so a long range costs little.
 */
function quietestPoint(samples: Float32Array, sampleRate: number, from: number, to: number): number {
  from = Math.max(from, to - CUT_SEARCH_SECONDS);
  const frame = Math.round(0.025 * sampleRate);
  const hop = Math.max(1, Math.round(0.01 * sampleRate));
  const first = Math.max(0, Math.floor(from * sampleRate));
  const last = Math.min(samples.length - frame, Math.floor(to * sampleRate) - frame);
  let best = (from + to) / 2;
  let bestEnergy = Infinity;
  let energy = 0;
  for (let i = first; i < first + frame && i < samples.length; i++) energy += samples[i]! * samples[i]!;
  for (let at = first; at <= last; at += hop) {
    if (energy < bestEnergy) {
      bestEnergy = energy;
      best = (at + frame / 2) / sampleRate;
    }
    for (let i = at; i < at + hop; i++) energy -= samples[i]! * samples[i]!;
    for (let i = at + frame; i < at + frame + hop && i < samples.length; i++) energy += samples[i]! * samples[i]!;
  }
  return best;
}
