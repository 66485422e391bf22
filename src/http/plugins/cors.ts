/**
 * CORS for browser clients served from other origins (a chat UI calling /v1 from the browser).
 * Off unless config.cors.allowedOrigins names origins; "*" allows any. Preflights are answered
 * before authentication (they carry no key); the real request is still authenticated.
 */
import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config.js';

export async function useCors(app: FastifyInstance, settings: Config['cors']): Promise<void> {
  if (settings.allowedOrigins.length === 0) return;
  await app.register(cors, {
    origin: settings.allowedOrigins.includes('*') ? '*' : [...settings.allowedOrigins],
    methods: ['GET', 'POST', 'DELETE'],
    // Requested headers are reflected (OpenAI's SDKs send several x-stainless-* headers).
    exposedHeaders: ['X-Request-Id', 'Retry-After', 'X-Voice-Id', 'X-Sample-Rate', 'X-Audio-Duration'],
    credentials: false,
    maxAge: settings.maxAgeSeconds,
  });
}
