/**
 * The layers of src/ import downwards only. Each top-level folder (or top-level file) has a rank;
 * a module may import its own unit or a unit of lower rank, never a higher or an equal one of
 * another name (equal ranks are siblings that stay independent, e.g. synthesis and transcription).
 * A new folder must be given a rank here, so its place in the layering is a decision. Within a
 * unit, modules may import each other, but no chain of imports (type-only ones included) comes
 * back to where it started: a cycle makes load order matter and ties two modules into one.
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
  // Bounds on work running at once and yields to the event loop, used by every layer from audio up.
  concurrency: 0.5,
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
  // Metrics and traces: implements the recorders of every layer below, and hooks into the HTTP app.
  observability: 6.5,
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

/** Every relative import (static, type-only and dynamic) of every source file, as absolute paths. */
function relativeImports(srcDir: string): { file: string; specifier: string; target: string }[] {
  const found: { file: string; specifier: string; target: string }[] = [];
  for (const file of sourceFiles(srcDir)) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)'(\.{1,2}\/[^']+)'/gm)) {
      const specifier = m[1]!;
      found.push({ file, specifier, target: path.resolve(path.dirname(file), specifier).replace(/\.js$/, '.ts') });
    }
  }
  return found;
}

/** Relative imports that cross from one unit into another. */
function crossUnitImports(srcDir: string): Import[] {
  return relativeImports(srcDir).flatMap(({ file, specifier, target }) => {
    const from = unitOf(srcDir, file);
    const to = unitOf(srcDir, target);
    return from === to ? [] : [{ from, to, file: path.relative(repoRoot, file), specifier }];
  });
}

/** The import cycles of a module graph: each strongly connected set of two or more modules, or one that imports itself. */
function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  // Tarjan's algorithm, iterative so a deep chain cannot overflow the stack.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;
  for (const root of graph.keys()) {
    if (index.has(root)) continue;
    const work: { node: string; edge: number }[] = [{ node: root, edge: 0 }];
    index.set(root, next);
    low.set(root, next++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const edges = graph.get(frame.node) ?? [];
      if (frame.edge < edges.length) {
        const to = edges[frame.edge++]!;
        if (!index.has(to)) {
          index.set(to, next);
          low.set(to, next++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, edge: 0 });
        } else if (onStack.has(to)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(to)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) !== index.get(frame.node)) continue;
      const component: string[] = [];
      for (;;) {
        const member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
        if (member === frame.node) break;
      }
      if (component.length > 1 || edges.includes(frame.node)) cycles.push(component.sort());
    }
  }
  return cycles;
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

  it("engines/inference (code run inside the inference processes) never imports engines/server (the server process's adapters)", () => {
    const srcDir = path.join(repoRoot, 'src');
    const inference = path.join(srcDir, 'engines', 'inference') + path.sep;
    const server = path.join(srcDir, 'engines', 'server') + path.sep;
    const crossing = relativeImports(srcDir)
      .filter(({ file, target }) => file.startsWith(inference) && target.startsWith(server))
      .map(({ file, specifier }) => `${path.relative(repoRoot, file)} imports ${specifier}`);
    assert.ok(relativeImports(srcDir).some(({ file }) => file.startsWith(inference)), 'the scan found the inference modules');
    assert.deepEqual(crossing, []);
  });

  it('no chain of imports in src/ comes back to the module it started from', () => {
    const srcDir = path.join(repoRoot, 'src');
    const graph = new Map<string, string[]>();
    for (const file of sourceFiles(srcDir)) graph.set(path.relative(repoRoot, file), []);
    for (const { file, target } of relativeImports(srcDir)) graph.get(path.relative(repoRoot, file))!.push(path.relative(repoRoot, target));
    assert.ok(graph.size > 100, 'the scan found the modules');
    assert.deepEqual(importCycles(graph), []);
  });

  it('the cycle check finds a cycle through three modules and one that imports itself, and passes a chain', () => {
    const graph = new Map<string, string[]>([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a', 'd']],
      ['d', ['e']],
      ['e', []],
      ['f', ['f']],
    ]);
    assert.deepEqual(importCycles(graph), [['a', 'b', 'c'], ['f']]);
    assert.deepEqual(importCycles(new Map([['x', ['y']], ['y', []]])), []);
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
