/**
 * The engines: the espeak-ng voices, the inference processes, and the installed model packs
 * loaded into them. The voice registry follows every pack reload.
 */
import pino from 'pino';
import type { Config } from '../config.js';
import type { EngineSet } from '../engines/server/engine-set.js';
import { createEspeakNgEngine, type EspeakNgTts } from '../engines/server/espeak-ng-tts.js';
import { Inference } from '../engines/server/inference.js';
import type { InferenceProcessOptions, InferenceProcessStatus } from '../engines/server/inference-process.js';
import { Releasers, type ReadinessChecks } from '../lifecycle.js';
import { InstalledModels } from '../models/installed-models.js';
import { verdictCacheDir } from '../models/verify.js';
import { VoiceRegistry } from '../synthesis/voice-registry.js';

export interface Engines {
  /** The built-in eSpeak NG voices (also the engine of built-in voice clones). */
  espeak: EspeakNgTts;
  models: InstalledModels;
  voices: VoiceRegistry;
  /** The inference processes' state (metrics read it at each scrape). */
  inferenceStatus(): InferenceProcessStatus[];
  readiness: ReadinessChecks;
  close(): Promise<void>;
}

export async function buildEngines(config: Config, observe: Pick<InferenceProcessOptions, 'observer' | 'hostPreload'> = {}): Promise<Engines> {
  const releasers = new Releasers();
  try {
    const espeak = await createEspeakNgEngine({ workers: config.synthesis.espeakWorkers });
    releasers.add('espeak-ng engine', () => espeak.close());
    const { inference: settings } = config;
    const inference = new Inference(settings.layout, {
      threads: config.transcription.workers,
      queueSize: config.transcription.queueSize,
      maxWaiting: settings.maxWaiting,
      deadlines: { baseMs: settings.deadlineBaseMs, perAudioSecondMs: settings.deadlinePerAudioSecondMs, perCharacterMs: settings.deadlinePerCharacterMs },
      memoryCeilingBytes: settings.memoryCeilingMb * 2 ** 20,
      restartDelayMs: settings.restartDelayMs,
      restartDelayCapMs: settings.restartDelayCapMs,
      cancelGraceMs: settings.cancelGraceMs,
      maxStreams: settings.maxStreams,
      streamIdleMs: settings.streamIdleMs,
      log: pino({ name: 'inference', level: config.logLevel }),
      ...observe,
    });
    releasers.add('inference processes', () => inference.close());

    const voices = new VoiceRegistry();
    const models = new InstalledModels({
      modelsDir: config.modelsDir,
      verdictCacheDir: verdictCacheDir(config.dataDir),
      runners: { synthesis: inference.for('synthesis'), transcription: inference.for('transcription') },
      espeakDataDir: config.synthesis.espeakDataDir,
      numThreads: config.synthesis.numThreads,
      diarizationThreshold: config.transcription.diarizationThreshold,
      log: pino({ name: 'models', level: config.logLevel }),
      onSwap(set: EngineSet) {
        // Built-in voices first: a pack cannot shadow an espeak voice id.
        voices.setEngines([espeak, ...set.tts]);
      },
    });
    // Released before the inference processes (reverse order): engines let go, then the processes leave.
    releasers.add('model engines', () => models.close());
    await models.reload();
    return {
      espeak,
      models,
      voices,
      inferenceStatus: () => inference.status(),
      readiness: {
        models: async () => ({ ok: true, detail: models.report() }),
        inference: async () => ({ ok: true, detail: { processes: inference.status() } }),
      },
      close: () => releasers.releaseAll(),
    };
  } catch (err) {
    await releasers.releaseAll();
    throw err;
  }
}
