/**
 * Transcription of audio given as JSON {url}, fetched by a real
 * Parley server from a real loopback HTTP server. The test server allows 127.0.0.1 explicitly;
 * a second server allows nothing and must refuse the same address.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { REAL_TEST_MODELS, corpusFile, modelsDirWith, needs } from '../../helpers/models.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { expectSttError } from '../../helpers/stt-errors.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH], corpus: true });

const AUDIO = 'en/cmu-arctic-aew-a0003.wav';
const INVALID_FORMAT = 'Invalid file format. Supported formats: audio/*';
const TOO_LARGE = 'File size exceeds maximum limit of 25MB';
const TOTAL_TIMEOUT_MS = 1500;

/** The loopback server the audio URLs point at. */
async function startFileServer(wav: Buffer): Promise<{ base: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const p = url.pathname;
    const redirect = /^\/hop\/(\d+)\/(.+)$/.exec(p);
    if (redirect) {
      // /hop/<n>/<name> redirects n times, then serves the audio as <name>.
      const n = Number(redirect[1]);
      const location = n > 1 ? `/hop/${n - 1}/${redirect[2]}` : `/files/${redirect[2]}`;
      res.writeHead(n % 2 ? 302 : 307, { location }).end();
      return;
    }
    if (p.startsWith('/files/')) {
      res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': wav.byteLength }).end(wav);
      return;
    }
    if (p === '/octet/speech') {
      res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(wav);
      return;
    }
    if (p === '/stall-headers.wav') {
      res.writeHead(200, { 'content-type': 'audio/wav' });
      res.flushHeaders();
      return; // never a byte of body
    }
    if (p === '/stall-body.wav') {
      res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': wav.byteLength });
      res.write(wav.subarray(0, 1000));
      return; // the rest never comes
    }
    if (p === '/huge-announced.wav' || p === '/huge-chunked.wav') {
      const total = 26 * 1024 * 1024;
      const headers: http.OutgoingHttpHeaders = { 'content-type': 'audio/wav' };
      if (p === '/huge-announced.wav') headers['content-length'] = total;
      res.writeHead(200, headers);
      const block = Buffer.alloc(1024 * 1024);
      let sent = 0;
      const pump = () => {
        while (sent < total) {
          sent += block.length;
          if (!res.write(block)) return void res.once('drain', pump);
        }
        res.end();
      };
      res.on('error', () => {});
      pump();
      return;
    }
    if (p === '/page.html') {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>not audio</body></html>');
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('no such file');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe('POST /api/v1/stt/get_text with a JSON {url}', { skip: NEEDS }, () => {
  let s: TestServer;
  let strict: TestServer;
  let files: Awaited<ReturnType<typeof startFileServer>>;
  const wav = readFileSync(corpusFile(AUDIO));

  async function postJson(server: TestServer, body: unknown, query = ''): Promise<{ res: Response; body: any }> {
    const res = await server.api(`/api/v1/stt/get_text${query}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const json = await res.json();
    const requestId = res.headers.get('x-request-id');
    assert.ok(requestId, 'every response carries X-Request-Id');
    assert.equal(json.request_id, requestId);
    return { res, body: json };
  }


  before(async () => {
    const names = ['silero-vad-v5', 'sherpa-onnx-kws-zipformer-gigaspeech-3.3M-2024-01-01-mobile'];
    const common = { logLevel: 'warn' as const, rateLimits: { transcription: { perMinute: 0 } } };
    [s, strict, files] = await Promise.all([
      startTestServer({
        engines: true,
        config: { ...common, modelsDir: modelsDirWith(names), transcription: { urlTotalTimeoutMs: TOTAL_TIMEOUT_MS } },
      }),
      startTestServer({ engines: true, config: { ...common, modelsDir: modelsDirWith(names), allowedPrivateHosts: [] } }),
      startFileServer(wav),
    ]);
  });
  after(async () => {
    await Promise.all([s?.close(), strict?.close()]);
    await files?.close();
  });

  it('transcribes the audio at a plain 200 URL; filename is the last path segment', async () => {
    const { res, body } = await postJson(s, { url: `${files.base}/files/arctic-a0003.wav` }, '?word_timestamps=true');
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.status, 'success');
    assert.equal(body.metadata.filename, 'arctic-a0003.wav');
    assert.equal(body.metadata.fileSize, wav.byteLength);
    assert.ok(Math.abs(body.duration - 3.54) <= 0.05, `duration ${body.duration}`);
    assert.ok(body.transcription.length > 0);
    assert.ok(body.words.length > 0, 'query options apply to URL input too');
  });

  it('the same bytes give the same result by URL as uploaded', async () => {
    const byUrl = (await postJson(s, { url: `${files.base}/files/same.wav` })).body;
    const res = await s.api('/api/v1/stt/get_text', { method: 'POST', headers: { 'content-type': 'audio/wav' }, body: wav });
    const uploaded = (await res.json()) as any;
    assert.equal(byUrl.transcription, uploaded.transcription);
    assert.equal(byUrl.duration, uploaded.duration);
  });

  it('sniffs the audio when the URL serves it as application/octet-stream', async () => {
    const { res, body } = await postJson(s, { url: `${files.base}/octet/speech` });
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.metadata.filename, 'speech');
  });

  it('follows 3 redirects', async () => {
    const { res, body } = await postJson(s, { url: `${files.base}/hop/3/after-hops.wav` });
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.metadata.fileSize, wav.byteLength);
  });

  it('refuses a 4th redirect with 400 saying so', async () => {
    await expectSttError(postJson(s, { url: `${files.base}/hop/4/too-far.wav` }), 400, /redirect/i);
  });

  it('gives up on a server that sends headers then stalls: 400 timeout', async () => {
    // The stalling server never finishes: only the total timeout can end these requests.
    await expectSttError(postJson(s, { url: `${files.base}/stall-headers.wav` }), 400, /timed out/i);
    await expectSttError(postJson(s, { url: `${files.base}/stall-body.wav` }), 400, /timed out/i);
  });

  it('stops a download over 25 MB: 413 whether or not the size was announced', async () => {
    await expectSttError(postJson(s, { url: `${files.base}/huge-announced.wav` }), 413, TOO_LARGE);
    await expectSttError(postJson(s, { url: `${files.base}/huge-chunked.wav` }), 413, TOO_LARGE);
  });

  it('an HTTP error at the URL is 400 naming the status', async () => {
    await expectSttError(postJson(s, { url: `${files.base}/missing.wav` }), 400, /404/);
  });

  it('a page that is not audio is 400 Invalid file format', async () => {
    await expectSttError(postJson(s, { url: `${files.base}/page.html` }), 400, INVALID_FORMAT);
  });

  it('a port with nothing listening is 400', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    await expectSttError(postJson(s, { url: `http://127.0.0.1:${port}/gone.wav` }), 400, /could not be fetched|ECONNREFUSED/);
  });

  it('refuses loopback when config allows no private host', async () => {
    await expectSttError(postJson(strict, { url: `${files.base}/files/a.wav` }), 400, /not allowed/);
    await expectSttError(postJson(strict, { url: `http://localhost:${new URL(files.base).port}/files/a.wav` }), 400, /not allowed/);
  });

  it('allows only the listed private host: other loopback, private, link-local addresses are refused', async () => {
    for (const host of ['127.0.0.2', '[::1]', '10.1.2.3', '192.168.0.10', '169.254.169.254', '0.0.0.0']) {
      await expectSttError(postJson(s, { url: `http://${host}:${new URL(files.base).port}/files/a.wav` }), 400, /not allowed/);
    }
  });

  it('refuses schemes other than http and https', async () => {
    for (const url of ['ftp://127.0.0.1/a.wav', 'file:///etc/passwd', 'data:audio/wav;base64,UklGRg==', 'gopher://127.0.0.1/']) {
      await expectSttError(postJson(s, { url }), 400, /http/);
    }
  });

  it('malformed JSON, a missing url or a url that is not a URL are 400', async () => {
    await expectSttError(postJson(s, '{"url": '), 400, /JSON/);
    await expectSttError(postJson(s, {}), 400, /url/);
    await expectSttError(postJson(s, { url: 42 }), 400, /url/);
    await expectSttError(postJson(s, { url: '' }), 400, /url/);
    await expectSttError(postJson(s, ['http://127.0.0.1/a.wav']), 400, /url/);
    await expectSttError(postJson(s, { url: 'not a url' }), 400, /not a valid URL/);
  });

  it('query options are still validated for URL input', async () => {
    await expectSttError(postJson(s, { url: `${files.base}/files/a.wav` }, '?diarize=yes'), 400, /diarize/);
  });
});
