/** Word error rate, as bench/stt.ts reports it and the streaming tests compare it. */

/** Lower case, apostrophes kept, every other non-letter/digit a word break ("cold-hearted" → two words). */
export function normalise(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[’‘]/g, "'")
    .replace(/[^\p{L}\p{N}']+/gu, ' ')
    .split(' ')
    .map((w) => w.replace(/^'+|'+$/g, ''))
    .filter(Boolean);
}

/** Word-level edit distance. */
export function editDistance(reference: string[], hypothesis: string[]): number {
  let previous = Array.from({ length: hypothesis.length + 1 }, (_, j) => j);
  for (let i = 1; i <= reference.length; i++) {
    const current = [i];
    for (let j = 1; j <= hypothesis.length; j++) {
      const substitution = previous[j - 1]! + (reference[i - 1] === hypothesis[j - 1] ? 0 : 1);
      current.push(Math.min(substitution, previous[j]! + 1, current[j - 1]! + 1));
    }
    previous = current;
  }
  return previous[hypothesis.length]!;
}

/** Word errors (substitutions, insertions, deletions) per reference word. */
export function wordErrorRate(reference: string, hypothesis: string): number {
  const ref = normalise(reference);
  return ref.length === 0 ? 0 : editDistance(ref, normalise(hypothesis)) / ref.length;
}
