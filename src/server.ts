/**
 * The composition root: opens storage, builds the services and engines from the config, builds
 * the app and listens. Everything opened registers a releaser; close() releases in reverse.
 * Background work (job runner, retention) is only registered by capabilities and started by
 * startServer, so a CLI command that builds services never runs it.
 */
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { ApiKeyService, KEY_ROLES } from './accounts/api-keys.js';
import type { Config } from './config.js';
import { buildApp, type RouteRegistrar } from './http/app.js';
import { InProcessRateLimitStore, SharedRateLimitStore, type RateLimitStore } from './http/plugins/rate-limit.js';
import type { ReadinessReport } from './http/routes/health.js';
import { Releasers } from './lifecycle.js';
import { AccountRepository } from './store/account-repository.js';
import { ApiKeyRepository } from './store/api-key-repository.js';
import { ClonedVoiceRepository } from './store/cloned-voice-repository.js';
import { openStore, type Store } from './store/database.js';
import { newNodeId } from './store/ids.js';
import { PronunciationDictRepository } from './store/pronunciation-dict-repository.js';
import { RateLimitRepository } from './store/rate-limit-repository.js';
import { PronunciationDictCache } from './synthesis/pronunciation-dict-cache.js';
import { VoiceRegistry } from './synthesis/voice-registry.js';
import { sql } from 'kysely';
import { version } from './version.js';

/** Work a serving node does besides answering requests; started after listen, stopped first at shutdown. */
export interface BackgroundTask {
  name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface Services {
  config: Config;
  /** This process's id among the nodes sharing the database (job locks, leases). */
  nodeId: string;
  store: Store;
  accounts: AccountRepository;
  apiKeys: ApiKeyService;
  clonedVoices: ClonedVoiceRepository;
  dicts: PronunciationDictRepository;
  /** Compiled dictionaries, shared by the dictionary routes (which fill it) and synthesis (which reads it). */
  dictCache: PronunciationDictCache;
  voices: VoiceRegistry;
  releasers: Releasers;
  /** Named readiness checks contributed by capabilities (engines, packs, job runner). */
  readinessChecks: Map<string, () => Promise<{ ok: boolean; detail?: unknown }>>;
  speechRoutes: RouteRegistrar[];
  sttRoutes: RouteRegistrar[];
  /** OpenAI's API under /v1. */
  openaiRoutes: RouteRegistrar[];
  /** Started by startServer only; a CLI command builds what it needs and never starts these. */
  background: BackgroundTask[];
}

/** Open storage and the account services: what both the server and the CLI need. */
export async function openServices(config: Config): Promise<Services> {
  const releasers = new Releasers();
  const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  releasers.add('database', () => store.close());
  const accounts = new AccountRepository(store.db);
  const dicts = new PronunciationDictRepository(store.db);
  return {
    config,
    nodeId: newNodeId(),
    store,
    accounts,
    apiKeys: new ApiKeyService(new ApiKeyRepository(store.db), accounts, {
      cacheTtlMs: config.auth.keyCacheTtlMs,
      cacheMaxEntries: config.auth.keyCacheMaxEntries,
    }),
    clonedVoices: new ClonedVoiceRepository(store.db),
    dicts,
    dictCache: new PronunciationDictCache(dicts, config.synthesis.dictCacheEntries),
    voices: new VoiceRegistry(),
    releasers,
    readinessChecks: new Map(),
    speechRoutes: [],
    sttRoutes: [],
    openaiRoutes: [],
    background: [],
  };
}

/**
 * PARLEY_API_KEY is accepted (stored on first sight) as an admin key; with no key at all, an admin
 * key is created and returned so the caller can print it once.
 */
export async function ensureFirstKey(services: Services): Promise<string | null> {
  const { apiKeys, config } = services;
  if (config.apiKey) {
    await apiKeys.ensureOperatorKey(config.apiKey);
    return null;
  }
  if ((await apiKeys.countActive()) > 0) return null;
  return (await apiKeys.create({ name: 'default', role: KEY_ROLES.admin })).key;
}

export interface RunningServer {
  app: FastifyInstance;
  services: Services;
  /** Base URL, e.g. http://127.0.0.1:8080 */
  url: string;
  close(): Promise<void>;
}

/** How long shutdown waits for in-flight requests before closing their connections. */
const SHUTDOWN_GRACE_MS = 10_000;

export type CapabilityInstaller = (services: Services) => Promise<void>;

export async function startServer(
  config: Config,
  options: { logger?: FastifyServerOptions['logger']; capabilities?: CapabilityInstaller[]; onFirstKey?: (key: string) => void } = {},
): Promise<RunningServer> {
  const services = await openServices(config);
  try {
    const firstKey = await ensureFirstKey(services);
    if (firstKey) options.onFirstKey?.(firstKey);
    for (const install of options.capabilities ?? []) await install(services);

    const rateLimitStore = createRateLimitStore(services, (err) => app.log.error({ err }, 'rate-limit store failed; request let through'));
    services.releasers.add('rate-limit store', () => rateLimitStore.close());

    const app = await buildApp(
      {
        config,
        apiKeys: services.apiKeys,
        voices: services.voices,
        clonedVoices: services.clonedVoices,
        dicts: services.dicts,
        dictCache: services.dictCache,
        rateLimitStore,
        readiness: () => readiness(services),
        speechRoutes: services.speechRoutes,
        sttRoutes: services.sttRoutes,
        openaiRoutes: services.openaiRoutes,
        version,
      },
      options.logger ?? true,
    );
    app.addHook('onClose', async () => services.releasers.releaseAll((msg, err) => app.log.error({ err }, msg)));
    const address = await app.listen({ port: config.port, host: config.host });
    const url = address.replace('[::]', '127.0.0.1').replace('0.0.0.0', '127.0.0.1');
    const started: BackgroundTask[] = [];
    const stopBackground = async () => {
      // In reverse order of start; the job runner stops claiming, then finishes or gives back what it holds.
      for (const task of started.splice(0).reverse()) await task.stop().catch((err) => app.log.error({ err }, `stopping ${task.name} failed`));
    };
    try {
      for (const task of services.background) {
        await task.start();
        started.push(task);
      }
    } catch (err) {
      await stopBackground();
      await app.close();
      throw err;
    }
    let closing: Promise<void> | undefined;
    const close = () =>
      (closing ??= (async () => {
        // Background work first (readiness turns 503 as the runner stops, so a load balancer
        // drains this node), then in-flight requests get a grace period: a stream whose client
        // stopped reading would hold shutdown forever.
        await stopBackground();
        const force = setTimeout(() => app.server.closeAllConnections(), SHUTDOWN_GRACE_MS).unref();
        try {
          await app.close();
        } finally {
          clearTimeout(force);
        }
      })());
    return { app, services, url, close };
  } catch (err) {
    await services.releasers.releaseAll();
    throw err;
  }
}

/** One node (SQLite): buckets in process. Several nodes (PostgreSQL): buckets in the database. */
function createRateLimitStore(services: Services, onError: (err: unknown) => void): RateLimitStore {
  const { store } = services;
  if (store.backend.singleProcess) return new InProcessRateLimitStore();
  return new SharedRateLimitStore(new RateLimitRepository(store.db), onError);
}

async function readiness(services: Services): Promise<ReadinessReport> {
  const checks: Record<string, unknown> = {};
  let ready = true;
  try {
    await sql`select 1`.execute(services.store.db);
    checks.database = { ok: true, backend: services.store.backend.name };
  } catch (err) {
    ready = false;
    checks.database = { ok: false, error: (err as Error).message };
  }
  for (const [name, check] of services.readinessChecks) {
    const r = await check().catch((err: Error) => ({ ok: false, detail: err.message }));
    checks[name] = r;
    if (!r.ok) ready = false;
  }
  return { ready, checks };
}
