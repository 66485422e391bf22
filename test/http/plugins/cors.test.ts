/** CORS (config.cors): off by default; when origins are configured, preflights and answers carry the headers for those origins only. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../../helpers/server.js';

const ORIGIN = 'https://chat.example.org';

describe('CORS', () => {
  let open: TestServer;
  let closed: TestServer;
  before(async () => {
    [open, closed] = await Promise.all([
      startTestServer({ config: { logLevel: 'warn', cors: { allowedOrigins: [ORIGIN], maxAgeSeconds: 120 } } }),
      startTestServer({ config: { logLevel: 'warn' } }),
    ]);
  });
  after(async () => {
    await open?.close();
    await closed?.close();
  });

  const preflight = (s: TestServer, origin: string) =>
    fetch(`${s.url}/v1/audio/speech`, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, x-stainless-os' },
    });

  it('answers a preflight from an allowed origin without a key, naming the origin, methods and headers', async () => {
    const res = await preflight(open, ORIGIN);
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('access-control-allow-origin'), ORIGIN);
    assert.match(res.headers.get('access-control-allow-methods') ?? '', /POST/);
    assert.equal(res.headers.get('access-control-allow-headers'), 'authorization, content-type, x-stainless-os');
    assert.equal(res.headers.get('access-control-max-age'), '120');
  });

  it('a real request from that origin (any route of the API) gets the headers and can read X-Request-Id; its key is still checked', async () => {
    const ok = await open.api('/api/v1/tts-v2/get_voices', { headers: { origin: ORIGIN } });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get('access-control-allow-origin'), ORIGIN);
    assert.match(ok.headers.get('access-control-expose-headers') ?? '', /X-Request-Id/);
    const anonymous = await fetch(`${open.url}/api/v1/tts-v2/get_voices`, { headers: { origin: ORIGIN } });
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.headers.get('access-control-allow-origin'), ORIGIN, 'the browser may read the 401');
  });

  it('other origins get no CORS headers', async () => {
    const res = await open.api('/api/v1/tts-v2/get_voices', { headers: { origin: 'https://elsewhere.example' } });
    assert.equal(res.headers.get('access-control-allow-origin'), null);
  });

  it('with no origins configured (the default) nothing is sent', async () => {
    const res = await closed.api('/api/v1/tts-v2/get_voices', { headers: { origin: ORIGIN } });
    assert.equal(res.headers.get('access-control-allow-origin'), null);
    const pre = await preflight(closed, ORIGIN);
    assert.equal(pre.headers.get('access-control-allow-origin'), null);
  });
});
