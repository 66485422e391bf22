import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as errors from '../../../src/errors.js';
import { streamErrorMessage, toDomainError, toWireError } from '../../../src/http/plugins/error-mapping.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';

describe('error contract', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  /** Every ParleyError subclass the module exports, found by looking, so a new one cannot be missed. */
  type ErrorClass = (new (...args: unknown[]) => errors.ParleyError) & { name: string };
  const errorClasses = (Object.values(errors) as unknown[]).filter(
    (v): v is ErrorClass => typeof v === 'function' && v.prototype instanceof errors.ParleyError,
  );
  // Constructor arguments of the classes that need some: a limit, a retry delay.
  const argsFor: Record<string, unknown[]> = {
    AudioTooLongError: [7200],
    PayloadTooLargeError: [1024],
    RateLimitedError: [3],
    InferenceUnavailableError: ['restarting', 2],
    VoiceCloneError: ['voice_clone_error', 'the voice could not be prepared'],
  };
  // The wire error types the spec defines for the synthesis family, by status.
  const specTypes: Record<number, string> = {
    400: 'InvalidRequest',
    401: 'Unauthorized',
    403: 'Forbidden',
    404: 'NotFound',
    405: 'MethodNotAllowed',
    408: 'RequestTimeout',
    409: 'Conflict',
    413: 'PayloadTooLarge',
    429: 'TooManyRequests',
    500: 'InternalServerError',
    501: 'NotImplemented',
    503: 'ServiceUnavailable',
  };

  it('maps every exported error class to its status and the spec type of both families', () => {
    assert.ok(errorClasses.length >= 17, `found ${errorClasses.length} error classes`);
    for (const Cls of errorClasses) {
      const err = new Cls(...(argsFor[Cls.name] ?? ['because']));
      assert.equal(toDomainError(err, 'speech'), err, Cls.name);
      const speech = toWireError(err, 'speech', 'r1');
      assert.equal(speech.status, err.status, Cls.name);
      if (err.status === 499) {
        // The client is gone: nothing is sent, and the type says so should it ever be logged.
        assert.equal(speech.body.error, 'ClientClosedRequest', Cls.name);
        continue;
      }
      assert.equal(speech.body.error, specTypes[err.status], `${Cls.name}: type for ${err.status}`);
      assert.equal(speech.body.error, err.code, `${Cls.name}: the code is the wire type`);
      // A clone's failure is the one 500 whose words are the client's (what failed, and that nothing was kept).
      const shown = err.status === 500 && !(err instanceof errors.VoiceCloneError) ? 'An unexpected error occurred' : err.message;
      assert.equal(speech.body.message, shown, Cls.name);
      const stt = toWireError(err, 'stt', 'r1');
      assert.equal(stt.status, err.status);
      assert.deepEqual(Object.keys(stt.body).sort(), ['error', 'request_id'], Cls.name);
      assert.equal(stt.body.request_id, 'r1');
      if (err.retryAfterSeconds !== undefined) assert.equal(speech.retryAfter, Math.max(1, Math.ceil(err.retryAfterSeconds)), Cls.name);
      else assert.equal(speech.retryAfter, undefined, Cls.name);
    }
  });

  it('gives a stream the REST body with its status: a 4xx keeps its own type', () => {
    const message = streamErrorMessage(toWireError(new errors.InvalidRequestError('voice_id is unknown'), 'speech', 'r2'), 'r2');
    assert.deepEqual(message, { error: 'InvalidRequest', message: 'voice_id is unknown', status: '400', request_id: 'r2' });
    const busy = streamErrorMessage(toWireError(new errors.OverloadedError(2.2), 'speech', 'r3'), 'r3');
    assert.deepEqual(busy, { error: 'ServiceUnavailable', message: 'Server is busy. Please try again later.', status: '503', request_id: 'r3', retry_after: 3 });
    const unexpected = streamErrorMessage(toWireError(new Error('secret detail'), 'speech', 'r4'), 'r4');
    assert.deepEqual(unexpected, { error: 'InternalServerError', message: 'An unexpected error occurred', status: '500', request_id: 'r4' });
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
