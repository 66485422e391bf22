// A test reporter for scripts/run-tests.mjs: per test file, how many tests it ran (as the runner's
// "ℹ tests" counts them: every test, skipped and todo included, no suites), how many failed, and
// how long its top-level tests and suites took. One JSON object, written when the run ends.
// CI compares a run on another Node line with the same files of the first run, and prints the
// slowest files.
//
// A test's own `file` is where it was written, which for a test made by a shared helper is the
// helper. The runner reports a file's tests together, each suite after what it holds, so tests
// are counted to the top-level suite or test that comes next: the test file's own.
import path from 'node:path';

export default async function* testFileReport(source) {
  const files = {};
  let pending = { tests: 0, failed: 0 };
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { file, nesting, details } = event.data;
    if (details?.type !== 'suite') {
      pending.tests += 1;
      if (event.type === 'test:fail') pending.failed += 1;
    }
    if (nesting !== 0) continue;
    const key = file ? path.relative(process.cwd(), file) : '(unknown)';
    const entry = (files[key] ??= { tests: 0, failed: 0, seconds: 0 });
    entry.tests += pending.tests;
    entry.failed += pending.failed;
    entry.seconds += (details?.duration_ms ?? 0) / 1000;
    pending = { tests: 0, failed: 0 };
  }
  yield `${JSON.stringify(files, null, 1)}\n`;
}
