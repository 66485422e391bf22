import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { errorClasses } from '../../src/errors.js';
import { toDomainError, wireBody } from '../../src/http/plugins/error-mapping.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('error contract', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  it('maps every error class to a status and both family bodies', () => {
    for (const Cls of errorClasses) {
      const err = new (Cls as any)(...(Cls.name === 'PayloadTooLargeError' ? [1] : Cls.name === 'RateLimitedError' ? [1] : []));
      assert.equal(toDomainError(err, 'speech'), err);
      const speech = wireBody(err, 'speech', 'r1');
      assert.equal(speech.status, err.status, Cls.name);
      assert.equal(typeof (speech.body as any).error, 'string');
      assert.equal(typeof (speech.body as any).message, 'string');
      const stt = wireBody(err, 'stt', 'r1');
      assert.deepEqual(Object.keys(stt.body).sort(), ['error', 'request_id']);
    }
  });

  it('answers 401 with the synthesis body when the key is missing or wrong', async () => {
    for (const headers of [{} as Record<string, string>, { authorization: 'Bearer sk_wrongwrongwrongwrongwrongwrongwrong12' }, { authorization: 'Basic abc' }]) {
      const r = await fetch(`${s.url}/api/v1/tts-v2/get_voices`, { headers });
      assert.equal(r.status, 401);
      const body = await r.json();
      assert.equal(body.error, 'Unauthorized');
      assert.match(body.message, /bearer token/i);
      assert.deepEqual(Object.keys(body).sort(), ['error', 'message']);
    }
  });

  it('answers 401 with the transcription body on /stt', async () => {
    const r = await fetch(`${s.url}/api/v1/stt/get_text`, { method: 'POST', headers: { 'content-type': 'audio/wav' }, body: new Uint8Array(10) });
    assert.equal(r.status, 401);
    const body = await r.json();
    assert.equal(body.error, 'Unauthorized - Invalid API key');
    assert.equal(body.request_id, r.headers.get('x-request-id'));
  });

  it('answers 404 with the family body for unknown paths', async () => {
    const r = await s.api('/api/v1/tts-v9/get_voices');
    assert.equal(r.status, 404);
    const body = await r.json();
    assert.equal(body.error, 'NotFound');
    assert.match(body.message, /tts-v9/);
    const outside = await fetch(`${s.url}/nothing-here`);
    assert.equal(outside.status, 404);
    assert.equal((await outside.json()).error, 'NotFound');
    const stt = await s.api('/api/v1/stt/nope');
    assert.equal(stt.status, 404);
    const sttBody = await stt.json();
    assert.equal(typeof sttBody.error, 'string');
    assert.ok(sttBody.request_id);
  });

  it('answers 405 with Allow for a known path and wrong method', async () => {
    const r = await s.api('/api/v1/tts-v2/get_voices', { method: 'POST', json: {} });
    assert.equal(r.status, 405);
    assert.equal(r.headers.get('allow'), 'GET');
    const body = await r.json();
    assert.equal(body.error, 'MethodNotAllowed');
  });

  it('answers 413 for a JSON body over the limit', async () => {
    const big = 'x'.repeat(s.config.limits.maxJsonBytes + 10);
    const r = await s.api('/api/v1/pronunciation-dicts', { method: 'POST', json: { items: [{ word: 'a', pronunciation: big }] } });
    assert.equal(r.status, 413);
    assert.equal((await r.json()).error, 'PayloadTooLarge');
  });

  it('answers 400 InvalidRequest naming the field and rule for schema violations', async () => {
    const cases: [unknown, RegExp][] = [
      [{}, /^items is required$/],
      [{ items: [] }, /^items must have at least 1 item/],
      [{ items: [{ word: 'a' }] }, /^items\.0\.pronunciation is required$/],
      [{ items: [{ word: 5, pronunciation: 'x' }] }, /^items\.0\.word must be a string$/],
    ];
    for (const [json, message] of cases) {
      const r = await s.api('/api/v1/pronunciation-dicts', { method: 'POST', json });
      assert.equal(r.status, 400, JSON.stringify(json));
      const body = await r.json();
      assert.equal(body.error, 'InvalidRequest');
      assert.match(body.message, message);
    }
    const bad = await s.api('/api/v1/pronunciation-dicts', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"items": [' });
    assert.equal(bad.status, 400);
    assert.deepEqual(await bad.json(), { error: 'InvalidRequest', message: 'Request body is not valid JSON' });
  });

  it('echoes a valid client X-Request-Id and makes one otherwise', async () => {
    const mine = await s.api('/api/v1/tts-v2/get_voices', { headers: { 'x-request-id': 'client-42.a_b' } });
    assert.equal(mine.headers.get('x-request-id'), 'client-42.a_b');
    const invalid = await s.api('/api/v1/tts-v2/get_voices', { headers: { 'x-request-id': 'bad id with spaces' } });
    assert.match(invalid.headers.get('x-request-id')!, /^req_[0-9a-f]{32}$/);
    const health = await fetch(`${s.url}/healthz`);
    assert.ok(health.headers.get('x-request-id'));
  });

  it('never leaks a stack trace', async () => {
    const r = await s.api('/api/v1/tts-large', { method: 'DELETE', headers: { 'content-type': 'application/json' }, body: 'nope' });
    const text = await r.text();
    assert.doesNotMatch(text, /at .*\.(ts|js):\d+/);
  });
});

describe('rate limits', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ config: { rateLimits: { management: { perMinute: 60, burst: 2 } } as any } });
  });
  after(() => s.close());

  it('answers 429 with Retry-After and the family body once the bucket is empty', async () => {
    assert.equal((await s.api('/api/v1/tts-v2/get_voices')).status, 200);
    assert.equal((await s.api('/api/v1/tts-v2/get_voices')).status, 200);
    const r = await s.api('/api/v1/tts-v2/get_voices');
    assert.equal(r.status, 429);
    assert.ok(Number(r.headers.get('retry-after')) >= 1);
    assert.deepEqual(await r.json(), { error: 'TooManyRequests', message: 'Rate limit exceeded. Please try again later.' });
  });
});
