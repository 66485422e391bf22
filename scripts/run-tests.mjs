#!/usr/bin/env node
// Runs every test/**/*.test.ts with Node's test runner through tsx (Node 20's --test takes no globs).
// Extra arguments narrow the run: `npm test -- test/http` or a file path.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

function collect(p) {
  if (statSync(p).isFile()) return p.endsWith('.test.ts') ? [p] : [];
  return readdirSync(p).sort().flatMap((name) => collect(path.join(p, name)));
}

const roots = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const flags = process.argv.slice(2).filter((a) => a.startsWith('-'));
const files = (roots.length ? roots : ['test']).flatMap(collect);
if (files.length === 0) {
  console.error('No test files found');
  process.exit(1);
}
const concurrency = process.env.PARLEY_TEST_CONCURRENCY ?? '2';
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...flags, ...files],
  { stdio: 'inherit', env: { ...process.env, NODE_ENV: 'test' } },
);
process.exit(result.status ?? 1);
