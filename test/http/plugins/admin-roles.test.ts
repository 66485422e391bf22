/**
 * Key roles over real HTTP: every route under /api/v1/admin/ (as the server's own OpenAPI
 * document lists them) answers a user key 403 with the speech error body and serves an admin key;
 * a user key still works everywhere else, for its own account.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KEY_ROLES } from '../../../src/accounts/api-keys.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';

describe('admin routes need an admin key', () => {
  let s: TestServer;
  let userKey: string;
  let adminRoutes: Array<{ method: string; path: string }>;

  before(async () => {
    s = await startTestServer({ engines: true });
    userKey = (await s.server.storage.apiKeys.create({ name: 'user', role: KEY_ROLES.user })).key;
    const doc = (await (await fetch(`${s.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    adminRoutes = Object.entries(doc.paths)
      .filter(([p]) => p.startsWith('/api/v1/admin/'))
      .flatMap(([p, ops]) => Object.keys(ops).map((method) => ({ method: method.toUpperCase(), path: p })));
  });
  after(() => s?.close());

  const call = (key: string, route: { method: string; path: string }) =>
    fetch(s.url + route.path.replace('{id}', 'no-such-pack'), {
      method: route.method,
      headers: { authorization: `Bearer ${key}`, ...(route.method === 'POST' && { 'content-type': 'application/json' }) },
      ...(route.method === 'POST' && { body: '{}' }),
    });

  it('a user key gets 403 Forbidden on every admin route', async () => {
    assert.deepEqual(
      adminRoutes.map((r) => `${r.method} ${r.path}`).sort(),
      [
        'DELETE /api/v1/admin/models/{id}',
        'GET /api/v1/admin/models',
        'GET /api/v1/admin/webhook-secret',
        'POST /api/v1/admin/models/reload',
        'POST /api/v1/admin/models/{id}/install',
        'POST /api/v1/admin/models/{id}/verify',
        'POST /api/v1/admin/webhook-secret/rotate',
      ],
      'the admin routes this test covers (a new one is covered by the loop below too)',
    );
    for (const route of adminRoutes) {
      const r = await call(userKey, route);
      assert.equal(r.status, 403, `${route.method} ${route.path}`);
      assert.equal(r.headers.get('content-type'), 'application/json; charset=utf-8');
      const body = await r.json();
      assert.deepEqual(Object.keys(body).sort(), ['error', 'message']);
      assert.equal(body.error, 'Forbidden');
      assert.equal(body.message, 'This route needs an admin key');
    }
  });

  it('an admin key is served on every admin route', async () => {
    for (const route of adminRoutes) {
      const r = await call(s.key, route);
      const body = await r.json();
      // A pack route is served for a pack that is not in the catalogue: found to be unknown, not refused.
      if (route.path.includes('{id}')) {
        assert.equal(r.status, 404, `${route.method} ${route.path}`);
        continue;
      }
      assert.equal(r.status, 200, `${route.method} ${route.path}`);
      if (route.path.includes('webhook-secret')) assert.match(body.webhook_secret, /^whsec_/);
      else assert.ok(Array.isArray(body.loaded));
    }
  });

  it('a user key works on the other routes, for its own account only', async () => {
    const voices = await fetch(`${s.url}/api/v1/tts-v2/get_voices`, { headers: { authorization: `Bearer ${userKey}` } });
    assert.equal(voices.status, 200);
    const made = await fetch(`${s.url}/api/v1/pronunciation-dicts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${userKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ items: [{ word: 'Parley', pronunciation: 'parlay' }] }),
    });
    assert.equal(made.status, 200);
    const { id } = await made.json();
    const adminsDicts = (await (await s.api('/api/v1/pronunciation-dicts')).json()) as Array<{ id: string }>;
    assert.ok(!adminsDicts.some((d) => d.id === id), "an admin key does not see another account's dictionaries");
  });

  it('no key is still 401, not 403', async () => {
    const r = await fetch(`${s.url}/api/v1/admin/models`);
    assert.equal(r.status, 401);
    assert.equal((await r.json()).error, 'Unauthorized');
  });
});
