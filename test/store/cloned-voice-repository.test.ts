import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { AccountRepository } from '../../src/store/account-repository.js';
import { ClonedVoiceRepository, type NewClonedVoice } from '../../src/store/cloned-voice-repository.js';
import { openStore, type Store } from '../../src/store/database.js';
import { skipWithoutPg, withPgSchema } from '../helpers/pg-schema.js';

/** A new clone row, `processing`. */
function cloneRow(id: string, accountId: string, displayName: string): NewClonedVoice {
  return {
    id,
    account_id: accountId,
    display_name: displayName,
    accent: '',
    tags: '[]',
    model: 'tts-large',
    status: 'processing',
    created_at: new Date().toISOString(),
    reference_path: null,
  };
}

/** A clone and its sample round-trip byte for byte, stay with their account, and go together. */
async function exercise(store: Store): Promise<void> {
  const accounts = new AccountRepository(store.db);
  const mine = await accounts.create('mine');
  const theirs = await accounts.create('theirs');
  const repo = new ClonedVoiceRepository(store.db);
  const pcm = new Uint8Array(48_000).map((_, i) => (i * 7) & 0xff);
  await repo.insert({ ...cloneRow('voice_AAAAAAAAAA', mine.id, 'Ann'), language: 'en' }, { sampleRate: 24_000, pcm });
  assert.equal(await repo.countForAccount(mine.id), 1);
  assert.equal(await repo.countForAccount(theirs.id), 0);
  const sample = await repo.findSample(mine.id, 'voice_AAAAAAAAAA');
  assert.equal(sample?.sampleRate, 24_000);
  assert.deepEqual(new Uint8Array(sample!.pcm), pcm);
  assert.equal(await repo.findSample(theirs.id, 'voice_AAAAAAAAAA'), undefined);

  await repo.update('voice_AAAAAAAAAA', { status: 'completed', engine: 'espeak-ng-matched', engine_settings: '{}' });
  assert.equal((await repo.findForAccount(mine.id, 'voice_AAAAAAAAAA'))?.status, 'completed');

  assert.equal(await repo.deleteForAccount(theirs.id, 'voice_AAAAAAAAAA'), false);
  assert.equal(await repo.deleteForAccount(mine.id, 'voice_AAAAAAAAAA'), true);
  assert.equal(await repo.findSample(mine.id, 'voice_AAAAAAAAAA'), undefined);
  assert.deepEqual(await store.db.selectFrom('cloned_voice_samples').selectAll().execute(), []);
}

/** Parallel creations for one account never exceed its limit: the count and the insert are one step. */
async function raceTheLimit(store: Store): Promise<void> {
  const account = await new AccountRepository(store.db).create('racer');
  const repo = new ClonedVoiceRepository(store.db);
  const LIMIT = 3;
  const attempts = Array.from({ length: 12 }, (_, i) =>
    repo.insertWithinLimit(cloneRow(`voice_RACE${String(i).padStart(6, '0')}`, account.id, `Racer ${i}`), { sampleRate: 24_000, pcm: new Uint8Array(4_800) }, LIMIT),
  );
  const results = await Promise.all(attempts);
  assert.equal(results.filter(Boolean).length, LIMIT);
  assert.equal(await repo.countForAccount(account.id), LIMIT);
  assert.equal((await store.db.selectFrom('cloned_voice_samples').select('voice_id').execute()).length, LIMIT, 'a refused insert leaves no sample');
}

describe('ClonedVoiceRepository', () => {
  it('on SQLite', async () => {
    const store = await openStore({ databaseUrl: '', dataDir: mkdtempSync(path.join(tmpdir(), 'parley-db-')) });
    try {
      await exercise(store);
      await raceTheLimit(store);
    } finally {
      await store.close();
    }
  });

  it('on PostgreSQL', { skip: skipWithoutPg }, async () => {
    await withPgSchema('clones', async (url) => {
      const store = await openStore({ databaseUrl: url, dataDir: '' });
      try {
        await exercise(store);
        await raceTheLimit(store);
      } finally {
        await store.close();
      }
    });
  });
});
