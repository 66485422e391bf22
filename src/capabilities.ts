/**
 * What the server offers beyond accounts and voice listing: engines built from the config and the
 * installed model packs, and the synthesis, transcription, jobs and model admin routes on top.
 * `startServer` runs these in order; each registers its releasers and readiness checks.
 */
import path from 'node:path';
import pino from 'pino';
import { ConcurrencyLimit } from './audio/concurrency-limit.js';
import { createFfmpegRunner } from './audio/ffmpeg.js';
import { createFfmpegEncoder } from './audio/ffmpeg-encode.js';
import type { EngineSet } from './engines/engine-set.js';
import { createEspeakNgEngine } from './engines/espeak-ng-tts.js';
import { Inference, type InferenceLayout } from './engines/inference.js';
import { RealtimeSockets } from './http/plugins/realtime-sockets.js';
import { realtimeSynthesisRoutes } from './http/routes/realtime-synthesis.js';
import { realtimeTranscriptionRoutes } from './http/routes/realtime-transcription.js';
import { synthesisRoutes } from './http/routes/synthesis.js';
import { voiceCloningRoutes } from './http/routes/voice-cloning.js';
import { modelRoutes } from './http/routes/models.js';
import { openAiRoutes } from './http/routes/openai/index.js';
import { listCatalogue } from './models/catalogue.js';
import { transcriptionRoutes } from './http/routes/transcription.js';
import { installJobs } from './jobs/install-jobs.js';
import { parseWebhookExtra } from './jobs/webhook-extra.js';
import { InstalledModels } from './models/installed-models.js';
import { verdictCacheDir } from './models/verify.js';
import { createAddressPolicy } from './net/address-policy.js';
import { fetchAudio } from './net/fetch-audio.js';
import type { CapabilityInstaller, Services } from './server.js';
import { SynthesisScheduler } from './synthesis/scheduler.js';
import { SynthesisService } from './synthesis/synthesize.js';
import { VoiceCloningService } from './synthesis/voice-cloning.js';
import { createSpeakerAnalysis } from './transcription/analysis/speaker-analysis.js';
import type { SpeakerAnalyzer } from './transcription/analysis/types.js';
import { createTranscriber, type HeldEngines } from './transcription/transcribe.js';

async function installSpeech(services: Services): Promise<void> {
  const { config, releasers } = services;
  const log = pino({ name: 'models', level: config.logLevel });

  const espeak = await createEspeakNgEngine({ workers: config.synthesis.espeakWorkers });
  releasers.add('espeak-ng engine', () => espeak.close());
  const { inference: settings } = config;
  const inference = new Inference(settings.layout as InferenceLayout, {
    threads: config.transcription.workers,
    queueSize: config.transcription.queueSize,
    maxWaiting: settings.maxWaiting,
    deadlines: { baseMs: settings.deadlineBaseMs, perAudioSecondMs: settings.deadlinePerAudioSecondMs, perCharacterMs: settings.deadlinePerCharacterMs },
    memoryCeilingBytes: settings.memoryCeilingMb * 2 ** 20,
    restartDelayMs: settings.restartDelayMs,
    restartDelayCapMs: settings.restartDelayCapMs,
    cancelGraceMs: settings.cancelGraceMs,
    log: pino({ name: 'inference', level: config.logLevel }),
  });
  releasers.add('inference processes', () => inference.close());

  // One analyzer per engine set: a request analyses with the tagger of the set it holds.
  const analyzers = new WeakMap<EngineSet, SpeakerAnalyzer>();
  const baselineAnalyzer = createSpeakerAnalysis();
  const analyzerFor = (set: EngineSet | undefined): SpeakerAnalyzer => {
    if (!set?.audioTagging) return baselineAnalyzer;
    let analyzer = analyzers.get(set);
    if (!analyzer) analyzers.set(set, (analyzer = createSpeakerAnalysis({ audioTagging: set.audioTagging })));
    return analyzer;
  };
  const models = new InstalledModels({
    modelsDir: config.modelsDir,
    verdictCacheDir: verdictCacheDir(config.dataDir),
    runners: { synthesis: inference.for('synthesis'), transcription: inference.for('transcription') },
    espeakDataDir: config.synthesis.espeakDataDir,
    numThreads: config.synthesis.numThreads,
    diarizationThreshold: config.transcription.diarizationThreshold,
    log,
    onSwap(set) {
      // Built-in voices first: a pack cannot shadow an espeak voice id.
      services.voices.setEngines([espeak, ...set.tts]);
    },
  });
  // Released before the inference processes (reverse order): engines let go, then the processes leave.
  releasers.add('model engines', () => models.close());
  await models.reload();
  services.readinessChecks.set('models', async () => ({ ok: true, detail: models.report() }));
  services.readinessChecks.set('inference', async () => ({ ok: true, detail: { processes: inference.status() } }));

  const ffmpeg = config.ffmpeg.enabled && createFfmpegRunner(config.ffmpeg.path || null, config.ffmpeg);
  const { cloning: cloningSettings } = config;
  const cloning = new VoiceCloningService({
    repo: services.clonedVoices,
    espeak,
    engines: () => {
      const set = models.acquire();
      return { vad: set?.vad, release: () => set?.release() };
    },
    limits: cloningSettings,
    concurrency: new ConcurrencyLimit({
      maxConcurrent: cloningSettings.maxConcurrent,
      queueSize: cloningSettings.queueSize,
      queueTimeoutMs: cloningSettings.queueTimeoutMs,
      busyMessage: 'Server is busy creating other voice clones. Please try again later.',
    }),
    ffmpeg,
  });
  const { maxPreparedTextChars, maxOutputSeconds } = config.limits;
  const synthesis = new SynthesisService({
    voices: services.voices,
    dicts: services.dictCache,
    limits: { maxPreparedTextChars, maxOutputSeconds },
    scheduler: new SynthesisScheduler(config.synthesis.workersPerEngine),
    accountVoices: cloning,
  });
  const sockets = new RealtimeSockets(config.realtime);
  services.readinessChecks.set('realtime', async () => ({ ok: true, detail: sockets.report() }));
  services.speechRoutes.push(
    synthesisRoutes({
      synthesis,
      maxTextChars: config.limits.maxTextChars,
      jsonChunks: config.synthesis.jsonChunks,
      writeStallTimeoutMs: config.http.writeStallTimeoutMs,
      successorDocsUrl: config.publicDocsUrl,
    }),
    realtimeSynthesisRoutes({ synthesis, sockets, maxTextChars: config.limits.maxTextChars, writeStallTimeoutMs: config.http.writeStallTimeoutMs }),
    modelRoutes({ report: () => models.report(), reload: () => models.reload() }),
    voiceCloningRoutes({ cloning, maxSampleBytes: cloningSettings.maxSampleBytes }),
  );

  const heldEngines = (): HeldEngines => {
    const set = models.acquire();
    return { vad: set?.vad, recognizers: set?.recognizers ?? [], diarizer: set?.diarizer, analyzer: analyzerFor(set), release: () => set?.release() };
  };
  const transcribe = createTranscriber({
    engines: heldEngines,
    utterancePauseSeconds: config.transcription.utterancePauseSeconds,
    decoding: config.transcription.decoding,
    decode: {
      maxSeconds: config.limits.maxAudioSeconds,
      ffmpeg,
      concurrency: new ConcurrencyLimit({
        maxConcurrent: config.limits.maxConcurrentDecodes,
        queueSize: config.limits.decodeQueueSize,
        queueTimeoutMs: config.limits.decodeQueueTimeoutMs,
        busyMessage: 'Server is busy decoding other audio. Please try again later.',
      }),
    },
  });
  const jobs = await installJobs(services, { transcribe });
  const policy = createAddressPolicy(config.allowedPrivateHosts);
  services.sttRoutes.push(
    realtimeTranscriptionRoutes({ engines: heldEngines, sockets, writeStallTimeoutMs: config.http.writeStallTimeoutMs, partialSlots: config.transcription.workers }),
    transcriptionRoutes({
      transcribe,
      maxUploadBytes: config.limits.maxUploadBytes,
      fetchUrl: (url, signal) =>
        fetchAudio(url, {
          policy,
          connectTimeoutMs: config.transcription.urlConnectTimeoutMs,
          totalTimeoutMs: config.transcription.urlTotalTimeoutMs,
          maxRedirects: config.transcription.urlMaxRedirects,
          maxBytes: config.limits.maxUploadBytes,
          signal,
        }),
      async validateWebhook(url, extra) {
        jobs.checkWebhookUrl(url);
        if (extra !== undefined) parseWebhookExtra(extra);
      },
      async submitJob(job) {
        await jobs.submit({ ...job, webhookExtra: job.webhookExtra === undefined ? {} : parseWebhookExtra(job.webhookExtra) });
      },
    }),
  );
  services.openaiRoutes.push(
    ...openAiRoutes({
      config,
      synthesis,
      voices: services.voices,
      transcribe,
      ffmpeg: createFfmpegEncoder({ enabled: config.ffmpeg.enabled, path: config.ffmpeg.path || null, limits: config.ffmpeg }),
      report: () => models.report(),
      catalogue: listCatalogue,
    }),
  );
  log.debug({ dataDir: path.resolve(config.dataDir) }, 'speech capabilities installed');
}

export const capabilities: CapabilityInstaller[] = [installSpeech];
