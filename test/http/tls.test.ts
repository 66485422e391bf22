/**
 * HTTPS on the main port (config.tls): a client trusting the test's self-signed certificate gets
 * answers over TLS; plain HTTP gets none; SIGHUP makes new connections get a renewed certificate,
 * and a reload from unusable files keeps the old one; bad settings stop the start with a message.
 * What a connection may cost before it is a request: a client that sends no hello, or trickles
 * one, is closed within the header timeout (Node's default would hold it 120 s); TLS 1.2 offers
 * only forward-secret AEAD suites; answers carry HSTS.
 */
import assert from 'node:assert/strict';
import { copyFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import net from 'node:net';
import { connect } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { makeSelfSignedCertificate, type TestCertificate } from '../helpers/tls.js';

function httpsGet(url: string, ca: Buffer): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { ca }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The SHA-256 fingerprint of the certificate a new TLS connection is given. */
function servedFingerprint(port: number, ca: Buffer[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ca }, () => {
      resolve(socket.getPeerCertificate().fingerprint256);
      socket.end();
    });
    socket.on('error', reject);
  });
}

describe('HTTPS with tls.certFile and tls.keyFile', () => {
  let s: TestServer;
  let cert: TestCertificate;

  before(async () => {
    cert = makeSelfSignedCertificate('first');
    s = await startTestServer({ config: { tls: { certFile: cert.certFile, keyFile: cert.keyFile } } });
  });
  after(() => s?.close());

  it('serves https:// to a client that trusts the certificate, and the API works over it', async () => {
    assert.match(s.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.deepEqual(await httpsGet(`${s.url}/healthz`, cert.ca), { status: 200, body: '{"status":"ok"}' });
  });

  it('a client that does not trust it is refused by its own verification', async () => {
    await assert.rejects(httpsGet(`${s.url}/healthz`, makeSelfSignedCertificate('stranger').ca), /self[- ]signed|unable to verify|certificate/i);
  });

  it('plain HTTP on the port gets no HTTP answer', async () => {
    const plain = s.url.replace('https:', 'http:');
    const outcome = await new Promise<string>((resolve) => {
      const req = httpRequest(`${plain}/healthz`, (res) => resolve(`status ${res.statusCode}`));
      req.on('error', (err) => resolve(`error ${(err as NodeJS.ErrnoException).code}`));
      req.setTimeout(5_000, () => req.destroy(new Error('timeout')));
      req.end();
    });
    assert.doesNotMatch(outcome, /^status 2/);
  });

  it('SIGHUP: new connections get the renewed certificate; unusable files keep the one in use', async () => {
    const port = Number(new URL(s.url).port);
    const before = await servedFingerprint(port, [cert.ca]);
    const renewed = makeSelfSignedCertificate('renewed');
    copyFileSync(renewed.certFile, cert.certFile);
    copyFileSync(renewed.keyFile, cert.keyFile);
    process.kill(process.pid, 'SIGHUP');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const after = await servedFingerprint(port, [renewed.ca]);
    assert.notEqual(after, before);
    assert.deepEqual(await httpsGet(`${s.url}/healthz`, renewed.ca), { status: 200, body: '{"status":"ok"}' });

    writeFileSync(cert.keyFile, 'not a key');
    assert.throws(() => s.server.reloadTls(), /not a PEM certificate and its key/);
    process.kill(process.pid, 'SIGHUP'); // logged, and nothing else happens
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(await servedFingerprint(port, [renewed.ca]), after);
  });
});

describe('TLS settings that cannot work', () => {
  it('one file without the other is a configuration error naming both keys', () => {
    assert.throws(
      () => loadConfig({ PARLEY_TLS__CERT_FILE: '/etc/ssl/cert.pem' }),
      (err: unknown) => err instanceof ConfigError && err.problems.some((p) => /tls\.certFile and tls\.keyFile must be set together/.test(p)),
    );
  });

  it('a file that cannot be read stops the start, naming it', async () => {
    const cert = makeSelfSignedCertificate();
    await assert.rejects(
      startTestServer({ config: { tls: { certFile: cert.certFile, keyFile: '/nonexistent/key.pem' } } }),
      /tls\.keyFile: cannot read \/nonexistent\/key\.pem \(ENOENT\)/,
    );
  });
});

describe('what a TLS connection may cost before it is a request', () => {
  let s: TestServer;
  let cert: TestCertificate;
  before(async () => {
    cert = makeSelfSignedCertificate('rsa', undefined, 'rsa');
    s = await startTestServer({ config: { tls: { certFile: cert.certFile, keyFile: cert.keyFile }, http: { headersTimeoutMs: 1_000 } } });
  });
  after(() => s?.close());

  /** How long the server keeps a TCP connection that sends `hello` (bytes, one per `everyMs`), in ms. */
  async function heldFor(hello: Buffer, everyMs: number): Promise<number> {
    const socket = net.connect({ host: '127.0.0.1', port: Number(new URL(s.url).port) });
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.on('error', () => undefined);
    const started = Date.now();
    let at = 0;
    const trickle = setInterval(() => at < hello.length && !socket.destroyed && socket.write(hello.subarray(at, ++at)), everyMs);
    await new Promise((resolve) => socket.once('close', resolve));
    clearInterval(trickle);
    return Date.now() - started;
  }

  it('a connection that sends no hello is closed after the header timeout, not 120 s', async () => {
    const lived = await heldFor(Buffer.alloc(0), 100);
    assert.ok(lived >= 900 && lived < 5_000, `held ${lived} ms (headersTimeoutMs 1000)`);
  });

  it('a hello trickled a byte at a time is closed after the header timeout too', async () => {
    // The start of a TLS record (handshake, TLS 1.0 record version, 512 bytes), never finished.
    const lived = await heldFor(Buffer.concat([Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00]), Buffer.alloc(507, 1)]), 200);
    assert.ok(lived >= 900 && lived < 5_000, `held ${lived} ms (headersTimeoutMs 1000)`);
  });

  /** The suite a TLS 1.2 client offering only `ciphers` gets, or the error it sees. */
  function negotiate(ciphers: string): Promise<string> {
    return new Promise((resolve) => {
      const socket = connect({ host: '127.0.0.1', port: Number(new URL(s.url).port), ca: [cert.ca], maxVersion: 'TLSv1.2', ciphers }, () => {
        resolve(socket.getCipher().standardName);
        socket.end();
      });
      socket.on('error', (err: NodeJS.ErrnoException) => resolve(`refused: ${err.code ?? err.message}`));
    });
  }

  it('TLS 1.2 offers only forward-secret AEAD suites: no static RSA key exchange, no CBC, no SHA-1', async () => {
    assert.equal(await negotiate('ECDHE-RSA-AES128-GCM-SHA256'), 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256');
    assert.equal(await negotiate('ECDHE-RSA-CHACHA20-POLY1305'), 'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256');
    for (const weak of ['AES128-GCM-SHA256', 'AES256-SHA', 'ECDHE-RSA-AES128-SHA', 'ECDHE-RSA-AES256-SHA384', 'DHE-RSA-AES128-GCM-SHA256']) {
      assert.match(await negotiate(weak), /^refused: /, weak);
    }
  });

  it('answers over TLS carry Strict-Transport-Security', async () => {
    const headers = await new Promise<Record<string, unknown>>((resolve, reject) => {
      const req = httpsRequest(`${s.url}/healthz`, { ca: cert.ca }, (res) => {
        res.resume();
        resolve(res.headers);
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(headers['strict-transport-security'], 'max-age=63072000');
  });
});

describe('plain HTTP', () => {
  it('sends no Strict-Transport-Security', async () => {
    const s = await startTestServer();
    try {
      assert.equal((await fetch(`${s.url}/healthz`)).headers.get('strict-transport-security'), null);
    } finally {
      await s.close();
    }
  });
});
