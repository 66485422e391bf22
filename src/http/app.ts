/**
 * buildApp(deps): the whole HTTP surface, without listening (tests listen on port 0, the server
 * on the configured port). Two encapsulated families under /api/v1 carry their own auth, rate
 * limits and error shapes: "speech" (synthesis, voices, dictionaries) and "stt" (transcription).
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import websocket from '@fastify/websocket';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { ApiKeyService } from '../accounts/api-keys.js';
import type { Config } from '../config.js';
import { InvalidRequestError } from '../errors.js';
import type { ClonedVoiceRepository } from '../store/cloned-voice-repository.js';
import type { PronunciationDictRepository } from '../store/pronunciation-dict-repository.js';
import type { PronunciationDictCache } from '../synthesis/pronunciation-dict-cache.js';
import type { VoiceRegistry } from '../synthesis/voice-registry.js';
import { bearerAuth, bearerKey } from './plugins/auth.js';
import { enforceConnectionLimits, httpServerOptions } from './plugins/connection-limits.js';
import { KnownRoutes, sendError, useErrorMapping } from './plugins/error-mapping.js';
import { InProcessRateLimitStore, rateLimit, type RateLimitStore } from './plugins/rate-limit.js';
import { realtimeSocketOptions } from './plugins/realtime-sockets.js';
import { generateRequestId } from './plugins/request-id.js';
import { ajvOptions } from './plugins/validation-messages.js';
import { useCors } from './plugins/cors.js';
import { useOpenAiErrors } from './routes/openai/errors.js';
import { playgroundRoutes } from './routes/playground.js';
import { healthRoutes, type ReadinessCheck } from './routes/health.js';
import { pronunciationDictRoutes } from './routes/pronunciation-dicts.js';
import { voiceRoutes } from './routes/voices.js';
import { asyncApiDocument } from './schemas/asyncapi.js';
import { SpeechErrorBody, SttErrorBody } from './schemas/common.js';

const MAX_PATH_PARAM_CHARS = 1024;

/** A function that adds routes to a family plugin; capabilities contribute these. */
export type RouteRegistrar = (app: FastifyInstance) => Promise<void>;

export interface AppDeps {
  config: Config;
  apiKeys: ApiKeyService;
  voices: VoiceRegistry;
  clonedVoices: ClonedVoiceRepository;
  dicts: PronunciationDictRepository;
  /** Filled as dictionaries are saved, emptied as they are deleted. */
  dictCache?: PronunciationDictCache;
  rateLimitStore: RateLimitStore;
  readiness: ReadinessCheck;
  /** Extra routes of the speech family (synthesis), mounted under /api/v1. */
  speechRoutes?: RouteRegistrar[];
  /** Routes of the stt family, mounted under /api/v1/stt. */
  sttRoutes?: RouteRegistrar[];
  /** Routes of OpenAI's API, mounted under /v1 (OpenAI's error shape). */
  openaiRoutes?: RouteRegistrar[];
  version: string;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Which rate-limit bucket the route draws from. */
    rateFamily?: 'synthesis' | 'transcription' | 'management';
  }
}

export async function buildApp(deps: AppDeps, logger: FastifyServerOptions['logger'] = true): Promise<FastifyInstance> {
  const { config } = deps;
  const app = Fastify({
    logger,
    genReqId: generateRequestId,
    bodyLimit: config.limits.maxJsonBytes,
    // Clients must get wrong types as 400, so nothing is coerced; query booleans are strings.
    ajv: { customOptions: ajvOptions },
    forceCloseConnections: 'idle',
    ...httpServerOptions(config.http),
    // Long enough for every id a route checks itself (request ids: 128), so their schema names the rule.
    maxParamLength: MAX_PATH_PARAM_CHARS,
    // The router's own refusals (malformed %-encoding, an over-long path segment) in the family's shape.
    frameworkErrors: (err, request, reply) => {
      reply.header('X-Request-Id', request.id);
      const message =
        err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? `A path segment is longer than ${MAX_PATH_PARAM_CHARS} characters` : 'The URL is not valid';
      return sendError(request, reply, new InvalidRequestError(message), request.url.startsWith('/api/v1/stt/') ? 'stt' : 'speech');
    },
  });
  enforceConnectionLimits(app, config.http);

  const knownRoutes = new KnownRoutes();
  app.addHook('onRoute', (route) => knownRoutes.add(route.url, route.method));
  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
  });
  app.addSchema(SpeechErrorBody);
  app.addSchema(SttErrorBody);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Parley', description: 'Self-hosted speech synthesis and transcription API', version: deps.version },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      externalDocs: { description: 'WebSocket synthesis and streaming transcription (AsyncAPI)', url: '/asyncapi.json' },
      security: [{ bearer: [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  app.get('/asyncapi.json', { schema: { hide: true } }, async () => asyncApiDocument(deps.version, config.limits.maxTextChars));
  await useCors(app, config.cors);
  await app.register(playgroundRoutes());

  useErrorMapping(app, 'speech', knownRoutes);
  await app.register(websocket, realtimeSocketOptions(config.realtime));

  // In-process on purpose: it guards the database, so it must not cost a database query itself.
  const addressBuckets = new InProcessRateLimitStore();
  app.addHook('onClose', async () => addressBuckets.close());
  const keyOf = bearerKey(deps.apiKeys, { store: addressBuckets, limit: config.rateLimits.unauthenticated });
  const authenticate = bearerAuth(keyOf);
  await app.register(
    healthRoutes(deps.readiness, { isAuthenticated: async (request) => (await keyOf(request).catch(() => null)) !== null }),
  );

  const limiter = (family: 'synthesis' | 'transcription' | 'management') =>
    rateLimit(deps.rateLimitStore, family, config.rateLimits[family]);
  const limiters = { synthesis: limiter('synthesis'), transcription: limiter('transcription'), management: limiter('management') };

  await app.register(
    async (speech) => {
      useErrorMapping(speech, 'speech', knownRoutes);
      speech.addHook('onRequest', authenticate);
      speech.addHook('onRequest', (request, reply) => limiters[request.routeOptions.config.rateFamily ?? 'management'](request, reply));
      await speech.register(voiceRoutes(deps));
      await speech.register(pronunciationDictRoutes({ dicts: deps.dicts, cache: deps.dictCache, limits: config.limits }));
      for (const routes of deps.speechRoutes ?? []) await speech.register(routes);
    },
    { prefix: '/api/v1' },
  );

  await app.register(
    async (stt) => {
      useErrorMapping(stt, 'stt', knownRoutes);
      stt.addHook('onRequest', authenticate);
      stt.addHook('onRequest', (request, reply) => limiters[request.routeOptions.config.rateFamily ?? 'transcription'](request, reply));
      for (const routes of deps.sttRoutes ?? []) await stt.register(routes);
    },
    { prefix: '/api/v1/stt' },
  );

  await app.register(
    async (openai) => {
      useOpenAiErrors(openai, knownRoutes);
      openai.addHook('onRequest', authenticate);
      openai.addHook('onRequest', (request, reply) => limiters[request.routeOptions.config.rateFamily ?? 'management'](request, reply));
      for (const routes of deps.openaiRoutes ?? []) await openai.register(routes);
    },
    { prefix: '/v1' },
  );

  return app;
}
