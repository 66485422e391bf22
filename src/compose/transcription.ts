/**
 * The transcription use case over the engines of the moment, and the URL fetcher its route uses
 * for {"url": …} input.
 */
import { ConcurrencyLimit } from '../concurrency/concurrency-limit.js';
import { createFfmpegRunner, type FfmpegRunner } from '../audio/ffmpeg.js';
import type { Config } from '../config.js';
import type { EngineSet } from '../engines/server/engine-set.js';
import type { CatalogueEntry } from '../models/catalogue.js';
import type { InstalledModels } from '../models/installed-models.js';
import { requireTranscriptionPacks, transcriptionPacksOf } from '../models/missing-packs.js';
import { createAddressPolicy } from '../net/address-policy.js';
import { fetchAudio, type FetchedAudio } from '../net/fetch-audio.js';
import { createSpeakerAnalysis } from '../voice-analysis/speaker-analysis.js';
import type { SpeakerAnalyzer } from '../voice-analysis/types.js';
import { DecodeWorkers } from '../transcription/decode-workers.js';
import { createTranscriber, type HeldEngines, type TranscriptionObserver, type UploadDecoder } from '../transcription/transcribe.js';
import type { Transcribe } from '../transcription/types.js';

export type UrlFetcher = (url: string, signal: AbortSignal) => Promise<FetchedAudio>;

/** The ffmpeg fallback decoder (config.ffmpeg), one per server so its process limit is shared; false when disabled. */
export function buildFfmpegRunner(config: Config): FfmpegRunner | false {
  return config.ffmpeg.enabled && createFfmpegRunner(config.ffmpeg.path || null, config.ffmpeg);
}

/** What a transcription holds while it runs: the engines of the moment and the analyzer of their set. */
export function buildHeldEngines(models: Pick<InstalledModels, 'acquire'>): () => HeldEngines {
  // One analyzer per engine set: a request analyses with the tagger of the set it holds.
  const analyzers = new WeakMap<EngineSet, SpeakerAnalyzer>();
  const baselineAnalyzer = createSpeakerAnalysis();
  const analyzerFor = (set: EngineSet | undefined): SpeakerAnalyzer => {
    if (!set?.audioTagging) return baselineAnalyzer;
    let analyzer = analyzers.get(set);
    if (!analyzer) analyzers.set(set, (analyzer = createSpeakerAnalysis({ audioTagging: set.audioTagging })));
    return analyzer;
  };
  return () => {
    const set = models.acquire();
    return { vad: set?.vad, recognizers: set?.recognizers ?? [], diarizer: set?.diarizer, punctuator: set?.punctuator, analyzer: analyzerFor(set), release: () => set?.release() };
  };
}

/**
 * What every transcription needs among the loaded packs, checked before a request reads a URL or
 * stores a job: throws PackNotInstalledError naming the pack to install.
 */
export function buildPackCheck(models: Pick<InstalledModels, 'report'>, catalogue: () => CatalogueEntry[]): (language: string) => void {
  return (language) => requireTranscriptionPacks(transcriptionPacksOf(models.report().loaded), language, catalogue());
}

/** The decode worker threads (config.transcription.decodeWorkers); undefined when 0 (decoding on the event loop). */
export function buildDecodeWorkers(config: Config): DecodeWorkers | undefined {
  return config.transcription.decodeWorkers > 0 ? new DecodeWorkers(config.transcription.decodeWorkers) : undefined;
}

export function buildTranscription(
  config: Config,
  deps: { engines: () => HeldEngines; ffmpeg: FfmpegRunner | false; observer?: TranscriptionObserver; decoder?: UploadDecoder },
): Transcribe {
  return createTranscriber({
    engines: deps.engines,
    observer: deps.observer,
    decoder: deps.decoder,
    utterancePauseSeconds: config.transcription.utterancePauseSeconds,
    decoding: config.transcription.decoding,
    decode: {
      maxSeconds: config.limits.maxAudioSeconds,
      ffmpeg: deps.ffmpeg,
      concurrency: new ConcurrencyLimit({
        maxConcurrent: config.limits.maxConcurrentDecodes,
        queueSize: config.limits.decodeQueueSize,
        queueTimeoutMs: config.limits.decodeQueueTimeoutMs,
        busyMessage: 'Server is busy decoding other audio. Please try again later.',
      }),
    },
  });
}

/** Fetches a URL given as transcription input, with the address policy and the upload cap applied. */
export function buildUrlFetcher(config: Config): UrlFetcher {
  const policy = createAddressPolicy(config.allowedPrivateHosts);
  return (url, signal) =>
    fetchAudio(url, {
      policy,
      connectTimeoutMs: config.transcription.urlConnectTimeoutMs,
      totalTimeoutMs: config.transcription.urlTotalTimeoutMs,
      maxRedirects: config.transcription.urlMaxRedirects,
      maxBytes: config.limits.maxUploadBytes,
      signal,
    });
}
