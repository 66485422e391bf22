/**
 * Mono audio that arrives in pieces and is read back by absolute sample index (from the start of
 * the stream). Pieces are kept as they came: slice() copies only the range asked for and drop()
 * forgets whole pieces, so neither costs more than the audio it touches, however much is held.
 */
export class HeldAudio {
  private readonly pieces: Float32Array[] = [];
  /** Absolute index of each piece's first sample. */
  private readonly offsets: number[] = [];
  private first = 0;
  private total = 0;

  /** Index of the oldest sample held. */
  get start(): number {
    return this.first;
  }

  /** Index after the newest sample: every sample ever pushed. */
  get end(): number {
    return this.total;
  }

  push(samples: Float32Array): void {
    if (samples.length === 0) return;
    this.pieces.push(samples);
    this.offsets.push(this.total);
    this.total += samples.length;
  }

  /** A copy of samples [from, to), clamped to what is held. */
  slice(from: number, to: number): Float32Array {
    const lo = Math.max(from, this.first);
    const hi = Math.min(to, this.total);
    const out = new Float32Array(Math.max(0, hi - lo));
    if (out.length === 0) return out;
    for (let i = this.pieceAt(lo); i < this.pieces.length && this.offsets[i]! < hi; i++) {
      const piece = this.pieces[i]!;
      const at = this.offsets[i]!;
      const a = Math.max(lo, at);
      const b = Math.min(hi, at + piece.length);
      out.set(piece.subarray(a - at, b - at), a - lo);
    }
    return out;
  }

  /** Forgets samples before `position` (pieces wholly before it are let go). */
  drop(position: number): void {
    const to = Math.min(Math.max(position, this.first), this.total);
    let n = 0;
    while (n < this.pieces.length && this.offsets[n]! + this.pieces[n]!.length <= to) n++;
    this.pieces.splice(0, n);
    this.offsets.splice(0, n);
    this.first = to;
  }

  /** Index of the piece holding sample `position` (binary search; pieces are ordered). */
  private pieceAt(position: number): number {
    let lo = 0;
    let hi = this.pieces.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.offsets[mid]! <= position) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
}
