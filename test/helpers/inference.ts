/** A supervised inference process for engine tests: small queues, quick restarts, no logging. */
import { InferenceProcess, type InferenceProcessOptions } from '../../src/engines/server/inference-process.js';

export function testInferenceProcess(options: Partial<InferenceProcessOptions> = {}): InferenceProcess {
  return new InferenceProcess({
    name: 'test',
    threads: 1,
    queueSize: 4,
    maxWaiting: 4,
    deadlines: { baseMs: 60_000, perAudioSecondMs: 0, perCharacterMs: 0 },
    memoryCeilingBytes: 8 * 2 ** 30,
    restartDelayMs: 50,
    restartDelayCapMs: 1_000,
    cancelGraceMs: 200,
    log: { info() {}, warn() {}, error() {} },
    ...options,
  });
}
