/**
 * HTTPS and WSS on the main port when config.tls names a certificate and its key (PEM files).
 * The files are read at start (a missing or unreadable one stops the start with a message naming
 * it) and again on reload(): a renewed certificate is taken by new connections without a restart,
 * and a reload that fails keeps the certificate in use.
 */
import { readFileSync } from 'node:fs';
import { createSecureContext, type Server as TlsServer } from 'node:tls';
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

/** Fastify's server options with HTTPS: the HTTP server's own options (timeouts) go to the HTTPS server. */
export function withTls(options: Partial<FastifyServerOptions>, files: TlsFiles | undefined): Partial<FastifyServerOptions> {
  if (!files) return options;
  const { http, ...rest } = options as Partial<FastifyServerOptions> & { http?: object };
  return { ...rest, https: { ...http, ...files } } as Partial<FastifyServerOptions>;
}

/** Reads the files again and gives new connections the new certificate; throws (keeping the old one) when they do not make one. */
export function reloadTls(server: TlsServer, tls: Config['tls']): void {
  const files = readTlsFiles(tls);
  if (files) server.setSecureContext(files);
}
