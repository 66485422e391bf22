/**
 * The key as clients of the hosted service send it: `Authorization: Bearer <key>` and
 * `Authorization: Token <key>` (the TTS socket of Bolna 0.9.7 to 0.10.136, bolna-ai/bolna @ e659b4cb,
 * bolna/synthesizer/smallest_synthesizer.py), over HTTP and on a WebSocket upgrade, with each
 * route family's refusal body for a missing or bad key.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { connect, openSocket, TestSocket, wsUrl } from '../../helpers/websocket.js';

const VOICE = 'espeak-en-us-female';

let s: TestServer;

before(async () => {
  s = await startTestServer({ engines: true });
});
after(() => s?.close());

const get = (path: string, authorization?: string) => fetch(s.url + path, { headers: authorization === undefined ? {} : { authorization } });

describe('Authorization: Token <key> beside Bearer', () => {
  for (const scheme of ['Bearer', 'Token', 'token', 'TOKEN']) {
    it(`${scheme} <key> is accepted under /api/v1, /waves/v1 and OpenAI's /v1`, async () => {
      for (const path of ['/api/v1/tts-v2/get_voices', '/waves/v1/lightning-v3.1/get_voices', '/v1/models']) {
        const res = await get(path, `${scheme} ${s.key}`);
        assert.equal(res.status, 200, `${path}: ${await res.clone().text()}`);
      }
    });
  }

  it('a bad Token key is refused with 401 in each family’s shape', async () => {
    const legacy = await get('/api/v1/tts-v2/get_voices', 'Token sk_nope');
    assert.equal(legacy.status, 401);
    assert.deepEqual(await legacy.json(), { error: 'Unauthorized', message: 'Bearer token is invalid' });

    const waves = await get('/waves/v1/lightning-v3.1/get_voices', 'Token sk_nope');
    assert.equal(waves.status, 401);
    const body = (await waves.json()) as Record<string, unknown>;
    assert.equal(body.status, 'error');
    assert.equal(body.message, 'Bearer token is invalid');
    assert.equal(body.request_id, waves.headers.get('x-request-id'));

    const openai = await get('/v1/models', 'Token sk_nope');
    assert.equal(openai.status, 401);
    assert.equal(((await openai.json()) as { error: { code: string } }).error.code, 'invalid_api_key');
  });

  it('another scheme, or Token without a key, is a missing key', async () => {
    for (const header of ['Basic dXNlcjpwYXNz', 'Token', 'Token ', `Tokens ${s.key}`]) {
      const res = await get('/api/v1/tts-v2/get_voices', header);
      assert.equal(res.status, 401, header);
      assert.deepEqual(await res.json(), { error: 'Unauthorized', message: 'Bearer token is missing' }, header);
    }
  });

  it('a WebSocket upgrade with Token <key> is accepted and speaks; a bad one is refused before the upgrade', async () => {
    const url = wsUrl(s.url, '/waves/v1/tts/live');
    const socket = await connect(url, { authorization: `Token ${s.key}` });
    socket.send({ voice_id: VOICE, text: 'Hi.' });
    await socket.until((all) => all.some((m) => m.status === 'complete' || m.status === 'error'));
    assert.equal(socket.messages.at(-1).status, 'complete', JSON.stringify(socket.messages.at(-1)));
    assert.ok(socket.messages.some((m) => m.status === 'chunk' && Buffer.from(m.data.audio, 'base64').length > 0));
    socket.close();

    const refused = await openSocket(url, { authorization: 'Token sk_nope' });
    assert.ok(!(refused instanceof TestSocket), 'the upgrade must not happen');
    assert.equal(refused.status, 401);
    assert.equal(refused.body.message, 'Bearer token is invalid');
  });
});
