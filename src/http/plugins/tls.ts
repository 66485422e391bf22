/**
 * HTTPS and WSS on the main port when config.tls names a certificate and its key (PEM files).
 * The files are read at start (a missing or unreadable one stops the start with a message naming
 * it) and again on reload(): a renewed certificate is taken by new connections without a restart,
 * and a reload that fails keeps the certificate in use.
 *
 * What a TLS connection may cost before it is a request: the handshake must be done within the
 * header timeout (a connection that never sends a hello, or trickles one, would otherwise hold its
 * slot for Node's default 120 s, and enough of them lock every client out). TLS 1.2 offers only
 * forward-secret AEAD suites (ECDHE with GCM or ChaCha20-Poly1305: no static RSA key exchange, no
 * CBC, no SHA-1), TLS 1.3 its own, and every answer tells browsers to keep to HTTPS (HSTS).
 */
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { createSecureContext, type Server as TlsServer, type TLSSocket } from 'node:tls';
import type { FastifyServerOptions } from 'fastify';
import type { Config } from '../../config.js';

export interface TlsFiles {
  cert: Buffer;
  key: Buffer;
}

function readPem(file: string, what: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new Error(`tls.${what}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}

/** The certificate and key of config.tls, checked to make a context; undefined when TLS is off (both empty). */
export function readTlsFiles(tls: Config['tls']): TlsFiles | undefined {
  if (!tls.certFile && !tls.keyFile) return undefined;
  const files = { cert: readPem(tls.certFile, 'certFile'), key: readPem(tls.keyFile, 'keyFile') };
  try {
    createSecureContext(files);
  } catch (err) {
    throw new Error(`tls: ${tls.certFile} and ${tls.keyFile} are not a PEM certificate and its key (${(err as Error).message})`);
  }
  return files;
}

/** TLS 1.3's suites, then TLS 1.2's forward-secret AEAD ones. */
export const TLS_CIPHERS = [
  'TLS_AES_128_GCM_SHA256',
  'TLS_AES_256_GCM_SHA384',
  'TLS_CHACHA20_POLY1305_SHA256',
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
].join(':');

/** Two years, as browsers' preload lists ask. */
export const HSTS_HEADER = 'max-age=63072000';

/**
 * Fastify's server options with HTTPS: the HTTP server's own options (timeouts) go to the HTTPS
 * server, with the suites above and a handshake that must not pause longer than `handshakeTimeoutMs`.
 */
export function withTls(options: Partial<FastifyServerOptions>, files: TlsFiles | undefined, handshakeTimeoutMs: number): Partial<FastifyServerOptions> {
  if (!files) return options;
  const { http, ...rest } = options as Partial<FastifyServerOptions> & { http?: object };
  const tls = { ...files, minVersion: 'TLSv1.2', ciphers: TLS_CIPHERS, honorCipherOrder: true, handshakeTimeout: handshakeTimeoutMs };
  return { ...rest, https: { ...http, ...tls } } as Partial<FastifyServerOptions>;
}

/**
 * Node's handshake timeout counts only silence, so a hello sent a byte at a time would never meet
 * it: a connection not secure `timeoutMs` after it was accepted is closed whatever it sent.
 */
export function boundHandshakes(server: TlsServer, timeoutMs: number): void {
  const pending = new WeakMap<Socket, NodeJS.Timeout>();
  server.on('connection', (socket: Socket) => {
    const timer = setTimeout(() => socket.destroy(), timeoutMs);
    timer.unref();
    pending.set(socket, timer);
    socket.once('close', () => clearTimeout(timer));
  });
  server.on('secureConnection', (socket: TLSSocket) => {
    const raw = (socket as TLSSocket & { _parent?: Socket })._parent;
    if (raw) clearTimeout(pending.get(raw));
  });
}

/** Reads the files again and gives new connections the new certificate; throws (keeping the old one) when they do not make one. */
export function reloadTls(server: TlsServer, tls: Config['tls']): void {
  const files = readTlsFiles(tls);
  if (files) server.setSecureContext(files);
}
