/**
 * The service's other products under /waves/v1 (chat completions, post-call analysis, analytics,
 * speech-to-speech): a key is still checked first, the answer is 501 naming what is not offered,
 * another method is 405, and the legacy prefix has none of them. Every documented operation's 501
 * is walked by test/contract/waves-speech.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { NOT_OFFERED_ROUTES } from '../../../src/http/routes/not-offered.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';

let s: TestServer;

before(async () => {
  s = await startTestServer();
});
after(() => s?.close());

it('without a key: 401, before anything is said about the route', async () => {
  const res = await fetch(`${s.url}/waves/v1/chat/completions`, { method: 'POST' });
  assert.equal(res.status, 401);
});

it('each route answers 501 in the family shape, naming the product and the request', async () => {
  for (const { methods, url, product } of NOT_OFFERED_ROUTES) {
    const path = `/waves/v1${url.replace('*', 'tts/logs')}`;
    const res = await s.api(path, { method: methods[0] });
    assert.equal(res.status, 501, path);
    assert.deepEqual(await res.json(), {
      status: 'error',
      error: 'NotImplemented',
      message: `${product} (${methods[0]} ${path}) is not offered by this server`,
      request_id: res.headers.get('x-request-id'),
    });
  }
});

it('another method is 405, and the legacy prefix does not answer them', async () => {
  const wrong = await s.api('/waves/v1/analytics/tts/logs', { method: 'POST' });
  assert.equal(wrong.status, 405);
  assert.equal(wrong.headers.get('allow'), 'GET, DELETE');
  assert.equal((await s.api('/api/v1/chat/completions', { method: 'POST' })).status, 404);
});
