/**
 * The composition root. buildServer(config) calls the plain builders — storage, engines,
 * synthesis, transcription, job queue, app — and hands each the products of the ones before; each
 * product's close() is registered so closing the server releases everything, in reverse order.
 * Background work (job runner, retention) is started by listen() only, so code that builds a
 * server without serving (a CLI command, a test) never runs it.
 */
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import pino from 'pino';
import { buildEngines, type Engines } from './compose/engines.js';
import { buildRateLimitStore, buildSocketSlots, buildStorage, ensureFirstKey, type Storage } from './compose/storage.js';
import { buildSynthesis } from './compose/synthesis.js';
import { buildVoiceCloning } from './compose/cloning.js';
import { buildFfmpegRunner, buildHeldEngines, buildTranscription, buildUrlFetcher } from './compose/transcription.js';
import { createFfmpegEncoder } from './audio/ffmpeg-encode.js';
import type { Config } from './config.js';
import { buildApp, type RouteRegistrar } from './http/app.js';
import { RealtimeSockets } from './http/plugins/realtime-sockets.js';
import { listCatalogue } from './models/catalogue.js';
import { PackAdmin } from './models/pack-admin.js';
import type { JobLogger } from './jobs/job-events.js';
import { buildJobQueue, type JobQueue } from './jobs/job-queue.js';
import { Releasers, runReadinessChecks, type BackgroundTask, type ReadinessChecks } from './lifecycle.js';
import { VoiceRegistry } from './synthesis/voice-registry.js';
import type { Transcribe } from './transcription/types.js';
import { version } from './version.js';

export interface ServerOptions {
  logger?: FastifyServerOptions['logger'];
  onFirstKey?: (key: string) => void;
  /** Load the model packs and offer synthesis, transcription and model admin (default true). */
  engines?: boolean;
  /** Transcribe with this instead of the engines (tests: a stand-in that needs no model). */
  transcribe?: Transcribe;
  /** The job queue's logger, clock and randomness (tests). */
  jobs?: { log?: JobLogger; clock?: () => number; random?: () => number };
  /** Routes added to a family besides the built-in ones (a test's own endpoints). */
  extraRoutes?: { speech?: RouteRegistrar[]; stt?: RouteRegistrar[] };
  /** The fetch pack installs download with (tests: one serving the catalogue's URLs from loopback). */
  packFetch?: typeof fetch;
}

export interface Server {
  app: FastifyInstance;
  storage: Storage;
  voices: VoiceRegistry;
  engines?: Engines;
  jobs?: JobQueue;
  /** Listen on the configured port and start the background work; resolves with the base URL. */
  listen(): Promise<string>;
  /** Stop background work, let in-flight requests finish (for a grace period), release everything. */
  close(): Promise<void>;
}

/** How long shutdown waits for in-flight requests before closing their connections. */
const SHUTDOWN_GRACE_MS = 10_000;

export async function buildServer(config: Config, options: ServerOptions = {}): Promise<Server> {
  const releasers = new Releasers();
  try {
    const storage = await buildStorage(config);
    releasers.add('storage', () => storage.close());
    const firstKey = await ensureFirstKey(storage, config);
    if (firstKey) options.onFirstKey?.(firstKey);

    const readiness: ReadinessChecks = { database: () => storage.readiness() };
    let engines: Engines | undefined;
    if (options.engines ?? true) {
      engines = await buildEngines(config);
      releasers.add('engines', () => engines!.close());
      Object.assign(readiness, engines.readiness);
    }
    const voices = engines?.voices ?? new VoiceRegistry();
    const ffmpeg = buildFfmpegRunner(config);
    const heldEngines = engines && buildHeldEngines(engines.models);
    const transcribe = options.transcribe ?? (heldEngines && buildTranscription(config, { engines: heldEngines, ffmpeg }));
    const cloningLog = pino({ name: 'voice-cloning', level: config.logLevel });
    const cloning = engines && buildVoiceCloning(config, { repo: storage.clonedVoices, espeak: engines.espeak, models: engines.models, ffmpeg, transcribe, log: cloningLog });
    if (cloning) {
      // Released before the engines and storage it uses: creations finishing after their response end first.
      releasers.add('voice cloning', () => cloning.close());
      const interrupted = await cloning.failInterrupted();
      if (interrupted > 0) cloningLog.error({ interrupted }, 'voice clones left processing by a stopped server were marked failed');
    }
    const synthesis = engines && buildSynthesis(config, { voices, dictCache: storage.dictCache, accountVoices: cloning });
    let app: FastifyInstance | undefined;
    const socketSlots = buildSocketSlots(storage, config, (err) => app?.log.error({ err }, 'socket slot store failed'));
    releasers.add('socket slots', () => socketSlots.close());
    const sockets = new RealtimeSockets(config.realtime, socketSlots);
    readiness.realtime = async () => ({ ok: true, detail: sockets.report() });
    let jobs: JobQueue | undefined;
    if (transcribe) {
      jobs = buildJobQueue(config, { store: storage.store, accounts: storage.accounts, nodeId: storage.nodeId, transcribe, ...options.jobs });
      releasers.add('job queue', () => jobs!.close());
      readiness.jobs = () => jobs!.readiness();
    }

    const rateLimitStore = buildRateLimitStore(storage, (err) => app?.log.error({ err }, 'rate-limit store failed; request let through'));
    releasers.add('rate-limit store', () => rateLimitStore.close());
    app = await buildApp(
      {
        config,
        version,
        apiKeys: storage.apiKeys,
        clonedVoices: storage.clonedVoices,
        dicts: storage.dicts,
        dictCache: storage.dictCache,
        voices,
        rateLimitStore,
        readiness: () => runReadinessChecks(readiness),
        synthesis,
        models: engines && {
          report: () => engines.models.report(),
          reload: () => engines.models.reload(),
          packs: new PackAdmin({
            modelsDir: config.modelsDir,
            dataDir: config.dataDir,
            espeakDataDir: config.synthesis.espeakDataDir,
            catalogue: listCatalogue,
            ...(options.packFetch ? { fetchImpl: options.packFetch } : {}),
          }),
          writeStallTimeoutMs: config.http.writeStallTimeoutMs,
        },
        transcription: transcribe && { transcribe, fetchUrl: buildUrlFetcher(config) },
        cloning,
        sockets,
        streamingEngines: heldEngines,
        openai: engines && {
          ffmpeg: createFfmpegEncoder({ enabled: config.ffmpeg.enabled, path: config.ffmpeg.path || null, limits: config.ffmpeg }),
          report: () => engines.models.report(),
          catalogue: listCatalogue,
        },
        jobs: jobs?.service,
        extraRoutes: options.extraRoutes,
      },
      options.logger ?? true,
    );
    const log = app.log;
    app.addHook('onClose', async () => releasers.releaseAll((msg, err) => log.error({ err }, msg)));
    return serving(app, { storage, voices, engines, jobs }, config);
  } catch (err) {
    await releasers.releaseAll();
    throw err;
  }
}

function serving(app: FastifyInstance, parts: Pick<Server, 'storage' | 'voices' | 'engines' | 'jobs'>, config: Config): Server {
  const started: BackgroundTask[] = [];
  const stopBackground = async () => {
    // In reverse order of start; the job runner stops claiming, then finishes or gives back what it holds.
    for (const task of started.splice(0).reverse()) await task.stop().catch((err) => app.log.error({ err }, `stopping ${task.name} failed`));
  };
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
  return {
    app,
    ...parts,
    async listen() {
      const address = await app.listen({ port: config.port, host: config.host });
      try {
        for (const task of parts.jobs?.background ?? []) {
          await task.start();
          started.push(task);
        }
      } catch (err) {
        await close();
        throw err;
      }
      return address.replace('[::]', '127.0.0.1').replace('0.0.0.0', '127.0.0.1');
    },
    close,
  };
}

export interface RunningServer extends Server {
  /** Base URL, e.g. http://127.0.0.1:8080 */
  url: string;
}

/** buildServer, then listen: what `parley serve` and the tests run. */
export async function startServer(config: Config, options: ServerOptions = {}): Promise<RunningServer> {
  const server = await buildServer(config, options);
  try {
    return Object.assign(server, { url: await server.listen() });
  } catch (err) {
    await server.close();
    throw err;
  }
}
