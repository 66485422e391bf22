/**
 * Child-process entry of `verifyPacks`: loads one model pack the way the server would (the sherpa
 * config comes from the engine adapters' build*Config functions, through the pack's family), runs a tiny inference, prints
 * one result line and exits 0. sherpa-onnx ends the process on a malformed model instead of
 * throwing, which is why this runs in a child: the parent sees the exit code or signal and the
 * server never dies of a bad pack.
 *
 * argv[2]: JSON TestLoadJob. Output: a line `PARLEY-TEST-LOAD-OK <json>` (exit 0) or
 * `PARLEY-TEST-LOAD-ERROR <message>` (exit 1).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ModelPack } from '../engines/model-pack.js';
import { familyOf } from './families/index.js';

export interface TestLoadJob {
  pack: ModelPack;
  espeakDataDir: string;
  /** For a diarization-segmentation pack: the speaker-embedding pack it is loaded with. */
  partner?: ModelPack;
}

export const OK_MARK = 'PARLEY-TEST-LOAD-OK';
export const ERROR_MARK = 'PARLEY-TEST-LOAD-ERROR';

/** Loads the pack as its family says and runs a tiny inference; resolves with what was learnt (speakers, rate...). */
export function runTestLoad(job: TestLoadJob): Promise<Record<string, unknown>> {
  return familyOf(job.pack.kind).testLoad(job.pack, { espeakDataDir: job.espeakDataDir, ...(job.partner ? { partner: job.partner } : {}) });
}

async function main(): Promise<void> {
  try {
    const job = JSON.parse(process.argv[2] ?? '') as TestLoadJob;
    const info = await runTestLoad(job);
    process.stdout.write(`\n${OK_MARK} ${JSON.stringify(info)}\n`, () => process.exit(0));
  } catch (error) {
    const message = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ');
    process.stdout.write(`\n${ERROR_MARK} ${message}\n`, () => process.exit(1));
  }
}

const entry = process.argv[1] ? path.resolve(process.argv[1]) : '';
if (entry === fileURLToPath(import.meta.url)) void main();
