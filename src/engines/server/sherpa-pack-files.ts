/** The names loaded models go by in an inference process. */
import { createHash } from 'node:crypto';

/**
 * The name a loaded model goes by inside an inference process: the pack, its revision and the
 * config it was built with, so a changed pack or config is a different model, and an unchanged
 * one the same (it is not loaded twice).
 */
export function modelKey(packs: ReadonlyArray<{ id: string; revision?: string }>, role: string, config: unknown): string {
  const hash = createHash('sha256')
    .update(JSON.stringify([packs.map((p) => [p.id, p.revision ?? '']), config]))
    .digest('hex')
    .slice(0, 12);
  return `${packs.map((p) => p.id).join('+')}/${role}@${hash}`;
}
