// A test reporter for scripts/run-tests.mjs: per test file, how many tests it ran (as the runner's
// "ℹ tests" counts them: every test, skipped and todo included, no suites), how many failed, and
// how long its top-level tests and suites took. One JSON object, written when the run ends.
// CI compares a run on another Node line with the same files of the first run, and prints the
// slowest files.
import path from 'node:path';

export default async function* testFileReport(source) {
  const files = {};
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { file, nesting, details } = event.data;
    const key = file ? path.relative(process.cwd(), file) : '(unknown)';
    const entry = (files[key] ??= { tests: 0, failed: 0, seconds: 0 });
    if (details?.type !== 'suite') {
      entry.tests += 1;
      if (event.type === 'test:fail') entry.failed += 1;
    }
    if (nesting === 0) entry.seconds += (details?.duration_ms ?? 0) / 1000;
  }
  yield `${JSON.stringify(files, null, 1)}\n`;
}
