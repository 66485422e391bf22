/**
 * Numbered migrations, applied in name order at start and recorded by Kysely's Migrator.
 * Add a file `NNNN-what.ts` and list it here; never edit one that has shipped.
 */
import type { Migration } from 'kysely';
import * as m0001 from './0001-accounts-keys-voices-dicts.js';
import * as m0002 from './0002-jobs.js';
import * as m0003 from './0003-job-runs.js';
import * as m0004 from './0004-key-roles.js';
import * as m0005 from './0005-shared-node-state.js';
import * as m0006 from './0006-cloned-voice-samples.js';
import * as m0007 from './0007-socket-slots.js';
import * as m0008 from './0008-webhook-secret-rotation.js';
import * as m0009 from './0009-job-webhook-method.js';

export const migrations: Record<string, Migration> = {
  '0001-accounts-keys-voices-dicts': m0001,
  '0002-jobs': m0002,
  '0003-job-runs': m0003,
  '0004-key-roles': m0004,
  '0005-shared-node-state': m0005,
  '0006-cloned-voice-samples': m0006,
  '0007-socket-slots': m0007,
  '0008-webhook-secret-rotation': m0008,
  '0009-job-webhook-method': m0009,
};
