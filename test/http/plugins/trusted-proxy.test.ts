/**
 * http.trustedProxies: behind a listed proxy each client has its own address bucket (one
 * client's bad keys do not lock out the others); from an unlisted peer X-Forwarded-For is
 * ignored, so a client cannot pick a fresh address per request.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../../src/config.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';

const limits = { rateLimits: { unauthenticated: { perMinute: 1, burst: 2 } }, logLevel: 'warn' as const };

const badKey = (s: TestServer, forwardedFor: string) =>
  fetch(`${s.url}/api/v1/tts-v2/get_voices`, { headers: { authorization: 'Bearer sk_wrongwrongwrongwrongwrongwrongwrong', 'x-forwarded-for': forwardedFor } }).then((r) => r.status);

describe('trusted proxies', () => {
  let behindProxy: TestServer;
  let direct: TestServer;
  before(async () => {
    [behindProxy, direct] = await Promise.all([
      startTestServer({ config: { ...limits, http: { trustedProxies: ['127.0.0.1/32'] } } }),
      startTestServer({ config: { ...limits, http: { trustedProxies: ['10.9.8.7'] } } }),
    ]);
  });
  after(async () => {
    await behindProxy?.close();
    await direct?.close();
  });

  it('from a listed proxy, each forwarded client has its own bucket', async () => {
    assert.deepEqual([await badKey(behindProxy, '203.0.113.5'), await badKey(behindProxy, '203.0.113.5'), await badKey(behindProxy, '203.0.113.5')], [401, 401, 429]);
    assert.equal(await badKey(behindProxy, '198.51.100.7'), 401, 'another client behind the proxy is not locked out');
    // The proxy appends the address it saw; what the client wrote before it is not believed.
    assert.equal(await badKey(behindProxy, '198.51.100.99, 203.0.113.5'), 429);
  });

  it('from a peer that is not listed, X-Forwarded-For is ignored', async () => {
    assert.deepEqual([await badKey(direct, '203.0.113.1'), await badKey(direct, '203.0.113.2'), await badKey(direct, '203.0.113.3')], [401, 401, 429]);
  });

  it('refuses an entry that is neither an IP nor a CIDR', () => {
    assert.throws(() => loadConfig({ PARLEY_HTTP__TRUSTED_PROXIES: '10.0.0.0/8,proxy.local' }), /http.trustedProxies: "proxy.local"/);
  });
});
