/**
 * Cuts an encoded byte stream into pieces of at most `size` bytes: the SSE endpoint sends one
 * event per piece, whatever sizes the encoder happened to return.
 */
export class ByteChunker {
  private pending: Uint8Array;
  private filled = 0;

  constructor(readonly size = 1024) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`Invalid chunk size: ${size}`);
    this.pending = new Uint8Array(size);
  }

  /** Returns every full chunk the new bytes complete; the remainder waits for more bytes or `flush`. */
  push(bytes: Uint8Array): Uint8Array[] {
    const chunks: Uint8Array[] = [];
    let offset = 0;
    if (this.filled > 0) {
      const take = Math.min(this.size - this.filled, bytes.length);
      this.pending.set(bytes.subarray(0, take), this.filled);
      this.filled += take;
      offset = take;
      if (this.filled < this.size) return chunks;
      chunks.push(this.pending);
      this.pending = new Uint8Array(this.size);
      this.filled = 0;
    }
    for (; offset + this.size <= bytes.length; offset += this.size) {
      chunks.push(bytes.slice(offset, offset + this.size));
    }
    if (offset < bytes.length) {
      this.pending.set(bytes.subarray(offset), 0);
      this.filled = bytes.length - offset;
    }
    return chunks;
  }

  /** The bytes left over (fewer than `size`), or null when there are none. */
  flush(): Uint8Array | null {
    if (this.filled === 0) return null;
    const rest = this.pending.slice(0, this.filled);
    this.filled = 0;
    return rest;
  }
}
