import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../../helpers/server.js';

describe('health, readiness and API docs', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  it('healthz and the bare readyz status answer without a key; the detail needs an admin key', async () => {
    assert.deepEqual(await (await fetch(`${s.url}/healthz`)).json(), { status: 'ok' });
    const anonymous = await fetch(`${s.url}/readyz`);
    assert.equal(anonymous.status, 200);
    assert.deepEqual(await anonymous.json(), { status: 'ready' });
    const wrongKey = await fetch(`${s.url}/readyz`, { headers: { authorization: 'Bearer sk_wrongwrongwrongwrongwrongwrongwrong12' } });
    assert.equal(wrongKey.status, 200);
    assert.deepEqual(await wrongKey.json(), { status: 'ready' });

    // A user key sees what anyone sees: the detail holds every account's job counts and server paths.
    const { key: userKey } = await s.server.storage.apiKeys.create({ name: 'user' });
    const asUser = await fetch(`${s.url}/readyz`, { headers: { authorization: `Bearer ${userKey}` } });
    assert.equal(asUser.status, 200);
    assert.deepEqual(await asUser.json(), { status: 'ready' });

    const ready = await s.api('/readyz');
    assert.equal(ready.status, 200);
    const body = await ready.json();
    assert.equal(body.status, 'ready');
    assert.equal(body.database.ok, true);
  });

  it('serves an OpenAPI 3.1 document listing the routes, and the docs page', async () => {
    const doc = await (await fetch(`${s.url}/openapi.json`)).json();
    assert.equal(doc.openapi, '3.1.0');
    assert.ok(doc.paths['/api/v1/tts-v2/get_voices']);
    assert.ok(doc.paths['/api/v1/pronunciation-dicts']);
    const docs = await fetch(`${s.url}/docs`, { redirect: 'follow' });
    assert.equal(docs.status, 200);
    assert.match(docs.headers.get('content-type') ?? '', /html/);
  });
});
