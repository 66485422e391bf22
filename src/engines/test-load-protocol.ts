/**
 * What pack verification (in the server's process) and its test-load child
 * (inference/test-load.ts) say to each other: the job on the child's command line, and the marks
 * of its one result line.
 */
import type { Capability, EngineConfigs } from './capabilities.js';

/** One test load: the config the server would load, and what the inference needs besides. */
export type TestLoadJob = {
  [C in Capability]: {
    capability: C;
    config: EngineConfigs[C];
    /** The pack's languages (a TTS pack says an English word when it speaks English). */
    languages: string[];
    /** For a segmentation pack: the embedding config it is loaded with. */
    partner?: EngineConfigs['embedding'];
  };
}[Capability];

export const OK_MARK = 'PARLEY-TEST-LOAD-OK';
export const ERROR_MARK = 'PARLEY-TEST-LOAD-ERROR';

/** The child's module (its compiled name, as spawn.ts takes it), for the parent to start it. */
export const testLoadEntry = new URL('./inference/test-load.js', import.meta.url);
