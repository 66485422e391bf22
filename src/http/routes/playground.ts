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
      // The page keeps a key in local storage: its policy (own files only, no framing) is set for
      // every HTML page by the security-headers plugin.
    });
  };
}
