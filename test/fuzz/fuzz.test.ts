/**
 * A short run of the fuzz suite (`npm run fuzz` runs the full one): hostile requests to every
 * endpoint and decoder against a real server in its own process. The duration cap is 10 minutes
 * here so the bombs stay cheap; the full run uses the default 2 hours. Seed 1 unless
 * PARLEY_FUZZ_SEED says otherwise, so a failure here replays with `npm run fuzz`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatReport, runFuzz } from './runner.js';
import { needs, REAL_TEST_MODELS } from '../helpers/models.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH], corpus: true });

test('300 fuzz cases: no 5xx but 503, no request over 30 s, no crash', { skip: NEEDS, timeout: 240_000 }, async () => {
  const seed = Number(process.env.PARLEY_FUZZ_SEED ?? 1);
  const report = await runFuzz({ seed, cases: 300, maxAudioSeconds: 600 });
  const summary = formatReport(report);
  console.log(summary);
  assert.equal(report.cases, 300, summary);
  assert.equal(report.crashed, false, summary);
  assert.deepEqual(report.failures, [], summary);
});
