/**
 * Picks the files an engine adapter needs out of a model pack, failing with ModelPackError before
 * sherpa-onnx sees a missing path (sherpa ends the whole process on one instead of throwing).
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { ModelPackError } from '../errors.js';
import type { ModelPack, PackKind } from './model-pack.js';

/**
 * The name a loaded model goes by inside an inference process: the pack, its revision and the
 * config it was built with, so a changed pack or config is a different model, and an unchanged
 * one the same (it is not loaded twice).
 */
export function modelKey(packs: ModelPack[], role: string, config: unknown): string {
  const hash = createHash('sha256')
    .update(JSON.stringify([packs.map((p) => [p.id, p.revision ?? '']), config]))
    .digest('hex')
    .slice(0, 12);
  return `${packs.map((p) => p.id).join('+')}/${role}@${hash}`;
}

export function requirePackKind(pack: ModelPack, kinds: readonly PackKind[], what: string): void {
  if (!kinds.includes(pack.kind)) {
    throw new ModelPackError(`model pack ${pack.id} is a ${pack.kind} pack, not ${what} (${kinds.join(', ')})`);
  }
}

/** Role → absolute path for each of `roles`; every one must be declared by the pack and exist on disk. */
export function requirePackFiles<R extends string>(pack: ModelPack, roles: readonly R[]): Record<R, string> {
  const files = {} as Record<R, string>;
  const problems: string[] = [];
  for (const role of roles) {
    const file = pack.files[role];
    if (!file) problems.push(`no ${role} file`);
    else if (!existsSync(file)) problems.push(`${role} file ${file} does not exist`);
    else files[role] = file;
  }
  if (problems.length > 0) throw new ModelPackError(`model pack ${pack.id}: ${problems.join('; ')}`);
  return files;
}
