/**
 * Mixing down to mono. Every engine in Parley consumes mono, so decoders average their
 * channels here (an average, not a sum, so a full-scale stereo file stays within [-1, 1]).
 */

/** Averages planar channels into one; a single channel is returned as is (no copy). */
export function mixToMono(channels: readonly Float32Array[], length?: number): Float32Array {
  if (channels.length === 0) return new Float32Array(0);
  const n = length ?? Math.min(...channels.map((c) => c.length));
  if (channels.length === 1) {
    const only = channels[0];
    return only.length === n ? only : only.subarray(0, n);
  }
  const out = new Float32Array(n);
  for (const channel of channels) {
    for (let i = 0; i < n; i++) out[i] += channel[i];
  }
  const scale = 1 / channels.length;
  for (let i = 0; i < n; i++) out[i] *= scale;
  return out;
}

/** Concatenates Float32 chunks into one array. */
export function concatFloat32(chunks: readonly Float32Array[]): Float32Array {
  if (chunks.length === 1) return chunks[0];
  let total = 0;
  for (const c of chunks) total += c.length;
  const out = new Float32Array(total);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.length;
  }
  return out;
}
