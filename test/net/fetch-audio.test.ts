import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { AudioUrlError, PayloadTooLargeError } from '../../src/errors.js';
import { createAddressPolicy } from '../../src/net/address-policy.js';
import { fetchAudio, type FetchAudioOptions } from '../../src/net/fetch-audio.js';

const AUDIO = Buffer.from('RIFF....WAVEfmt not really audio, but bytes to carry');

/** Loopback server with the routes the tests need; counts requests per path. */
function startServer(host: string, handler: http.RequestListener): Promise<{ server: http.Server; base: string; hits: string[] }> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(req.url!);
    handler(req, res);
  });
  return new Promise((resolve) =>
    server.listen(0, host, () => resolve({ server, base: `http://${host}:${(server.address() as AddressInfo).port}`, hits })),
  );
}

describe('fetchAudio', () => {
  let main: Awaited<ReturnType<typeof startServer>>;
  let other: Awaited<ReturnType<typeof startServer>>;
  let streamClosed: Promise<void>;
  let markStreamClosed: () => void;

  before(async () => {
    streamClosed = new Promise((r) => (markStreamClosed = r));
    other = await startServer('127.0.0.2', (_req, res) => res.end(AUDIO));
    main = await startServer('127.0.0.1', (req, res) => {
      const url = new URL(req.url!, 'http://x');
      const hop = /^\/r\/(\d+)$/.exec(url.pathname);
      if (hop) {
        const n = Number(hop[1]);
        res.writeHead(302, { location: n > 1 ? `/r/${n - 1}` : '/files/my%20talk.wav' }).end();
      } else if (url.pathname === '/files/my%20talk.wav') {
        res.writeHead(200, { 'content-type': 'audio/wav' }).end(AUDIO);
      } else if (url.pathname === '/to-other') {
        res.writeHead(307, { location: `${other.base}/stolen.wav` }).end();
      } else if (url.pathname === '/slow-headers') {
        setTimeout(() => res.end(AUDIO), 5_000).unref();
      } else if (url.pathname === '/slow-body') {
        res.writeHead(200, { 'content-type': 'audio/wav' });
        res.write(AUDIO);
        // never ends
      } else if (url.pathname === '/big-announced') {
        res.writeHead(200, { 'content-length': '100000', 'content-type': 'audio/wav' });
        res.write(Buffer.alloc(1000));
      } else if (url.pathname === '/big-chunked') {
        // An endless body without Content-Length: only a client that stops reading ends this.
        res.writeHead(200, { 'content-type': 'audio/wav' });
        const timer = setInterval(() => res.write(Buffer.alloc(4096)), 1);
        res.on('close', () => {
          clearInterval(timer);
          markStreamClosed();
        });
      } else if (url.pathname === '/') {
        res.writeHead(200, { 'content-type': 'audio/mpeg' }).end(AUDIO);
      } else {
        res.writeHead(404).end('nope');
      }
    });
  });
  after(() => {
    main.server.closeAllConnections();
    other.server.closeAllConnections();
    main.server.close();
    other.server.close();
  });

  const options = (overrides: Partial<FetchAudioOptions> = {}): FetchAudioOptions => ({
    policy: createAddressPolicy(['127.0.0.1']),
    connectTimeoutMs: 2_000,
    totalTimeoutMs: 5_000,
    maxRedirects: 3,
    maxBytes: 10_000,
    ...overrides,
  });

  it('follows 1 to 3 redirects and names the file after the final URL', async () => {
    for (const n of [1, 2, 3]) {
      const got = await fetchAudio(`${main.base}/r/${n}`, options());
      assert.deepEqual(Buffer.from(got.bytes), AUDIO);
      assert.equal(got.contentType, 'audio/wav');
      assert.equal(got.filename, 'my talk.wav');
    }
  });

  it('refuses a 4th redirect', async () => {
    await assert.rejects(fetchAudio(`${main.base}/r/4`, options()), (err: unknown) => err instanceof AudioUrlError && /more than 3/.test(err.message));
  });

  it('names a URL without a path segment "audio"', async () => {
    const got = await fetchAudio(`${main.base}/`, options());
    assert.equal(got.filename, 'audio');
    assert.equal(got.contentType, 'audio/mpeg');
  });

  it('times out a server that never answers, and one whose body stalls', async () => {
    for (const p of ['/slow-headers', '/slow-body'])
      await assert.rejects(fetchAudio(`${main.base}${p}`, options({ totalTimeoutMs: 300 })), (err: unknown) => err instanceof AudioUrlError && /timed out/.test(err.message));
  });

  it('refuses a body over the cap when Content-Length announces it', async () => {
    await assert.rejects(fetchAudio(`${main.base}/big-announced`, options()), PayloadTooLargeError);
  });

  it('stops reading a body without Content-Length once it passes the cap', async () => {
    await assert.rejects(fetchAudio(`${main.base}/big-chunked`, options({ maxBytes: 50_000 })), PayloadTooLargeError);
    await streamClosed; // the server saw the connection go away: the client stopped reading
  });

  it('names the status of a non-2xx answer', async () => {
    await assert.rejects(fetchAudio(`${main.base}/missing.wav`, options()), (err: unknown) => err instanceof AudioUrlError && /404/.test(err.message));
  });

  it('refuses a private address that the config does not allow, by IP and by name', async () => {
    const hitsBefore = main.hits.length;
    const strict = options({ policy: createAddressPolicy([]) });
    await assert.rejects(fetchAudio(`${main.base}/`, strict), (err: unknown) => err instanceof AudioUrlError && /not allowed/.test(err.message));
    const port = new URL(main.base).port;
    await assert.rejects(fetchAudio(`http://localhost:${port}/`, strict), (err: unknown) => err instanceof AudioUrlError && /not allowed/.test(err.message));
    assert.equal(main.hits.length, hitsBefore, 'no request reached the server');
  });

  it('refuses a redirect from an allowed host to a forbidden one', async () => {
    await assert.rejects(
      fetchAudio(`${main.base}/to-other`, options()),
      (err: unknown) =>
        // The client's message stays general; the address it led to is the cause, for the operator's log.
        err instanceof AudioUrlError && !/127\.0\.0\.2/.test(err.message) && /127\.0\.0\.2/.test((err.cause as Error).message),
    );
    assert.equal(other.hits.length, 0);
    // The same target is reachable when allowed, so the refusal above came from the policy.
    const allowed = await fetchAudio(`${main.base}/to-other`, options({ policy: createAddressPolicy(['127.0.0.0/8']) }));
    assert.equal(allowed.filename, 'stolen.wav');
  });

  it('refuses schemes other than http and https', async () => {
    await assert.rejects(fetchAudio('ftp://example.com/a.wav', options()), (err: unknown) => err instanceof AudioUrlError && /http or https/.test(err.message));
    await assert.rejects(fetchAudio('not a url', options()), AudioUrlError);
  });
});
