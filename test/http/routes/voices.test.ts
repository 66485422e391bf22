import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ClonedVoiceRepository } from '../../../src/store/cloned-voice-repository.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';

describe('voice catalogue and cloned voices', () => {
  let s: TestServer;
  let otherKey: string;
  let otherAccount: string;
  before(async () => {
    s = await startTestServer();
    const other = await s.server.storage.apiKeys.create({ name: 'other' });
    otherKey = other.key;
    otherAccount = other.account.id;
    const repo = new ClonedVoiceRepository(s.server.storage.store.db);
    const row = (id: string, account: string, name: string) => ({
      id,
      account_id: account,
      display_name: name,
      accent: 'american',
      tags: JSON.stringify(['en', 'calm']),
      model: 'tts-large',
      status: 'completed',
      created_at: new Date('2026-01-02T03:04:05Z').toISOString(),
      reference_path: null,
    });
    await repo.insert(row('voice_mine000001', s.accountId, 'Mine'));
    await repo.insert(row('voice_theirs0001', otherAccount, 'Theirs'));
  });
  after(() => s.close());

  it('lists voices of tts-v2 and tts-v3.1 in the spec shape', async () => {
    for (const model of ['tts-v2', 'tts-v3.1']) {
      const r = await s.api(`/api/v1/${model}/get_voices`);
      assert.equal(r.status, 200);
      assert.match(r.headers.get('content-type')!, /application\/json/);
      const body = await r.json();
      assert.ok(Array.isArray(body.voices));
      for (const v of body.voices) {
        assert.equal(typeof v.voiceId, 'string');
        assert.equal(typeof v.displayName, 'string');
        assert.ok(Array.isArray(v.tags.language));
        assert.equal(typeof v.tags.accent, 'string');
        assert.equal(typeof v.tags.gender, 'string');
      }
    }
  });

  it("lists only the caller's cloned voices", async () => {
    const r = await s.api('/api/v1/tts-large/get_cloned_voices');
    assert.equal(r.status, 200);
    assert.deepEqual(await r.json(), {
      voices: [
        {
          _id: 'voice_mine000001',
          displayName: 'Mine',
          voiceId: 'voice_mine000001',
          accent: 'american',
          tags: ['en', 'calm'],
          model: 'tts-large',
          status: 'completed',
          cloningType: 'instant',
          createdAt: '2026-01-02T03:04:05.000Z',
          modelIds: ['lightning-large', 'lightning-v3.1-pro', 'lightning-v3.1', 'lightning', 'lightning-v2'],
        },
      ],
    });
  });

  it('deletes an own clone; unknown and foreign ids are 404 and nothing is lost', async () => {
    const foreign = await s.api('/api/v1/tts-large', { method: 'DELETE', json: { voiceId: 'voice_theirs0001' } });
    assert.equal(foreign.status, 404);
    assert.equal((await foreign.json()).error, 'NotFound');
    const theirs = await fetch(`${s.url}/api/v1/tts-large/get_cloned_voices`, { headers: { authorization: `Bearer ${otherKey}` } });
    assert.equal((await theirs.json()).voices.length, 1);

    const unknown = await s.api('/api/v1/tts-large', { method: 'DELETE', json: { voiceId: 'voice_nope' } });
    assert.equal(unknown.status, 404);

    const missing = await s.api('/api/v1/tts-large', { method: 'DELETE', json: {} });
    assert.equal(missing.status, 400);
    assert.deepEqual(await missing.json(), { error: 'InvalidRequest', message: 'voiceId is required' });

    const mine = await s.api('/api/v1/tts-large', { method: 'DELETE', json: { voiceId: 'voice_mine000001' } });
    assert.equal(mine.status, 200);
    assert.deepEqual(await mine.json(), { voiceId: 'voice_mine000001', success: true });
    const again = await s.api('/api/v1/tts-large', { method: 'DELETE', json: { voiceId: 'voice_mine000001' } });
    assert.equal(again.status, 404);
  });
});
