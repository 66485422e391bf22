/**
 * No secret reaches the log: a key sent as ?token= (accepted on WebSocket upgrades only, refused
 * on REST), in another credential-like query parameter, in the Authorization header, or echoed
 * in a path, is absent from every line the server writes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startLoggedServer, type LoggedServer } from '../../helpers/logged-server.js';
import { connectRaw } from '../../helpers/raw-http.js';

describe('log redaction', () => {
  let server: LoggedServer;
  let key: string;
  before(async () => {
    server = await startLoggedServer();
    key = server.key;
  });
  after(() => server?.server.close());

  const logged = () => server.logged();

  it('a key in ?token= on a REST request is refused (401) and not logged; its request line is, redacted', async () => {
    const res = await fetch(`${server.url}/api/v1/tts-v2/get_voices?token=${key}&page=2`);
    assert.equal(res.status, 401);
    assert.ok(!logged().includes(key), 'the key is in the log');
    assert.match(logged(), /get_voices\?token=\[REDACTED\]&page=2/);
  });

  it('other credential parameters, the Authorization header and a key in a path are not logged', async () => {
    await fetch(`${server.url}/api/v1/tts-v2/get_voices?api_key=${key}x`);
    await fetch(`${server.url}/v1/models?access_token=not-a-key-shape-secret`);
    await fetch(`${server.url}/api/v1/tts-v2/get_voices`, { headers: { authorization: `Bearer ${key}` } });
    await fetch(`${server.url}/api/v1/no-such/${key}`, { headers: { authorization: `Bearer ${key}` } });
    const text = logged();
    assert.ok(!text.includes(key.slice(3)), 'the key is in the log');
    assert.ok(!text.includes('not-a-key-shape-secret'));
    assert.match(text, /no-such\/sk_\[REDACTED\]/);
  });

  it('a WebSocket upgrade with ?token= is authenticated by it, and the token is not logged', async () => {
    const conn = await connectRaw(server.url);
    conn.write(`GET /api/v1/tts-v2/get_voices?token=${key} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`);
    while (!conn.received().includes('\r\n\r\n')) await new Promise((r) => setTimeout(r, 10));
    const res = conn.received();
    conn.close();
    assert.doesNotMatch(res, /^HTTP\/1\.1 401/, 'the upgrade was not authenticated by ?token=');
    assert.ok(!logged().includes(key.slice(3)), 'the key is in the log');
  });
});
