/** Voice cloning: samples stored in the database, fitted to the built-in eSpeak NG voices. */
import { ConcurrencyLimit } from '../audio/concurrency-limit.js';
import type { FfmpegRunner } from '../audio/ffmpeg.js';
import type { Config } from '../config.js';
import type { EspeakNgTts } from '../engines/espeak-ng-tts.js';
import type { InstalledModels } from '../models/installed-models.js';
import type { ClonedVoiceRepository } from '../store/cloned-voice-repository.js';
import { VoiceCloningService } from '../synthesis/voice-cloning.js';

export function buildVoiceCloning(
  config: Config,
  deps: { repo: ClonedVoiceRepository; espeak: EspeakNgTts; models: Pick<InstalledModels, 'acquire'>; ffmpeg: FfmpegRunner | false },
): VoiceCloningService {
  const { cloning: settings } = config;
  return new VoiceCloningService({
    repo: deps.repo,
    espeak: deps.espeak,
    engines: () => {
      const set = deps.models.acquire();
      return { vad: set?.vad, release: () => set?.release() };
    },
    limits: settings,
    concurrency: new ConcurrencyLimit({
      maxConcurrent: settings.maxConcurrent,
      queueSize: settings.queueSize,
      queueTimeoutMs: settings.queueTimeoutMs,
      busyMessage: 'Server is busy creating other voice clones. Please try again later.',
    }),
    ffmpeg: deps.ffmpeg,
  });
}
