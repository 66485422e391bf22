/**
 * How surely each diarized segment belongs to the speaker clustering gave it, from the speaker
 * embedding of each segment (the diarizer's own embedding model).
 *
 * Each speaker's centroid is the duration-weighted mean of its segments' unit embeddings. A
 * segment's confidence is 0.5 + (its cosine similarity to its own centroid − its similarity to the
 * nearest other centroid), kept in [0, 1]: 0.5 when it is as near another speaker as its own (a
 * coin toss), towards 1 as its own speaker is clearly nearer, below 0.5 when another speaker is
 * nearer than the one it was given. With one speaker the alternative is an unrelated voice, whose
 * expected similarity is 0. A segment too short to embed takes the mean of its speaker's measured
 * segments (undefined when none was measured).
 */

export interface EmbeddedSegment {
  start: number;
  end: number;
  speaker: number;
  /** Undefined when the segment was too short for the embedding model. */
  embedding?: Float32Array;
}

export function speakerConfidences(segments: readonly EmbeddedSegment[]): (number | undefined)[] {
  const units = segments.map((s) => (s.embedding ? unit(s.embedding) : undefined));
  const centroids = new Map<number, Float32Array>();
  segments.forEach((s, i) => {
    const e = units[i];
    if (!e) return;
    const weight = Math.max(s.end - s.start, 1e-3);
    let c = centroids.get(s.speaker);
    if (!c) centroids.set(s.speaker, (c = new Float32Array(e.length)));
    for (let k = 0; k < e.length; k++) c[k]! += weight * e[k]!;
  });
  for (const [speaker, c] of centroids) centroids.set(speaker, unit(c));

  const measured: (number | undefined)[] = segments.map((s, i) => {
    const e = units[i];
    const own = centroids.get(s.speaker);
    if (!e || !own) return undefined;
    let other = 0;
    let others = 0;
    for (const [speaker, c] of centroids) {
      if (speaker === s.speaker) continue;
      const similarity = dot(e, c);
      other = others++ === 0 ? similarity : Math.max(other, similarity);
    }
    return Math.min(1, Math.max(0, 0.5 + dot(e, own) - other));
  });
  const mean = new Map<number, { sum: number; n: number }>();
  segments.forEach((s, i) => {
    const c = measured[i];
    if (c === undefined) return;
    const m = mean.get(s.speaker) ?? { sum: 0, n: 0 };
    m.sum += c;
    m.n++;
    mean.set(s.speaker, m);
  });
  return segments.map((s, i) => {
    if (measured[i] !== undefined) return measured[i];
    const m = mean.get(s.speaker);
    return m ? m.sum / m.n : undefined;
  });
}

function unit(v: Float32Array): Float32Array {
  const norm = Math.sqrt(dot(v, v));
  if (!(norm > 0)) return new Float32Array(v.length);
  const out = new Float32Array(v.length);
  for (let k = 0; k < v.length; k++) out[k] = v[k]! / norm;
  return out;
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let k = 0; k < a.length; k++) sum += a[k]! * b[k]!;
  return sum;
}
