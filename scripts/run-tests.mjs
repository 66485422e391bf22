#!/usr/bin/env node
// Runs every test/**/*.test.ts with Node's test runner through tsx (Node 20's --test takes no globs).
// Extra arguments narrow the run: `npm test -- test/http` or a file path.
//
// A test run must end by itself, failing rather than waiting: one test may take at most
// PARLEY_TEST_TIMEOUT_S (default 600 s), and the whole run at most PARLEY_TEST_DEADLINE_S (default
// 2700 s), after which it is killed with every process it started. --test-force-exit is not used:
// on Node 22 it ends a test file before its results reach the runner, which then counts fewer tests
// and reports no failure.
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

function collect(p) {
  if (statSync(p).isFile()) return p.endsWith('.test.ts') ? [p] : [];
  return readdirSync(p).sort().flatMap((name) => collect(path.join(p, name)));
}

function seconds(name, fallback) {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value <= 0) {
    console.error(`${name} must be a positive number of seconds`);
    process.exit(2);
  }
  return value;
}

const roots = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const flags = process.argv.slice(2).filter((a) => a.startsWith('-'));
const files = (roots.length ? roots : ['test']).flatMap(collect);
if (files.length === 0) {
  console.error('No test files found');
  process.exit(1);
}
const concurrency = process.env.PARLEY_TEST_CONCURRENCY ?? '2';
const testTimeoutS = seconds('PARLEY_TEST_TIMEOUT_S', 600);
const deadlineS = seconds('PARLEY_TEST_DEADLINE_S', 2700);
const started = Date.now();
// PARLEY_TEST_FILE_REPORT=<file>: also write each test file's count and time there (scripts/test-file-report.mjs).
const fileReport = process.env.PARLEY_TEST_FILE_REPORT;
const reporters = fileReport
  ? ['--test-reporter=spec', '--test-reporter-destination=stdout', `--test-reporter=${new URL('./test-file-report.mjs', import.meta.url).href}`, `--test-reporter-destination=${fileReport}`]
  : ['--test-reporter=spec'];
const child = spawn(
  process.execPath,
  [
    '--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, ...reporters,
    `--test-timeout=${testTimeoutS * 1000}`,
    ...flags, ...files,
  ],
  // Its own process group, so that the deadline can end the test files and what they started.
  { stdio: 'inherit', detached: true, env: { ...process.env, NODE_ENV: 'test' } },
);
const killGroup = (signal) => {
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
};
const deadline = setTimeout(() => {
  console.error(`\n[test] the run passed its deadline of ${deadlineS} s (PARLEY_TEST_DEADLINE_S) and was stopped`);
  killGroup('SIGTERM');
  setTimeout(() => killGroup('SIGKILL'), 10_000).unref();
}, deadlineS * 1000);
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => killGroup(signal));
child.on('exit', (code, signal) => {
  clearTimeout(deadline);
  // Whatever a test file left running in the group ends with the run.
  killGroup('SIGKILL');
  console.error(`[test] ${files.length} files in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  process.exit(code ?? (signal ? 1 : 0));
});
