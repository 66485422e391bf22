import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../../helpers/server.js';

describe('pronunciation dictionaries', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  it('creates, lists, replaces and deletes, scoped to the account', async () => {
    const created = await (await s.api('/api/v1/pronunciation-dicts', { method: 'POST', json: { items: [{ word: 'tomato', pronunciation: 'tomahto' }] } })).json();
    assert.match(created.id, /^dict_/);
    assert.deepEqual(created.items, [{ word: 'tomato', pronunciation: 'tomahto' }]);
    assert.ok(!Number.isNaN(Date.parse(created.createdAt)));

    const listed = await (await s.api('/api/v1/pronunciation-dicts')).json();
    assert.deepEqual(listed, [created]);

    const updated = await (await s.api('/api/v1/pronunciation-dicts', { method: 'PUT', json: { id: created.id, items: [{ word: 'SQL', pronunciation: 'sequel' }] } })).json();
    assert.deepEqual(updated.items, [{ word: 'SQL', pronunciation: 'sequel' }]);

    const other = await s.server.storage.apiKeys.create({ name: 'other' });
    const foreign = await fetch(`${s.url}/api/v1/pronunciation-dicts`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${other.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id: created.id }),
    });
    assert.equal(foreign.status, 404);
    const theirList = await fetch(`${s.url}/api/v1/pronunciation-dicts`, { headers: { authorization: `Bearer ${other.key}` } });
    assert.deepEqual(await theirList.json(), []);

    const deleted = await s.api('/api/v1/pronunciation-dicts', { method: 'DELETE', json: { id: created.id } });
    assert.deepEqual(await deleted.json(), { id: created.id, deleted: true });
    assert.deepEqual(await (await s.api('/api/v1/pronunciation-dicts')).json(), []);
    const put404 = await s.api('/api/v1/pronunciation-dicts', { method: 'PUT', json: { id: created.id, items: [{ word: 'a', pronunciation: 'b' }] } });
    assert.equal(put404.status, 404);
  });
});
