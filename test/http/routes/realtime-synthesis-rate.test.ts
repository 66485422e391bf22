/**
 * WebSocket synthesis pays the account's synthesis rate limit per request, as REST does: the
 * upgrade takes one token, every message that starts a synthesis another; without one the
 * message is refused (429 with retry_after) and the socket stays usable. The bucket is the
 * account's, shared with REST.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { connect, wsUrl } from '../../helpers/websocket.js';

const VOICE = 'espeak-en-us-female';

describe('WebSocket synthesis and the rate limit', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ engines: true, config: { rateLimits: { synthesis: { perMinute: 1, burst: 4 } }, logLevel: 'warn' } });
  });
  after(() => s?.close());

  it('each message starting a synthesis takes a token; past the burst they are refused with 429, text continuing a request is free', async () => {
    const socket = await connect(wsUrl(s.url, '/api/v1/tts-v2/get_speech/stream'), { authorization: `Bearer ${s.key}` });
    // The upgrade took one of 4 tokens: 3 requests run; "c" is continued by two free messages.
    socket.send({ request_id: 'a', text: 'One.', voice_id: VOICE });
    socket.send({ request_id: 'b', text: 'Two.', voice_id: VOICE });
    socket.send({ request_id: 'c', text: 'Three', voice_id: VOICE, continue: true });
    socket.send({ request_id: 'c', text: ' and', voice_id: VOICE, continue: true });
    socket.send({ request_id: 'c', text: ' four.', voice_id: VOICE, flush: true });
    for (const id of ['d', 'e', 'f']) socket.send({ request_id: id, text: 'Too many.', voice_id: VOICE });
    await socket.until((all) => ['a', 'b', 'c', 'd', 'e', 'f'].every((id) => all.some((m) => m.request_id === id && (m.status === 'complete' || m.status === 'error'))));
    const ends = Object.fromEntries(
      socket.messages.filter((m) => m.status === 'complete' || m.status === 'error').map((m) => [m.request_id, m.status === 'error' ? m.error.code : 'complete']),
    );
    assert.deepEqual(ends, { a: 'complete', b: 'complete', c: 'complete', d: 'TooManyRequests', e: 'TooManyRequests', f: 'TooManyRequests' });
    const refused = socket.messages.find((m) => m.request_id === 'd');
    assert.ok(refused.retry_after >= 1, JSON.stringify(refused));
    socket.close();
    // The bucket is the account's: REST is refused too.
    const rest = await s.api('/api/v1/tts-v2/get_speech', { method: 'POST', json: { text: 'Hi.', voice_id: VOICE } });
    assert.equal(rest.status, 429);
  });
});
