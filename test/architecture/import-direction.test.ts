/**
 * The layers of src/ import downwards only. Each top-level folder (or top-level file) has a rank;
 * a module may import its own unit or a unit of lower rank, never a higher or an equal one of
 * another name (equal ranks are siblings that stay independent, e.g. synthesis and transcription).
 * A new folder must be given a rank here, so its place in the layering is a decision.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot } from '../helpers/models.js';

const RANKS: Record<string, number> = {
  errors: 0,
  version: 0,
  config: 0,
  lifecycle: 0,
  audio: 1,
  net: 1,
  text: 1,
  engines: 2,
  store: 2,
  models: 3,
  accounts: 3,
  'voice-analysis': 3,
  synthesis: 4,
  transcription: 4,
  jobs: 5,
  http: 6,
  compose: 7,
  server: 8,
  cli: 9,
};

interface Import {
  from: string;
  to: string;
  file: string;
  specifier: string;
}

function unitOf(srcDir: string, file: string): string {
  const [first, ...rest] = path.relative(srcDir, file).split(path.sep);
  return rest.length > 0 ? first! : first!.replace(/\.(ts|js)$/, '');
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    return statSync(p).isDirectory() ? sourceFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** Relative imports (static, type-only and dynamic) that cross from one unit into another. */
function crossUnitImports(srcDir: string): Import[] {
  const found: Import[] = [];
  for (const file of sourceFiles(srcDir)) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)'(\.{1,2}\/[^']+)'/gm)) {
      const specifier = m[1]!;
      const target = path.resolve(path.dirname(file), specifier);
      const from = unitOf(srcDir, file);
      const to = unitOf(srcDir, target);
      if (from !== to) found.push({ from, to, file: path.relative(repoRoot, file), specifier });
    }
  }
  return found;
}

function violations(imports: Import[], ranks: Record<string, number>): string[] {
  const out: string[] = [];
  for (const i of imports) {
    const a = ranks[i.from];
    const b = ranks[i.to];
    if (a === undefined) out.push(`${i.file}: unit "${i.from}" has no rank in the layer table`);
    else if (b === undefined) out.push(`${i.file}: imports "${i.specifier}", unit "${i.to}" has no rank in the layer table`);
    else if (b >= a) out.push(`${i.file} (${i.from}, rank ${a}) imports ${i.specifier} (${i.to}, rank ${b}): a layer imports only lower layers`);
  }
  return out;
}

describe('import direction', () => {
  it('no module of src/ imports a layer at or above its own', () => {
    const imports = crossUnitImports(path.join(repoRoot, 'src'));
    assert.ok(imports.length > 50, 'the scan found the imports');
    assert.deepEqual(violations(imports, RANKS), []);
  });

  it('the check names an upward import, a sibling import and an unranked folder', () => {
    const imports: Import[] = [
      { from: 'jobs', to: 'http', file: 'src/jobs/a.ts', specifier: '../http/routes/jobs.js' },
      { from: 'synthesis', to: 'transcription', file: 'src/synthesis/b.ts', specifier: '../transcription/types.js' },
      { from: 'engines', to: 'models', file: 'src/engines/c.ts', specifier: '../models/pack.js' },
      { from: 'gadgets', to: 'audio', file: 'src/gadgets/d.ts', specifier: '../audio/wav.js' },
      { from: 'http', to: 'jobs', file: 'src/http/e.ts', specifier: '../../jobs/job-service.js' },
    ];
    const found = violations(imports, RANKS);
    assert.equal(found.length, 4);
    assert.match(found[0]!, /src\/jobs\/a\.ts \(jobs, rank 5\) imports \.\.\/http\/routes\/jobs\.js \(http, rank 6\)/);
    assert.match(found[1]!, /synthesis.*transcription/);
    assert.match(found[2]!, /engines.*models/);
    assert.match(found[3]!, /unit "gadgets" has no rank/);
  });
});
