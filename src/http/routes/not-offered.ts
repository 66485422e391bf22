/**
 * The operations of the service's other products (chat completions, post-call analysis, usage
 * analytics, speech-to-speech), under /waves/v1: each answers 501 in the family's error shape,
 * naming what is not offered, so a client pointed at this server learns why instead of reading a
 * bare 404.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { NotOfferedError } from '../../errors.js';

interface NotOfferedRoute {
  methods: ('GET' | 'POST' | 'DELETE')[];
  /** Under the family's prefix; `*` covers a whole product's tree. */
  url: string;
  product: string;
}

export const NOT_OFFERED_ROUTES: readonly NotOfferedRoute[] = [
  { methods: ['POST'], url: '/chat/completions', product: 'Chat completions' },
  { methods: ['POST'], url: '/pca', product: 'Post-call analysis' },
  { methods: ['POST'], url: '/pca/generate', product: 'Post-call analysis' },
  { methods: ['GET', 'DELETE'], url: '/analytics/*', product: 'Usage analytics' },
  { methods: ['GET'], url: '/health', product: 'The control-plane health report (this server answers GET /healthz and /readyz)' },
  // A WebSocket upgrade is a GET: refused before any socket opens.
  { methods: ['GET'], url: '/s2s', product: 'Speech-to-speech (Hydra)' },
];

export function notOfferedRoutes() {
  return async function register(app: FastifyInstance): Promise<void> {
    for (const { methods, url, product } of NOT_OFFERED_ROUTES) {
      const refuse = async (request: FastifyRequest) => {
        throw new NotOfferedError(`${product} (${request.method} ${request.url.split('?')[0]}) is not offered by this server`);
      };
      // Refused as the request arrives: a WebSocket upgrade never reaches a route's handler.
      app.route({ method: methods, url, schema: { hide: true }, onRequest: refuse, handler: refuse });
    }
  };
}
