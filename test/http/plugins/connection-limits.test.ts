/**
 * HTTP bounds through real sockets (config.http): slow headers and bodies are cut, idle
 * connections closed, an SSE stream or a whole file whose client stops reading is ended and its
 * synthesis stopped, and connections beyond the cap are refused.
 */
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { countSentences } from '../../helpers/counting-engines.js';
import { connectRaw, parseResponse, within } from '../../helpers/raw-http.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';

const ESPEAK = 'espeak-en-us-female';
// About three minutes of speech: far more than loopback socket buffers hold (~12 MB as base64 PCM at 24 kHz).
const LONG_TEXT = Array.from({ length: 60 }, (_, i) => `This is sentence number ${i + 1} of a long text that nobody will listen to.`).join(' ');

/** The server's side of the next connection made to `s`. */
function nextServerSocket(s: TestServer): Promise<Socket> {
  return new Promise((resolve) => s.server.app.server.once('connection', resolve));
}

function openConnections(s: TestServer): Promise<number> {
  return new Promise((resolve, reject) => s.server.app.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('HTTP timeouts', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({
      engines: true,
      config: {
        http: { headersTimeoutMs: 500, bodyTimeoutMs: 1_000, keepAliveTimeoutMs: 300, writeStallTimeoutMs: 500 },
        rateLimits: { synthesis: { perMinute: 0 } },
        logLevel: 'silent',
      },
    });
  });
  after(() => s?.close());

  it('a JSON body trickling in at a byte at a time is cut with 408 and the speech error body', async () => {
    const c = await connectRaw(s.url);
    const body = JSON.stringify({ items: [{ word: 'tomato', pronunciation: 'tomahto' }] });
    c.write(
      `POST /api/v1/pronunciation-dicts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.key}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    c.trickle(body, 100);
    const text = await within(c.closed, 5_000, 'the server closing the connection');
    const res = parseResponse(text);
    assert.equal(res.status, 408);
    assert.deepEqual(res.body, { error: 'RequestTimeout', message: 'Request body was not received within 1 s' });
    assert.equal(res.headers.connection, 'close');
    assert.deepEqual(await (await s.api('/api/v1/pronunciation-dicts')).json(), [], 'nothing was created');
  });

  it('an audio upload trickling in is cut with 408 and the transcription error body', async () => {
    const c = await connectRaw(s.url);
    c.write(
      `POST /api/v1/stt/get_text HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.key}\r\nX-Request-Id: slow-upload-1\r\n` +
        `Content-Type: audio/wav\r\nContent-Length: 100000\r\n\r\nRIFF`,
    );
    c.trickle('x'.repeat(100), 100);
    const res = parseResponse(await within(c.closed, 5_000, 'the server closing the connection'));
    assert.equal(res.status, 408);
    assert.deepEqual(res.body, { error: 'Request body was not received within 1 s', request_id: 'slow-upload-1' });
  });

  it('a request answered before its body was read says Connection: close, so no client sends its next request into a closing socket', async () => {
    const c = await connectRaw(s.url);
    c.write(
      `POST /api/v1/stt/get_text HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.key}\r\n` +
        `Content-Type: text/x-not-audio\r\nContent-Length: 100000\r\n\r\nRIFF`,
    );
    const res = parseResponse(await within(c.closed, 5_000, 'the server closing the connection'));
    assert.ok(res.status >= 400 && res.status < 500, `a 4xx, got ${res.status}`);
    assert.equal(res.headers.connection, 'close');
  });

  it('headers trickling in are cut after headersTimeoutMs', async () => {
    const c = await connectRaw(s.url);
    c.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
    c.trickle('X-Slow: ' + 'a'.repeat(200), 50);
    const text = await within(c.closed, 5_000, 'the server closing the connection');
    assert.match(text, /^HTTP\/1\.1 408 /);
  });

  it('a connection that never sends a request is closed after headersTimeoutMs', async () => {
    const c = await connectRaw(s.url);
    await within(c.closed, 5_000, 'the server closing the silent connection');
  });

  it('an idle keep-alive connection is closed after keepAliveTimeoutMs', async () => {
    const c = await connectRaw(s.url);
    c.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n');
    await waitFor('the response', async () => c.received().includes('{"status":"ok"}'));
    const text = await within(c.closed, 5_000, 'the server closing the idle connection');
    assert.equal(parseResponse(text).status, 200);
  });

  it('an SSE stream whose client stops reading is closed and its synthesis stopped', async () => {
    const probe = countSentences(s.server.voices);
    try {
      const serverSide = nextServerSocket(s);
      const c = await connectRaw(s.url);
      const server = await serverSide;
      const body = JSON.stringify({ text: LONG_TEXT, voice_id: ESPEAK, output_format: 'pcm', sample_rate: 24000 });
      c.write(
        `POST /api/v1/tts-v2/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.key}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      await waitFor('the stream to begin', async () => c.received().includes('event: chunk'));
      c.socket.pause(); // the client stops reading; socket buffers fill up
      await waitFor('the server to close the stalled stream', async () => server.destroyed, 60_000);
      const atClose = probe.started();
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(probe.started(), atClose, 'no sentence is started once the stream is closed');
      assert.ok(atClose < 60, `only part of the text was synthesised (${atClose} of 60 sentences)`);
      c.close();
    } finally {
      probe.restore();
    }
    const again = await s.api('/api/v1/tts-v2/get_speech', { method: 'POST', json: { text: 'Still here.', voice_id: ESPEAK } });
    assert.equal(again.status, 200);
    await again.arrayBuffer();
  });

  it('a whole file whose client does not read it is dropped after writeStallTimeoutMs', async () => {
    const serverSide = nextServerSocket(s);
    const c = await connectRaw(s.url);
    const server = await serverSide;
    c.socket.pause();
    const body = JSON.stringify({ text: LONG_TEXT, voice_id: ESPEAK, output_format: 'wav', sample_rate: 24000 });
    c.write(
      `POST /api/v1/tts-v2/get_speech HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.key}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    await waitFor('the server to drop the unread response', async () => server.destroyed, 60_000);
    // What the kernel had taken before the stall is all the client gets: less than the file.
    c.socket.resume();
    const res = parseResponse(await within(c.closed, 5_000, 'the client seeing the connection closed'));
    assert.equal(res.status, 200);
    const sent = Buffer.byteLength(String(res.body), 'latin1');
    assert.ok(sent < Number(res.headers['content-length']), `${sent} of ${res.headers['content-length']} bytes arrived`);
  });
});

describe('connection cap', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ config: { http: { maxConnections: 3 } } });
  });
  after(() => s?.close());

  it('refuses connections beyond http.maxConnections and takes new ones when some close', async () => {
    const held = await Promise.all([connectRaw(s.url), connectRaw(s.url), connectRaw(s.url)]);
    await waitFor('three open connections', async () => (await openConnections(s)) === 3);

    const refused = await connectRaw(s.url);
    refused.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    const text = await within(refused.closed, 5_000, 'the server closing the fourth connection');
    assert.equal(text, '', 'no response on a refused connection');

    held[0]!.close();
    await waitFor('two open connections', async () => (await openConnections(s)) === 2);
    const ok = await fetch(`${s.url}/healthz`);
    assert.equal(ok.status, 200);
    assert.deepEqual(await ok.json(), { status: 'ok' });
    for (const c of held) c.close();
  });
});

describe('connections per address', () => {
  let s: TestServer;
  let proxied: TestServer;
  before(async () => {
    [s, proxied] = await Promise.all([
      startTestServer({ config: { http: { maxConnections: 20, maxConnectionsPerAddress: 3 } } }),
      startTestServer({ config: { http: { maxConnections: 20, maxConnectionsPerAddress: 3, trustedProxies: ['127.0.0.1'] } } }),
    ]);
  });
  after(async () => {
    await s?.close();
    await proxied?.close();
  });

  it('one address may hold http.maxConnectionsPerAddress connections; its next one is closed at once', async () => {
    const held = await Promise.all([connectRaw(s.url), connectRaw(s.url), connectRaw(s.url)]);
    await waitFor('three open connections', async () => (await openConnections(s)) === 3);
    const refused = await connectRaw(s.url);
    refused.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.equal(await within(refused.closed, 2_000, 'the server closing the fourth connection'), '');
    held[0]!.close();
    await waitFor('two open connections', async () => (await openConnections(s)) === 2);
    const ok = await fetch(`${s.url}/healthz`);
    assert.equal(ok.status, 200);
    await ok.arrayBuffer();
    for (const c of held) c.close();
  });

  it('a trusted proxy is not held to the per-address cap', async () => {
    const held = await Promise.all(Array.from({ length: 5 }, () => connectRaw(proxied.url)));
    await waitFor('five open connections', async () => (await openConnections(proxied)) === 5);
    held[4]!.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await waitFor('an answer on the fifth', async () => held[4]!.received().includes('{"status":"ok"}'));
    for (const c of held) c.close();
  });
});

describe('keep-alive under pressure', () => {
  let s: TestServer;
  before(async () => {
    // Pressure from 8 open connections (80% of 10).
    s = await startTestServer({ config: { http: { maxConnections: 10, keepAliveTimeoutMs: 60_000, pressureKeepAliveTimeoutMs: 300 } } });
  });
  after(() => s?.close());

  const keptAlive = async () => {
    const c = await connectRaw(s.url);
    c.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n');
    await waitFor('the response', async () => c.received().includes('{"status":"ok"}'));
    return c;
  };

  it('idle keep-alive connections keep keepAliveTimeoutMs without pressure, and are cut to the short timeout under it', async () => {
    const first = await keptAlive();
    await new Promise((r) => setTimeout(r, 800));
    assert.equal(first.socket.destroyed, false, 'an idle connection without pressure stays open');
    const more = await Promise.all(Array.from({ length: 7 }, keptAlive));
    // Eight open: every idle one, the first included, is closed within the short timeout.
    for (const c of [first, ...more]) await within(c.closed, 3_000, 'the server closing an idle connection under pressure');
    assert.equal(await openConnections(s), 0);
  });
});
