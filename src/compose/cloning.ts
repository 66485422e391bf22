/**
 * Voice cloning: samples stored in the database, spoken by a zero-shot pack when one is loaded,
 * else by the built-in eSpeak NG match. A ZipVoice clone sent without a transcript is transcribed
 * by the transcription use case, handed in here as a function (synthesis never imports
 * transcription).
 */
import { ConcurrencyLimit } from '../concurrency/concurrency-limit.js';
import { encodeInt16 } from '../audio/encode.js';
import type { FfmpegRunner } from '../audio/ffmpeg.js';
import { WavFormatTag, wavFile } from '../audio/wav.js';
import type { Config } from '../config.js';
import type { EspeakNgTts } from '../engines/server/espeak-ng-tts.js';
import type { InstalledModels } from '../models/installed-models.js';
import type { ClonedVoiceRepository } from '../store/cloned-voice-repository.js';
import { VoiceCloningService, type TranscribeSample, type VoiceCloningDeps } from '../synthesis/voice-cloning.js';
import type { Transcribe } from '../transcription/types.js';

export function buildVoiceCloning(
  config: Config,
  deps: {
    repo: ClonedVoiceRepository;
    espeak: EspeakNgTts;
    models: Pick<InstalledModels, 'acquire'>;
    ffmpeg: FfmpegRunner | false;
    transcribe?: Transcribe;
    log?: VoiceCloningDeps['log'];
  },
): VoiceCloningService {
  const { cloning: settings } = config;
  return new VoiceCloningService({
    repo: deps.repo,
    espeak: deps.espeak,
    engines: () => {
      const set = deps.models.acquire();
      return { vad: set?.vad, zeroShot: set?.zeroShot ?? [], release: () => set?.release() };
    },
    limits: settings,
    concurrency: new ConcurrencyLimit({
      maxConcurrent: settings.maxConcurrent,
      queueSize: settings.queueSize,
      queueTimeoutMs: settings.queueTimeoutMs,
      busyMessage: 'Server is busy creating other voice clones. Please try again later.',
    }),
    ffmpeg: deps.ffmpeg,
    ...(deps.transcribe ? { transcribeSample: sampleTranscriber(deps.transcribe) } : {}),
    ...(deps.log ? { log: deps.log } : {}),
  });
}

/** The transcription use case over a clone's sample, handed over as a 16-bit WAV. */
function sampleTranscriber(transcribe: Transcribe): TranscribeSample {
  return async (samples, sampleRate, language, signal) => {
    const bytes = wavFile(encodeInt16(samples), { sampleRate, channels: 1, bitsPerSample: 16, formatTag: WavFormatTag.pcm });
    const result = await transcribe(
      { bytes, contentType: 'audio/wav' },
      { language, wordTimestamps: false, diarize: false, ageDetection: false, genderDetection: false, emotionDetection: false, filename: 'voice-sample.wav' },
      { requestId: 'voice-clone-sample', signal },
    );
    return result.transcription;
  };
}
