/**
 * What one synthesis request may cost in pronunciation dictionaries: the dictionaries it names
 * may hold limits.maxDictEntriesPerRequest entries together; more is 400 in the speech shape,
 * whatever the route (REST, stream), and a request within the bound is served.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../../helpers/server.js';

const VOICE = 'espeak-en-us-female';

describe('pronunciation dictionary cost per request', () => {
  let s: TestServer;
  const ids: string[] = [];
  before(async () => {
    s = await startTestServer({ engines: true, config: { limits: { maxDictEntriesPerRequest: 5 }, logLevel: 'warn' } });
    for (const words of [['tomato', 'potato', 'banana'], ['apple', 'cherry', 'melon']]) {
      const res = await s.api('/api/v1/pronunciation-dicts', { method: 'POST', json: { items: words.map((word) => ({ word, pronunciation: `${word} ${word}` })) } });
      assert.equal(res.status, 200, await res.clone().text());
      ids.push(((await res.json()) as { id: string }).id);
    }
  });
  after(() => s?.close());

  it('dictionaries within the bound are applied; beyond it the request is 400 and names the bound', async () => {
    const ok = await s.api('/api/v1/tts-v2/get_speech', { method: 'POST', json: { text: 'A tomato.', voice_id: VOICE, pronunciation_dicts: [ids[0]] } });
    assert.equal(ok.status, 200);
    await ok.arrayBuffer();
    for (const route of ['get_speech', 'stream']) {
      const res = await s.api(`/api/v1/tts-v2/${route}`, { method: 'POST', json: { text: 'A tomato.', voice_id: VOICE, pronunciation_dicts: ids } });
      assert.equal(res.status, 400, route);
      assert.deepEqual(await res.json(), { error: 'InvalidRequest', message: 'pronunciation_dicts hold 6 entries together; one request may use at most 5' });
    }
  });
});
