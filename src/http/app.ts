/**
 * buildApp(deps): the whole HTTP surface, without listening (tests listen on port 0, the server
 * on the configured port). Encapsulated families carry their own auth, rate limits and error
 * shapes: "speech" (synthesis, voices, dictionaries, model admin) and "stt" (transcription, jobs),
 * each under /api/v1 (the legacy layout's bodies) and /waves/v1 (the service's current layout and error
 * shape), stt once per transcription name. A route family is registered when the dependency it
 * serves is given.
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import websocket from '@fastify/websocket';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server as TlsServer } from 'node:tls';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { KEY_ROLES, type ApiKeyService } from '../accounts/api-keys.js';
import type { Config } from '../config.js';
import { InvalidRequestError, type OverloadedError } from '../errors.js';
import type { ClonedVoiceRepository } from '../store/cloned-voice-repository.js';
import type { PronunciationDictRepository } from '../store/pronunciation-dict-repository.js';
import type { PronunciationDictCache } from '../synthesis/pronunciation-dict-cache.js';
import type { JobService } from '../jobs/job-service.js';
import { parseWebhookExtra } from '../jobs/webhook-extra.js';
import type { ReadinessReport } from '../lifecycle.js';
import type { SynthesisService } from '../synthesis/synthesize.js';
import type { VoiceRegistry } from '../synthesis/voice-registry.js';
import type { VoiceCloningService } from '../synthesis/voice-cloning.js';
import type { HeldEngines } from '../transcription/transcribe.js';
import type { Transcribe } from '../transcription/types.js';
import { bearerAuth, bearerKey, keyOfAuthorization } from './plugins/auth.js';
import { enforceConnectionLimits, httpServerOptions } from './plugins/connection-limits.js';
import { KnownRoutes, sendError, toWireError, useErrorMapping, type RouteFamily } from './plugins/error-mapping.js';
import { Admission } from './plugins/admission.js';
import { lingerOnEarlyClose } from './plugins/lingering-close.js';
import { InProcessRateLimitStore, type RateLimitStore } from '../store/rate-limits.js';
import { useClientGone } from './plugins/client-gone.js';
import { rateLimit } from './plugins/rate-limit.js';
import { realtimeSocketOptions, type RealtimeSockets } from './plugins/realtime-sockets.js';
import { redactingLogger } from './plugins/log-redaction.js';
import { generateRequestId } from './plugins/request-id.js';
import { useSecurityHeaders } from './plugins/security-headers.js';
import { ajvOptions } from './plugins/validation-messages.js';
import { boundHandshakes, HSTS_HEADER, withTls, type TlsFiles } from './plugins/tls.js';
import { useCors } from './plugins/cors.js';
import { openAiErrorBody, useOpenAiErrors } from './routes/openai/errors.js';
import { openAiRoutes, type OpenAiDeps } from './routes/openai/index.js';
import { playgroundRoutes } from './routes/playground.js';
import { realtimeSynthesisRoutes } from './routes/realtime-synthesis.js';
import { realtimeTranscriptionRoutes } from './routes/realtime-transcription.js';
import { voiceCloningRoutes } from './routes/voice-cloning.js';
import { healthRoutes } from './routes/health.js';
import { jobRoutes } from './routes/jobs.js';
import { modelRoutes, type ModelAdminDeps } from './routes/models.js';
import { notOfferedRoutes } from './routes/not-offered.js';
import { followsProductLanguages, layoutOf, ROUTE_PREFIXES, TRANSCRIPTION_ROUTE_NAMES, type RoutePrefix } from './routes/product-names.js';
import { pronunciationDictRoutes } from './routes/pronunciation-dicts.js';
import { synthesisRoutes } from './routes/synthesis.js';
import { speechToTextRoutes } from './routes/speech-to-text.js';
import { transcriptionRoutes, type TranscriptionRouteOptions } from './routes/transcription.js';
import { voiceRoutes } from './routes/voices.js';
import type { RouteRegistrar } from './routes/registrar.js';
import { webhookSecretRoutes } from './routes/webhook-secret.js';
import { asyncApiDocument } from './schemas/asyncapi.js';
import { SpeechErrorBody, SttErrorBody, WavesErrorBody } from './schemas/common.js';

const MAX_PATH_PARAM_CHARS = 1024;

export type { RouteRegistrar } from './routes/registrar.js';

export interface AppDeps {
  config: Config;
  version: string;
  apiKeys: ApiKeyService;
  voices: VoiceRegistry;
  clonedVoices: ClonedVoiceRepository;
  dicts: PronunciationDictRepository;
  /** Filled as dictionaries are saved, emptied as they are deleted. */
  dictCache?: PronunciationDictCache;
  rateLimitStore: RateLimitStore;
  readiness(): Promise<ReadinessReport>;
  /** The synthesis routes (/tts-*). */
  synthesis?: SynthesisService;
  /** The model admin routes (/admin/models). */
  models?: ModelAdminDeps;
  /** POST /stt/get_text. */
  transcription?: { transcribe: Transcribe; fetchUrl: TranscriptionRouteOptions['fetchUrl']; requirePacks?: TranscriptionRouteOptions['requirePacks'] };
  /** GET /stt/jobs/:request_id, and webhook_url on get_text. */
  jobs?: JobService;
  /** add_voice, and the account's clones as voices. */
  cloning?: VoiceCloningService;
  /** Open WebSocket sessions, bounded per account (WebSocket synthesis and streaming transcription). */
  sockets?: RealtimeSockets;
  /** The engines a streaming transcription session holds (GET /stt/get_text upgraded). */
  streamingEngines?: () => HeldEngines;
  /** OpenAI's API under /v1, over the same synthesis and transcription (registered when both are given). */
  openai?: Pick<OpenAiDeps, 'ffmpeg' | 'report' | 'catalogue'>;
  /** Routes added to a family besides the built-in ones (a test's own endpoints). */
  extraRoutes?: { speech?: RouteRegistrar[]; stt?: RouteRegistrar[] };
  /** Serve HTTPS/WSS with this certificate and key (config.tls), else plain HTTP. */
  tls?: TlsFiles;
  /** Adds metrics and tracing hooks (and routes) before any route: given by the server when either is on. */
  instrument?: (app: FastifyInstance) => void;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Which rate-limit bucket the route draws from. */
    rateFamily?: 'synthesis' | 'transcription' | 'management';
  }
  interface FastifyInstance {
    /** Admission control of synthesis and transcription (its refusals are counted by the metrics). */
    admission: Admission;
  }
}

export async function buildApp(deps: AppDeps, logger: FastifyServerOptions['logger'] = true): Promise<FastifyInstance> {
  const { config } = deps;
  const app = Fastify({
    logger: redactingLogger(logger),
    genReqId: generateRequestId,
    bodyLimit: config.limits.maxJsonBytes,
    // Clients must get wrong types as 400, so nothing is coerced; query booleans are strings.
    ajv: { customOptions: ajvOptions },
    forceCloseConnections: 'idle',
    ...withTls(httpServerOptions(config.http), deps.tls, config.http.headersTimeoutMs),
    // Long enough for every id a route checks itself (request ids: 128), so their schema names the rule.
    routerOptions: { maxParamLength: MAX_PATH_PARAM_CHARS },
    // The router's own refusals (malformed %-encoding, an over-long path segment) in the family's shape.
    frameworkErrors: (err, request, reply) => {
      reply.header('X-Request-Id', request.id);
      const message =
        err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? `A path segment is longer than ${MAX_PATH_PARAM_CHARS} characters` : 'The URL is not valid';
      return sendError(request, reply, new InvalidRequestError(message), familyOfUrl(request.url));
    },
  });
  // The framework's own request listener, the one the admission gate goes before.
  const frameworkListener = app.server.listeners('request')[0] as RequestListener;
  enforceConnectionLimits(app, config.http);
  if (deps.tls) boundHandshakes(app.server as unknown as TlsServer, config.http.headersTimeoutMs);
  useClientGone(app);

  const admission = new Admission(config.admission, {
    cachedAccount(authorization) {
      const token = keyOfAuthorization(authorization);
      return token === null ? undefined : (deps.apiKeys.cachedKey(token)?.accountId ?? undefined);
    },
    errorBody: refusalBody,
    headers: deps.tls ? { 'Strict-Transport-Security': HSTS_HEADER } : {},
    logRefusals: (summary) => app.log.warn(summary, 'requests refused for load'),
  });
  app.decorate('admission', admission);
  app.addHook('onClose', async () => admission.close());

  const knownRoutes = new KnownRoutes();
  app.addHook('onRoute', (route) => knownRoutes.add(route.url, route.method));
  app.addHook('onRoute', admission.onRoute);
  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
  });
  deps.instrument?.(app);
  app.addSchema(SpeechErrorBody);
  app.addSchema(SttErrorBody);
  app.addSchema(WavesErrorBody);
  useSecurityHeaders(app, { docsPrefix: '/docs', hsts: deps.tls ? HSTS_HEADER : undefined });

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
  app.get('/asyncapi.json', { schema: { hide: true } }, async () => asyncApiDocument(deps.version, config.limits.maxTextChars, config.realtime));
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
    healthRoutes(deps.readiness, { isAdmin: async (request) => (await keyOf(request).catch(() => null))?.role === KEY_ROLES.admin }),
  );

  const limiter = (family: 'synthesis' | 'transcription' | 'management') =>
    rateLimit(deps.rateLimitStore, family, config.rateLimits[family]);
  const limiters = { synthesis: limiter('synthesis'), transcription: limiter('transcription'), management: limiter('management') };
  /** Every family's requests: authenticated, charged to the account's rate limit, then admitted. */
  const guard = (family: FastifyInstance, defaultRateFamily: 'synthesis' | 'transcription' | 'management') => {
    family.addHook('onRequest', authenticate);
    family.addHook('onRequest', (request, reply) => limiters[request.routeOptions.config.rateFamily ?? defaultRateFamily](request, reply));
    family.addHook('onRequest', admission.hook);
  };

  // Every family is served under each prefix of the route table; the current layout answers its own error shape.
  for (const prefix of ROUTE_PREFIXES) {
    await app.register(speechFamily(deps, prefix, { knownRoutes, guard }), { prefix });
    for (const name of TRANSCRIPTION_ROUTE_NAMES) {
      await app.register(sttFamily(deps, prefix, name, { knownRoutes, guard }), { prefix: `${prefix}/${name}` });
    }
  }
  await app.register(speechToTextFamily(deps, { knownRoutes, guard }), { prefix: SPEECH_TO_TEXT_PATH });

  for (const prefix of ROUTE_PREFIXES) await registerSockets(app, deps, prefix, { authenticate, limiters });

  await app.register(
    async (openai) => {
      useOpenAiErrors(openai, knownRoutes);
      guard(openai, 'management');
      const { synthesis, transcription } = deps;
      if (deps.openai && synthesis && transcription) {
        const realtime = { streamingEngines: deps.streamingEngines, sockets: deps.sockets };
        for (const routes of openAiRoutes({ ...deps.openai, ...realtime, config, synthesis, voices: deps.voices, transcribe: transcription.transcribe, requirePacks: transcription.requirePacks })) await openai.register(routes);
      }
    },
    { prefix: '/v1' },
  );

  answerFirst(app.server, frameworkListener, admission.refuseAtWire);
  lingerOnEarlyClose(app.server, { maxBytes: config.http.lingerMaxBytes, maxMs: config.http.lingerTimeoutMs, idleMs: config.http.lingerIdleMs });
  return app;
}

type RequestListener = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * Runs `first` before the framework's request listener: a request it answers (returning true) is
 * never seen by the framework. The server's other request listeners (connection bookkeeping) see
 * every request.
 */
function answerFirst(server: FastifyInstance['server'], framework: RequestListener, first: (request: IncomingMessage, response: ServerResponse) => boolean): void {
  server.removeListener('request', framework);
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (!first(request, response)) framework.call(server, request, response);
  });
}

/** A load refusal's body in the error shape of the route at `path`. */
function refusalBody(path: string, requestId: string, error: OverloadedError): string {
  if (path.startsWith('/v1/')) return JSON.stringify(openAiErrorBody(error).body);
  return JSON.stringify(toWireError(error, familyOfUrl(path), requestId).body);
}

/** What every family plugin shares: the route list for 405s, authentication and the rate limiters. */
interface FamilyContext {
  knownRoutes: KnownRoutes;
  /** Authenticates, charges the account's rate limit and admits each request of a family. */
  guard: (family: FastifyInstance, defaultRateFamily: 'synthesis' | 'transcription' | 'management') => void;
}

/** The error family of a URL the router refused before any route was chosen. */
function familyOfUrl(url: string): RouteFamily {
  if (url.startsWith('/waves/v1/')) return 'waves';
  if (url === SPEECH_TO_TEXT_PATH || url.startsWith(`${SPEECH_TO_TEXT_PATH}/`) || url.startsWith(`${SPEECH_TO_TEXT_PATH}?`)) return 'stt';
  return TRANSCRIPTION_ROUTE_NAMES.some((name) => url.startsWith(`/api/v1/${name}/`)) ? 'stt' : 'speech';
}

/** The service's first transcription endpoint, which the Python SDK 4.x calls (legacy prefix only). */
const SPEECH_TO_TEXT_PATH = '/api/v1/speech-to-text';

/** POST /api/v1/speech-to-text, in the transcription family's error shape. */
function speechToTextFamily(deps: AppDeps, { knownRoutes, guard }: FamilyContext) {
  return async (stt: FastifyInstance) => {
    useErrorMapping(stt, 'stt', knownRoutes);
    guard(stt, 'transcription');
    if (deps.transcription) await stt.register(speechToTextRoutes({ transcribe: deps.transcription.transcribe, maxUploadBytes: deps.config.limits.maxUploadBytes }));
  };
}

/** Synthesis, voices, clones and dictionaries (and model admin on the legacy prefix) under one prefix. */
function speechFamily(deps: AppDeps, prefix: RoutePrefix, { knownRoutes, guard }: FamilyContext) {
  const { config } = deps;
  const layout = layoutOf(prefix);
  const successorDocsUrl = config.publicDocsUrl;
  return async (speech: FastifyInstance) => {
    useErrorMapping(speech, layout === 'current' ? 'waves' : 'speech', knownRoutes);
    guard(speech, 'management');
    await speech.register(voiceRoutes({ voices: deps.voices, clonedVoices: deps.clonedVoices, layout, successorDocsUrl }));
    await speech.register(pronunciationDictRoutes({ dicts: deps.dicts, cache: deps.dictCache, limits: config.limits, layout }));
    if (deps.synthesis) {
      await speech.register(
        synthesisRoutes({
          synthesis: deps.synthesis,
          maxTextChars: config.limits.maxTextChars,
          jsonChunks: config.synthesis.jsonChunks,
          writeStallTimeoutMs: config.http.writeStallTimeoutMs,
          successorDocsUrl,
          layout,
        }),
      );
    }
    if (deps.cloning) {
      await speech.register(
        voiceCloningRoutes({
          cloning: deps.cloning,
          maxSampleBytes: config.cloning.maxSampleBytes,
          readyTimeoutMs: config.cloning.readyTimeoutMs,
          synthesis: deps.synthesis,
          layout,
          successorDocsUrl,
        }),
      );
    }
    if (layout === 'current') await speech.register(notOfferedRoutes());
    if (layout !== 'legacy') return;
    if (deps.models) await speech.register(modelRoutes(deps.models));
    await speech.register(webhookSecretRoutes({ apiKeys: deps.apiKeys, defaultOverlapSeconds: config.webhooks.secretOverlapSeconds }));
    for (const routes of deps.extraRoutes?.speech ?? []) await speech.register(routes);
  };
}

/** Transcription and jobs under `<prefix>/<name>`; `POST /waves/v1/stt` (and `/stt/`) is the current layout's. */
function sttFamily(deps: AppDeps, prefix: RoutePrefix, name: string, { knownRoutes, guard }: FamilyContext) {
  const { config } = deps;
  const layout = layoutOf(prefix);
  return async (stt: FastifyInstance) => {
    useErrorMapping(stt, layout === 'current' ? 'waves' : 'stt', knownRoutes);
    guard(stt, 'transcription');
    const { jobs, transcription } = deps;
    if (jobs) await stt.register(jobRoutes({ jobs, layout }));
    if (transcription) {
      await stt.register(
        transcriptionRoutes({
          ...transcription,
          maxUploadBytes: config.limits.maxUploadBytes,
          layout,
          productRules: followsProductLanguages(layout, name),
          paths: layout === 'current' && name === 'stt' ? ['/get_text', '/'] : ['/get_text'],
          ...(jobs && {
            async validateWebhook(url, extra) {
              jobs.checkWebhookUrl(url);
              if (extra !== undefined) parseWebhookExtra(extra);
            },
            async submitJob(job) {
              await jobs.submit({ ...job, webhookExtra: job.webhookExtra === undefined ? {} : parseWebhookExtra(job.webhookExtra) });
            },
          }),
        }),
      );
    }
    if (layout === 'legacy' && name === 'stt') for (const routes of deps.extraRoutes?.stt ?? []) await stt.register(routes);
  };
}

/**
 * The WebSocket routes under one path prefix, each kind in its family's error shape: synthesis
 * under every speech name (and /tts/live on /waves/v1), streaming transcription under every
 * transcription name (and /stt/live on /waves/v1).
 */
async function registerSockets(
  app: FastifyInstance,
  deps: AppDeps,
  prefix: RoutePrefix,
  family: { authenticate: ReturnType<typeof bearerAuth>; limiters: Record<'synthesis' | 'transcription', ReturnType<typeof rateLimit>> },
): Promise<void> {
  const { config, sockets, synthesis } = deps;
  if (!sockets) return;
  const current = prefix === '/waves/v1';
  const guard = (instance: FastifyInstance, kind: 'speech' | 'stt', rate: 'synthesis' | 'transcription') => {
    // Errors only: unknown paths under the prefix stay the families' (one not-found handler per prefix).
    instance.setErrorHandler((err, request, reply) => sendError(request, reply, err, current ? 'waves' : kind));
    instance.addHook('onRequest', family.authenticate);
    instance.addHook('onRequest', (request, reply) => family.limiters[rate](request, reply));
  };
  if (synthesis) {
    await app.register(
      async (speech) => {
        guard(speech, 'speech', 'synthesis');
        await speech.register(
          realtimeSynthesisRoutes({
            synthesis,
            sockets,
            maxTextChars: config.limits.maxTextChars,
            writeStallTimeoutMs: config.http.writeStallTimeoutMs,
            live: current,
            chargeRequest: (accountId) => family.limiters.synthesis.charge(accountId),
          }),
        );
      },
      { prefix },
    );
  }
  if (deps.streamingEngines) {
    const engines = deps.streamingEngines;
    await app.register(
      async (stt) => {
        guard(stt, 'stt', 'transcription');
        await stt.register(
          realtimeTranscriptionRoutes({
            engines,
            sockets,
            writeStallTimeoutMs: config.http.writeStallTimeoutMs,
            partialSlots: config.transcription.workers,
            live: current,
          }),
        );
      },
      { prefix },
    );
  }
}
