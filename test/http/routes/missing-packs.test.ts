/**
 * Issue 40: a request that needs a pack the server does not have (no recogniser at all, no VAD)
 * is answered at once, in its family's error shape, naming the pack and the command that installs
 * it, with no Retry-After: the REST routes of every family, webhook jobs (refused, never stored),
 * URL uploads (refused before the URL is fetched), the WebSockets (an error message, then the
 * close frame), OpenAI's API through the published `openai` package, Wyoming (an error event), and
 * voice cloning, which needs the VAD too.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { makeWav } from '../../jobs/fixtures/wav-transcribe.js';
import { REAL_TEST_MODELS, modelsDirWith, needs } from '../../helpers/models.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { freePort } from '../../helpers/server-process.js';
import { connect, wsUrl } from '../../helpers/websocket.js';
import { WyomingClient } from '../../helpers/wyoming-client.js';

const KEY = `sk_${'m'.repeat(40)}`;
const RECOGNISER = 'sherpa-onnx-moonshine-base-en-int8';
const PULL_BOTH = `\`parley models pull ${RECOGNISER} silero-vad\``;
const NO_RECOGNISER = /no speech recognition model is installed/;
const NO_VAD = /no voice activity detection \(VAD\) model is installed/;

/** A loopback server counting the requests it gets (a URL upload's audio, a webhook). */
async function countingServer(): Promise<{ url: string; hits: string[]; close(): Promise<void> }> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'audio/wav' }).end(Buffer.from(makeWav(1)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function post(s: TestServer, pathname: string, init: RequestInit & { json?: unknown } = {}) {
  const res = await s.api(pathname, { method: 'POST', ...init });
  return { res, body: (await res.json()) as any };
}

function assertNoRetryAfter(res: Response): void {
  assert.equal(res.headers.get('retry-after'), null, 'nothing to wait for: only an install helps');
}

const wav = () => ({ body: Buffer.from(makeWav(1)), headers: { 'content-type': 'audio/wav' } });

describe('nothing installed: every transcription path names the missing packs at once', () => {
  let s: TestServer;
  let files: Awaited<ReturnType<typeof countingServer>>;
  let wyomingPort: number;

  before(async () => {
    files = await countingServer();
    wyomingPort = await freePort();
    s = await startTestServer({
      engines: true,
      config: {
        modelsDir: mkdtempSync(path.join(tmpdir(), 'parley-empty-models-')),
        apiKey: KEY,
        wyoming: { port: wyomingPort, apiKey: KEY },
      },
    });
  });
  after(async () => {
    await s?.close();
    await files?.close();
  });

  it('POST /api/v1/stt/get_text and the product names: 400 in the stt shape', async () => {
    for (const name of ['stt', 'pulse']) {
      const { res, body } = await post(s, `/api/v1/${name}/get_text?language=en`, wav());
      assert.equal(res.status, 400, JSON.stringify(body));
      assertNoRetryAfter(res);
      assert.deepEqual(Object.keys(body).sort(), ['error', 'request_id']);
      assert.match(body.error, NO_RECOGNISER);
      assert.match(body.error, NO_VAD);
      assert.ok(body.error.includes(PULL_BOTH), body.error);
      assert.ok(body.error.includes(`POST /api/v1/admin/models/${RECOGNISER}/install`), body.error);
    }
  });

  it('POST /waves/v1/stt: 400 in the waves shape with error_code PACK_NOT_INSTALLED', async () => {
    const { res, body } = await post(s, '/waves/v1/stt?language=en', wav());
    assert.equal(res.status, 400);
    assertNoRetryAfter(res);
    assert.equal(body.status, 'error');
    assert.equal(body.error_code, 'PACK_NOT_INSTALLED');
    assert.ok(body.message.includes(PULL_BOTH), body.message);
  });

  it('voice cloning needs the VAD too: add_voice and /waves/v1/voice-cloning answer 400 naming silero-vad', async () => {
    const form = () => {
      const f = new FormData();
      f.append('displayName', 'Nobody');
      f.append('file', new Blob([Buffer.from(makeWav(1))], { type: 'audio/wav' }), 'sample.wav');
      return f;
    };
    const legacy = await post(s, '/api/v1/tts-v3.1/add_voice', { body: form() });
    assert.equal(legacy.res.status, 400, JSON.stringify(legacy.body));
    assertNoRetryAfter(legacy.res);
    assert.match(legacy.body.message, /^Voice cloning is unavailable: no voice activity detection \(VAD\) model is installed\. Install it with `parley models pull silero-vad`/);
    const waves = await post(s, '/waves/v1/voice-cloning', { body: form() });
    assert.equal(waves.res.status, 400, JSON.stringify(waves.body));
    assertNoRetryAfter(waves.res);
    assert.equal(waves.body.error_code, 'PACK_NOT_INSTALLED');
    assert.match(waves.body.message, NO_VAD);
  });

  it('a webhook job is refused at submission and never stored', async () => {
    const webhook = encodeURIComponent(`${files.url}/hook`);
    const { res, body } = await post(s, `/api/v1/stt/get_text?language=en&webhook_url=${webhook}`, wav());
    assert.equal(res.status, 400);
    assertNoRetryAfter(res);
    assert.match(body.error, NO_RECOGNISER);
    const job = await s.api(`/api/v1/stt/jobs/${body.request_id}`);
    assert.equal(job.status, 404, 'no job was stored');
    assert.deepEqual(files.hits, []);
  });

  it('a URL upload is refused before the URL is fetched', async () => {
    const { res, body } = await post(s, '/api/v1/stt/get_text?language=en', { json: { url: `${files.url}/speech.wav` } });
    assert.equal(res.status, 400);
    assert.match(body.error, NO_VAD);
    assert.deepEqual(files.hits, [], 'the URL was never fetched');
  });

  it('OpenAI /v1/audio/transcriptions through the openai package: a 400 it does not retry, code pack_not_installed', async () => {
    const client = new OpenAI({ apiKey: s.key, baseURL: `${s.url}/v1` });
    const err = await client.audio.transcriptions
      .create({ file: await toFile(Buffer.from(makeWav(1)), 'a.wav', { type: 'audio/wav' }), model: 'whisper-1' })
      .then(() => assert.fail('transcribed without packs'), (e: unknown) => e);
    assert.ok(err instanceof OpenAI.BadRequestError, String(err));
    assert.equal(err.status, 400);
    assert.equal(err.code, 'pack_not_installed');
    assert.equal(err.headers.get('retry-after'), null);
    assert.ok(err.message.includes(PULL_BOTH), err.message);
  });

  for (const pathname of ['/api/v1/stt/get_text?language=en', '/waves/v1/stt/live?language=en']) {
    it(`the live socket ${pathname.split('?')[0]}: an error message, then a close frame naming the command`, async () => {
      const socket = await connect(wsUrl(s.url, pathname), { authorization: `Bearer ${s.key}` });
      const closed = await socket.untilClosed();
      assert.equal(socket.messages.length, 1, JSON.stringify(socket.messages));
      const [error] = socket.messages;
      assert.equal(error.type, 'error');
      assert.equal(error.error_code, 'PACK_NOT_INSTALLED');
      assert.ok(error.message.includes(PULL_BOTH), error.message);
      assert.equal(closed.code, 1011);
      assert.equal(closed.reason, `no speech recogniser and no VAD installed; run: parley models pull ${RECOGNISER} silero-vad`);
    });
  }

  it('OpenAI Realtime transcription: an error event, then the close frame', async () => {
    const socket = await connect(wsUrl(s.url, '/v1/realtime?intent=transcription'), { authorization: `Bearer ${s.key}` });
    const closed = await socket.untilClosed();
    assert.equal(socket.messages.length, 1, JSON.stringify(socket.messages));
    const [event] = socket.messages;
    assert.equal(event.type, 'error');
    assert.equal(event.error.type, 'invalid_request_error');
    assert.equal(event.error.code, 'pack_not_installed');
    assert.ok(event.error.message.includes(PULL_BOTH), event.error.message);
    assert.equal(closed.code, 1011);
    assert.match(closed.reason, /parley models pull/);
  });

  it('Wyoming: audio-start is answered with an error event naming the packs', async () => {
    const client = await WyomingClient.open(wyomingPort);
    try {
      client.send('transcribe', { language: 'en' });
      client.send('audio-start', { rate: 16_000, width: 2, channels: 1 });
      const event = await client.next();
      assert.equal(event.type, 'error');
      assert.equal(event.data.code, 'pack-not-installed');
      assert.ok(String(event.data.text).includes(PULL_BOTH), String(event.data.text));
    } finally {
      client.socket.destroy();
    }
  });
});

describe('a recogniser but no VAD: the VAD is named alone', { skip: needs({ models: [REAL_TEST_MODELS.STREAMING_ENGLISH] }) }, () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ engines: true, config: { modelsDir: modelsDirWith([REAL_TEST_MODELS.STREAMING_ENGLISH]) } });
  });
  after(() => s?.close());

  it('REST, waves and OpenAI name silero-vad only', async () => {
    const legacy = await post(s, '/api/v1/stt/get_text?language=en', wav());
    assert.equal(legacy.res.status, 400);
    assertNoRetryAfter(legacy.res);
    assert.doesNotMatch(legacy.body.error, NO_RECOGNISER);
    assert.ok(legacy.body.error.includes('`parley models pull silero-vad`'), legacy.body.error);
    const waves = await post(s, '/waves/v1/stt?language=en', wav());
    assert.equal(waves.body.error_code, 'PACK_NOT_INSTALLED');
    assert.match(waves.body.message, NO_VAD);
    const form = new FormData();
    form.append('model', 'whisper-1');
    form.append('file', new Blob([Buffer.from(makeWav(1))], { type: 'audio/wav' }), 'a.wav');
    const openai = await post(s, '/v1/audio/transcriptions', { body: form });
    assert.equal(openai.res.status, 400);
    assert.equal(openai.body.error.code, 'pack_not_installed');
    assert.match(openai.body.error.message, NO_VAD);
  });

  it('the live socket closes with the VAD named', async () => {
    const socket = await connect(wsUrl(s.url, '/waves/v1/stt/live?language=en'), { authorization: `Bearer ${s.key}` });
    const closed = await socket.untilClosed();
    assert.equal(socket.messages[0]?.error_code, 'PACK_NOT_INSTALLED');
    assert.equal(closed.reason, 'no VAD installed; run: parley models pull silero-vad');
  });
});
