/**
 * What the server offers beyond accounts and voice listing: engines built from the config and the
 * installed model packs, and the synthesis, transcription, jobs and model admin routes on top.
 * `startServer` runs these in order; each registers its releasers and readiness checks.
 */
import path from 'node:path';
import pino from 'pino';
import { ConcurrencyLimit } from './audio/concurrency-limit.js';
import { createFfmpegRunner } from './audio/ffmpeg.js';
import type { EngineSet } from './engines/engine-set.js';
import { createEspeakNgEngine } from './engines/espeak-ng-tts.js';
import { Inference, type InferenceLayout } from './engines/inference.js';
import { synthesisRoutes } from './http/routes/synthesis.js';
import { voiceCloningRoutes } from './http/routes/voice-cloning.js';
import { modelRoutes } from './http/routes/models.js';
import { transcriptionRoutes } from './http/routes/transcription.js';
import { installJobs } from './jobs/install-jobs.js';
import { parseWebhookExtra } from './jobs/webhook-extra.js';
import { InstalledModels } from './models/installed-models.js';
import { verdictCacheDir } from './models/verify.js';
import { createAddressPolicy } from './net/address-policy.js';
import { fetchAudio } from './net/fetch-audio.js';
import type { CapabilityInstaller, Services } from './server.js';
import { SynthesisService } from './synthesis/synthesize.js';
import { VoiceCloningService } from './synthesis/voice-cloning.js';
import { createSpeakerAnalysis } from './transcription/analysis/speaker-analysis.js';
import type { SpeakerAnalyzer } from './transcription/analysis/types.js';
import { createTranscriber } from './transcription/transcribe.js';

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
    accountVoices: cloning,
  });
  services.speechRoutes.push(
    synthesisRoutes({
      synthesis,
      maxTextChars: config.limits.maxTextChars,
      jsonChunks: config.synthesis.jsonChunks,
      writeStallTimeoutMs: config.http.writeStallTimeoutMs,
      successorDocsUrl: config.publicDocsUrl,
    }),
    modelRoutes({ report: () => models.report(), reload: () => models.reload() }),
    voiceCloningRoutes({ cloning, maxSampleBytes: cloningSettings.maxSampleBytes }),
  );

  const transcribe = createTranscriber({
    engines: () => {
      const set = models.acquire();
      return { vad: set?.vad, recognizers: set?.recognizers ?? [], diarizer: set?.diarizer, analyzer: analyzerFor(set), release: () => set?.release() };
    },
    utterancePauseSeconds: config.transcription.utterancePauseSeconds,
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
  log.debug({ dataDir: path.resolve(config.dataDir) }, 'speech capabilities installed');
}

export const capabilities: CapabilityInstaller[] = [installSpeech];
