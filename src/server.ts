/**
 * The composition root. buildServer(config) calls the plain builders — storage, engines,
 * synthesis, transcription, job queue, app — and hands each the products of the ones before; each
 * product's close() is registered so closing the server releases everything, in reverse order.
 * Background work (job runner, retention) is started by listen() only, so code that builds a
 * server without serving (a CLI command, a test) never runs it.
 */
import type { Server as TlsServer } from 'node:tls';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import pino from 'pino';
import { buildEngines, type Engines } from './compose/engines.js';
import { buildRateLimitStore, buildSocketSlots, buildStorage, ensureFirstKey, type Storage } from './compose/storage.js';
import { buildSynthesis, warmUpSynthesis } from './compose/synthesis.js';
import { buildVoiceCloning } from './compose/cloning.js';
import { buildDecodeWorkers, buildFfmpegRunner, buildHeldEngines, buildPackCheck, buildTranscription, buildUrlFetcher } from './compose/transcription.js';
import { createFfmpegEncoder } from './audio/ffmpeg-encode.js';
import { warmUpCodecs } from './audio/warm-up.js';
import type { Config } from './config.js';
import { buildApp, type RouteRegistrar } from './http/app.js';
import { redactingLoggerOptions } from './http/plugins/log-redaction.js';
import { RealtimeSockets } from './http/plugins/realtime-sockets.js';
import { readTlsFiles, reloadTls } from './http/plugins/tls.js';
import { startWyoming, type WyomingServer } from './http/wyoming/server.js';
import { listCatalogue, type CatalogueEntry } from './models/catalogue.js';
import { FirstRun } from './models/first-run.js';
import { missingPacksMessage, missingTranscriptionPacks, transcriptionPacksOf } from './models/missing-packs.js';
import { mirroredFetch } from './models/pull.js';
import { PackAdmin } from './models/pack-admin.js';
import type { JobLogger } from './jobs/job-events.js';
import { buildJobQueue, type JobQueue } from './jobs/job-queue.js';
import { LONGEST_STOP_MS } from './jobs/job-runner.js';
import { EXIT_GRACE_MS } from './engines/server/inference-process.js';
import { Releasers, runReadinessChecks, type BackgroundTask, type ReadinessChecks } from './lifecycle.js';
import { VoiceRegistry } from './synthesis/voice-registry.js';
import type { Transcribe } from './transcription/types.js';
import { version } from './version.js';
import { databaseGauges } from './observability/database-gauges.js';
import { instrumentHttp } from './observability/http.js';
import { inferenceObserver, ParleyMetrics } from './observability/metrics.js';
import { startMetricsListener, type MetricsListener } from './observability/metrics-listener.js';
import { inferenceTracingPreload, startTracing } from './observability/tracing.js';

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
  /**
   * Install what transcription lacks once listening, in the background (config.models.autoPull):
   * `parley serve` sets it; a server a test or a command builds never downloads on its own.
   */
  firstRun?: boolean;
  /** The catalogue the server installs from (tests: entries served from loopback); default the built-in one. */
  catalogue?: () => CatalogueEntry[];
  /** Runs instead of compiling and running every encoder and decoder once (tests: a stand-in whose end the test decides). */
  warmUp?: () => Promise<string[]>;
}

export interface Server {
  app: FastifyInstance;
  storage: Storage;
  voices: VoiceRegistry;
  engines?: Engines;
  jobs?: JobQueue;
  /** The Prometheus registry, when metrics are on (metrics.port or metrics.token). */
  metrics?: ParleyMetrics;
  /** Listen on the configured port and start the background work; resolves with the base URL. */
  listen(): Promise<string>;
  /** Stop background work, let in-flight requests finish (for a grace period), release everything. */
  close(): Promise<void>;
  /** The Wyoming listener, once listen() started it (config.wyoming.port set). */
  wyoming?: WyomingServer;
  /** With TLS: read the certificate and key again for new connections (what SIGHUP does); throws, keeping the old ones, when they are not usable. */
  reloadTls(): void;
  /** Settles when every codec has been compiled and run once (/readyz is not ready before). */
  warmedUp: Promise<void>;
}

/** How long shutdown waits for in-flight requests before closing their connections. */
const SHUTDOWN_GRACE_MS = 10_000;

/**
 * The longest close() waits, its database calls aside (each bounded by
 * database.statementTimeoutMs): the job runner's stop, the grace period of in-flight requests,
 * then the inference processes' exit. A deployment gives a stopping node at least this.
 */
export const LONGEST_SHUTDOWN_MS = LONGEST_STOP_MS + SHUTDOWN_GRACE_MS + EXIT_GRACE_MS;

export async function buildServer(config: Config, options: ServerOptions = {}): Promise<Server> {
  const releasers = new Releasers();
  try {
    // First: a certificate that cannot be read stops the start before anything is opened.
    const tls = readTlsFiles(config.tls);
    const storage = await buildStorage(config);
    releasers.add('storage', () => storage.close());
    const firstKey = await ensureFirstKey(storage, config);
    if (firstKey) options.onFirstKey?.(firstKey);

    const readiness: ReadinessChecks = { database: () => storage.readiness() };
    // Metrics when they are served somewhere; traces when an OTLP endpoint is set. Off, nothing is recorded.
    const metrics = config.metrics.port > 0 || config.metrics.token ? new ParleyMetrics() : undefined;
    const tracing = await startTracing();
    let engines: Engines | undefined;
    if (options.engines ?? true) {
      engines = await buildEngines(config, {
        observer: metrics || tracing ? inferenceObserver(metrics, tracing) : undefined,
        hostPreload: tracing && inferenceTracingPreload(),
      });
      releasers.add('engines', () => engines!.close());
      Object.assign(readiness, engines.readiness);
    }
    const voices = engines?.voices ?? new VoiceRegistry();
    const ffmpeg = buildFfmpegRunner(config);
    const heldEngines = engines && buildHeldEngines(engines.models);
    const decodeWorkers = heldEngines && !options.transcribe ? buildDecodeWorkers(config) : undefined;
    if (decodeWorkers) releasers.add('transcription decode workers', () => decodeWorkers.close());
    const transcribe =
      options.transcribe ?? (heldEngines && buildTranscription(config, { engines: heldEngines, ffmpeg, observer: metrics?.transcription, decoder: decodeWorkers }));
    const cloningLog = pino({ name: 'voice-cloning', level: config.logLevel, ...redactingLoggerOptions });
    const cloning = engines && buildVoiceCloning(config, { repo: storage.clonedVoices, espeak: engines.espeak, models: engines.models, ffmpeg, transcribe, log: cloningLog });
    if (cloning) {
      // Released before the engines and storage it uses: creations finishing after their response end first.
      releasers.add('voice cloning', () => cloning.close());
      const interrupted = await cloning.failInterrupted();
      if (interrupted > 0) cloningLog.error({ interrupted }, 'voice clones left processing by a stopped server were marked failed');
    }
    const synthesis = engines && buildSynthesis(config, { voices, dictCache: storage.dictCache, accountVoices: cloning, observer: metrics?.synthesis });
    if (synthesis) releasers.add('synthesis output workers', () => synthesis.close());
    const ffmpegEncoder = createFfmpegEncoder({ enabled: config.ffmpeg.enabled, path: config.ffmpeg.path || null, limits: config.ffmpeg });
    // Not ready until every codec has been compiled and run once (in this thread and in each output
    // and decode worker) and eSpeak has spoken real sentences: the first request of a format would
    // otherwise pay for it. A codec that fails here is logged, and fails again on the request that
    // asks for it.
    // A server without engines (tests, a CLI command) encodes and decodes nothing.
    const warmUp =
      options.warmUp ??
      (engines &&
        (async () => {
          const { warmed, uploads } = await warmUpCodecs({ ffmpeg: config.ffmpeg.enabled ? ffmpegEncoder : undefined });
          warmed.push(...((await synthesis?.warmUp()) ?? []).map((n) => `output worker ${n}`));
          warmed.push(...((await decodeWorkers?.warmUp(uploads)) ?? []).map((n) => `decode worker ${n}`));
          await engines.espeak.warmUp();
          warmed.push('espeak-ng');
          if (synthesis) warmed.push(...(await warmUpSynthesis(synthesis, voices, config.synthesis.espeakWorkers, config.synthesis.warmUpRounds, config.synthesis.outputWorkers)));
          return warmed;
        }));
    let warmedUp = Promise.resolve();
    if (warmUp) {
      let warm: { ok: boolean; warmed?: string[]; error?: string } = { ok: false };
      warmedUp = warmUp().then(
        (warmed) => (warm = { ok: true, warmed }),
        (err: Error) => {
          warm = { ok: true, error: err.message };
          app?.log.error({ err }, 'warming up the codecs failed');
        },
      ) as Promise<void>;
      readiness.codecs = async () => warm;
    }
    let app: FastifyInstance | undefined;
    const socketSlots = buildSocketSlots(storage, config, (err) => app?.log.error({ err }, 'socket slot store failed'));
    releasers.add('socket slots', () => socketSlots.close());
    const sockets = new RealtimeSockets(config.realtime, socketSlots, {
      stillActive: (ids) => storage.apiKeys.stillActive(ids),
      onError: (err) => app?.log.error({ err }, 'checking the keys of open sockets failed; they stay open until the next check'),
    });
    releasers.add('socket key checks', async () => sockets.close());
    readiness.realtime = async () => ({ ok: true, detail: sockets.report() });
    const catalogue = options.catalogue ?? listCatalogue;
    const packFetch = options.packFetch ?? (config.models.mirrorUrl ? mirroredFetch(config.models.mirrorUrl) : undefined);
    const packs =
      engines &&
      new PackAdmin({
        modelsDir: config.modelsDir,
        dataDir: config.dataDir,
        espeakDataDir: config.synthesis.espeakDataDir,
        catalogue,
        ...(packFetch ? { fetchImpl: packFetch } : {}),
      });
    const background: BackgroundTask[] = [];
    if (engines && packs && options.firstRun && config.models.autoPull) {
      const models = engines.models;
      const firstRun = new FirstRun({
        dataDir: config.dataDir,
        modelsDir: config.modelsDir,
        language: config.models.autoPullLanguage,
        catalogue,
        packs,
        models,
        log: pino({ name: 'first-run', level: config.logLevel }),
      });
      background.push({ name: 'first-run installs', start: async () => firstRun.start(), stop: () => firstRun.stop() });
      readiness.firstRun = async () => {
        const report = firstRun.report();
        return { ok: true, detail: report, ...(report.note ? { note: report.note } : {}) };
      };
    } else if (engines) {
      // Nothing will install what transcription lacks: say so once, at start.
      const missing = missingTranscriptionPacks(transcriptionPacksOf(engines.models.report().loaded), config.models.autoPullLanguage, catalogue());
      if (missing.length) pino({ name: 'models', level: config.logLevel }).warn(missingPacksMessage(missing));
    }
    let jobs: JobQueue | undefined;
    if (transcribe) {
      jobs = buildJobQueue(config, {
        store: storage.store,
        accounts: storage.accounts,
        nodeId: storage.nodeId,
        transcribe,
        log: pino({ name: 'jobs', level: config.logLevel, ...redactingLoggerOptions }),
        ...options.jobs,
      });
      releasers.add('job queue', () => jobs!.close());
      readiness.jobs = () => jobs!.readiness();
    }

    if (metrics) {
      const database = databaseGauges(storage.store, storage.nodeId);
      releasers.add('metrics lease', () => database.release());
      metrics.attach({ inference: engines?.inferenceStatus, sockets, database, jobEvents: jobs?.events });
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
          ...(packs ? { packs } : {}),
          writeStallTimeoutMs: config.http.writeStallTimeoutMs,
        },
        transcription: transcribe && {
          transcribe,
          fetchUrl: buildUrlFetcher(config),
          // A stand-in transcriber (tests) needs no pack.
          ...(engines && !options.transcribe ? { requirePacks: buildPackCheck(engines.models, catalogue) } : {}),
        },
        cloning,
        sockets,
        streamingEngines: heldEngines,
        openai: engines && {
          ffmpeg: ffmpegEncoder,
          report: () => engines.models.report(),
          catalogue,
        },
        jobs: jobs?.service,
        extraRoutes: options.extraRoutes,
        tls,
        instrument: metrics || tracing ? (app) => instrumentHttp(app, { metrics, tracing, metricsToken: config.metrics.token }) : undefined,
      },
      options.logger ?? true,
    );
    const log = app.log;
    app.addHook('onClose', async () => releasers.releaseAll((msg, err) => log.error({ err }, msg)));
    const wyoming = config.wyoming.port
      ? () =>
          startWyoming({
            config,
            version,
            apiKeys: storage.apiKeys,
            slots: socketSlots,
            voices,
            synthesis,
            rateLimitStore,
            engines: heldEngines,
            recognizers: () => (engines?.models.report().loaded ?? []).filter((p) => p.kind.startsWith('asr-')).map((p) => ({ id: p.id, languages: p.languages })),
            log: pino({ name: 'wyoming', level: config.logLevel }),
          })
      : undefined;
    if (tracing) app.addHook('onClose', async () => tracing.flush().catch((err) => log.warn({ err }, 'sending the last spans failed')));
    return serving(app, { storage, voices, engines, jobs, metrics, warmedUp }, config, wyoming, background);
  } catch (err) {
    await releasers.releaseAll();
    throw err;
  }
}

function serving(
  app: FastifyInstance,
  parts: Pick<Server, 'storage' | 'voices' | 'engines' | 'jobs' | 'metrics' | 'warmedUp'>,
  config: Config,
  startWyomingListener?: () => Promise<WyomingServer>,
  background: BackgroundTask[] = [],
): Server {
  let wyoming: WyomingServer | undefined;
  const started: BackgroundTask[] = [];
  let metricsListener: MetricsListener | undefined;
  const stopBackground = async () => {
    // In reverse order of start; the job runner stops claiming, then finishes or gives back what it holds.
    for (const task of started.splice(0).reverse()) await task.stop().catch((err) => app.log.error({ err }, `stopping ${task.name} failed`));
  };
  const reload = () => {
    if (config.tls.certFile) reloadTls(app.server as unknown as TlsServer, config.tls);
  };
  const onHangup = () => {
    try {
      reload();
      app.log.info({ certFile: config.tls.certFile }, 'TLS certificate and key reloaded');
    } catch (err) {
      app.log.error({ err }, 'TLS reload failed: the previous certificate stays in use');
    }
  };
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      process.off('SIGHUP', onHangup);
      await wyoming?.close();
      // Background work first (readiness turns 503 as the runner stops, so a load balancer
      // drains this node), then in-flight requests get a grace period: a stream whose client
      // stopped reading would hold shutdown forever.
      await stopBackground();
      await metricsListener?.close();
      const force = setTimeout(() => app.server.closeAllConnections(), SHUTDOWN_GRACE_MS).unref();
      try {
        await app.close();
      } finally {
        clearTimeout(force);
      }
    })());
  const server: Server = {
    app,
    ...parts,
    reloadTls: reload,
    async listen() {
      const address = await app.listen({ port: config.port, host: config.host });
      if (config.tls.certFile) process.on('SIGHUP', onHangup);
      try {
        if (startWyomingListener) wyoming = server.wyoming = await startWyomingListener();
        if (parts.metrics && config.metrics.port > 0) {
          metricsListener = await startMetricsListener(parts.metrics, { port: config.metrics.port, host: config.metrics.host });
          app.log.info(`metrics at ${metricsListener.url}`);
        }
        for (const task of [...(parts.jobs?.background ?? []), ...background]) {
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
  return server;
}

export interface RunningServer extends Server {
  /** Base URL, e.g. http://127.0.0.1:8080 */
  url: string;
}

/** buildServer, then listen: what `parley serve` and the tests run. */
export async function startServer(config: Config, options: ServerOptions = {}): Promise<RunningServer> {
  const server = await buildServer(config, options);
  try {
    const url = await server.listen();
    // Listening already (a probe meanwhile gets 503 from /readyz); started once the codecs are warm.
    await server.warmedUp;
    return Object.assign(server, { url });
  } catch (err) {
    await server.close();
    throw err;
  }
}
