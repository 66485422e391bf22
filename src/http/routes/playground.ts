/**
 * The playground at / : static files from web/ (HTML, CSS and one script; nothing from a CDN).
 * One route per file, found at start-up (no wildcard route), so unknown paths still get the
 * not-found answer of their route family. The page holds no secret: the key is the visitor's.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';

/** web/ seen from src/http/routes (sources) or dist/src/http/routes (a build). */
export function webRoot(): string {
  const candidates = [new URL('../../../web/', import.meta.url), new URL('../../../../web/', import.meta.url)].map((u) => fileURLToPath(u));
  const found = candidates.find((p) => existsSync(`${p}index.html`));
  if (!found) throw new Error(`the playground's files are missing (looked in ${candidates.join(', ')})`);
  return found;
}

/**
 * The page keeps a key in local storage, so it allows nothing but its own files and API (and the
 * audio it makes itself): no inline script or style, no other origin, no framing.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "img-src 'self' data:",
  // Audio made or recorded in the page plays from blob: URLs (the player, the downloads).
  "media-src 'self' blob:",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export function playgroundRoutes() {
  return async function register(app: FastifyInstance): Promise<void> {
    await app.register(fastifyStatic, {
      root: webRoot(),
      prefix: '/',
      wildcard: false,
      index: ['index.html'],
      // A new build must reach browsers; the files are small.
      cacheControl: true,
      maxAge: 0,
      schemaHide: true,
      setHeaders(reply) {
        reply.header('Content-Security-Policy', CONTENT_SECURITY_POLICY);
        reply.header('X-Content-Type-Options', 'nosniff');
        reply.header('Referrer-Policy', 'no-referrer');
      },
    });
  };
}
