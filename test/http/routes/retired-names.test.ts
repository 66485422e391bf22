/**
 * The names the hosted service retired (it answers 410 there) keep working here: lightning-v2 and
 * lightning-large under both prefixes, their sockets, clone deletion, the retired
 * `/waves/v1/streaming-tts/stream` socket and the `model` values that name them. Each answer says
 * it is deprecated, when the service retired it (`Sunset`) and what replaced it (`Link`).
 */
import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { WebSocket } from 'ws';
import { parseWav } from '../../../src/audio/wav.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { allSseEvents } from '../../helpers/sse.js';
import { wsUrl } from '../../helpers/websocket.js';

const VOICE = 'espeak-en-us-female';
const SHORT = 'Hi there.';
const RETIRED_ON = 'Tue, 19 May 2026 00:00:00 GMT';

let s: TestServer;

before(async () => {
  s = await startTestServer({ engines: true });
});
after(() => s?.close());

function assertRetired(headers: Headers, successor: string | null): void {
  assert.equal(headers.get('deprecation'), 'true');
  assert.equal(headers.get('sunset'), RETIRED_ON);
  assert.equal(headers.get('link'), successor === null ? null : `<${successor}>; rel="successor-version"`);
}

/** The headers of the 101 that answers a socket's upgrade. */
function upgradeHeaders(path: string): Promise<IncomingHttpHeaders> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl(s.url, path), { headers: { authorization: `Bearer ${s.key}` } });
    ws.on('upgrade', (res) => resolve(res.headers));
    ws.on('open', () => ws.close());
    ws.on('error', reject);
  });
}

describe('retired names answer, marked as retired', () => {
  for (const prefix of ['/api/v1', '/waves/v1']) {
    for (const name of ['lightning-v2', 'lightning-large']) {
      it(`${prefix}/${name}: get_speech, stream and get_voices, each linking its lightning-v3.1 route`, async () => {
        const speech = await s.api(`${prefix}/${name}/get_speech`, { method: 'POST', json: { text: SHORT, voice_id: VOICE, output_format: 'wav' } });
        assert.equal(speech.status, 200);
        assertRetired(speech.headers, `${prefix}/lightning-v3.1/get_speech`);
        assert.ok(parseWav(new Uint8Array(await speech.arrayBuffer())).samples.length > 24000 * 0.3);

        const stream = await s.api(`${prefix}/${name}/stream`, { method: 'POST', json: { text: SHORT, voice_id: VOICE } });
        assert.equal(stream.status, 200);
        assertRetired(stream.headers, `${prefix}/lightning-v3.1/stream`);
        assert.deepEqual(JSON.parse((await allSseEvents(stream)).at(-1)!.data), { status: '200', done: true });

        const voices = await s.api(`${prefix}/${name}/get_voices`);
        assert.equal(voices.status, 200);
        assertRetired(voices.headers, `${prefix}/lightning-v3.1/get_voices`);
        assert.ok(((await voices.json()) as { voices: { voiceId: string }[] }).voices.some((v) => v.voiceId === VOICE));
      });

      it(`${prefix}/${name}/get_speech/stream: the upgrade's 101 carries the same headers`, async () => {
        const headers = await upgradeHeaders(`${prefix}/${name}/get_speech/stream`);
        assert.equal(headers.deprecation, 'true');
        assert.equal(headers.sunset, RETIRED_ON);
        assert.equal(headers.link, `<${prefix}/lightning-v3.1/get_speech/stream>; rel="successor-version"`);
      });
    }
  }

  it('the clone list and deletion under lightning-large: served, the list linking /waves/v1/voice-cloning', async () => {
    const list = await s.api('/waves/v1/lightning-large/get_cloned_voices');
    assert.equal(list.status, 200);
    assertRetired(list.headers, '/waves/v1/voice-cloning');
    assert.deepEqual(await list.json(), { voices: [] });

    // Deletion has no successor route on the service; an unknown id is still a 404 in the family's shape.
    const deleted = await s.api('/waves/v1/lightning-large', { method: 'DELETE', json: { voiceId: 'voice_unknown' } });
    assert.equal(deleted.status, 404);
    assertRetired(deleted.headers, null);
    assert.equal(((await deleted.json()) as { status: string }).status, 'error');
  });

  it('model lightning_v2 and lightning-v2 on POST /waves/v1/tts speak, answered Deprecation: true', async () => {
    for (const model of ['lightning_v2', 'lightning-v2']) {
      const res = await s.api('/waves/v1/tts', { method: 'POST', json: { text: SHORT, voice_id: VOICE, model, output_format: 'wav' } });
      assert.equal(res.status, 200, model);
      assert.equal(res.headers.get('deprecation'), 'true');
      assert.ok(parseWav(new Uint8Array(await res.arrayBuffer())).samples.length > 0);
    }
    const current = await s.api('/waves/v1/tts', { method: 'POST', json: { text: SHORT, voice_id: VOICE, model: 'lightning_v3.1' } });
    assert.equal(current.headers.get('deprecation'), null);
    await current.arrayBuffer();
  });

  it('the current names are not marked', async () => {
    const res = await s.api('/waves/v1/lightning-v3.1/get_voices');
    assert.equal(res.headers.get('deprecation'), null);
    assert.equal(res.headers.get('sunset'), null);
    await res.arrayBuffer();
    assert.equal((await upgradeHeaders('/waves/v1/tts/live')).deprecation, undefined);
  });

  it('/waves/v1/streaming-tts/stream: its upgrade says deprecated and links /waves/v1/tts/live', async () => {
    const headers = await upgradeHeaders('/waves/v1/streaming-tts/stream');
    assert.equal(headers.deprecation, 'true');
    assert.equal(headers.sunset, undefined);
    assert.equal(headers.link, '</waves/v1/tts/live>; rel="successor-version"');
  });
});
