/**
 * `npm run fuzz`: the full fuzz suite (10,000 cases by default) against a real server on loopback.
 * PARLEY_FUZZ_SEED replays a run, PARLEY_FUZZ_CASE one case of it, PARLEY_FUZZ_CASES sets the
 * count. Exits 1 on any failure (see runner.ts).
 */
import { randomInt } from 'node:crypto';
import { formatReport, runFuzz } from './runner.js';

const seed = process.env.PARLEY_FUZZ_SEED ? Number(process.env.PARLEY_FUZZ_SEED) : randomInt(2 ** 31);
const only = process.env.PARLEY_FUZZ_CASE ? Number(process.env.PARLEY_FUZZ_CASE) : undefined;
const cases = Number(process.env.PARLEY_FUZZ_CASES ?? 10_000);
console.log(`fuzz seed ${seed}${only !== undefined ? `, case ${only} only` : `, ${cases} cases`}`);
const report = await runFuzz({ seed, cases, only, log: (line) => console.log(line) });
console.log(formatReport(report));
process.exit(report.failures.length > 0 || report.crashed ? 1 : 0);
