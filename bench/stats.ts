/** Percentiles of a bench's samples (non-finite ones dropped). */
export interface Stats {
  n: number;
  p50: number;
  p95: number;
  max: number;
}

export function stats(values: number[]): Stats {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return { n: sorted.length, p50: at(0.5), p95: at(0.95), max: sorted.at(-1) ?? NaN };
}
