/**
 * The voice-cloning use case: a sample becomes a voice of the account that sent it.
 *
 * add_voice: decode (within the size and duration caps) → VAD → at least minSpeechSeconds of
 * speech or 400 → the stretch of at most sampleSeconds with the most speech is kept, as 16-bit
 * PCM in the database (every node can use it) → its profile is measured → the clone is stored as
 * `processing` → the engine is prepared → `completed`, or `failed` with the reason. Everything up
 * to storing is checked before anything is stored, so a bad sample leaves nothing behind.
 *
 * The engine is the built-in match (espeak-voice-match.ts). Zero-shot packs (ZipVoice, Pocket
 * TTS), which would condition on the stored sample itself, are not wired in yet.
 *
 * Synthesis reaches a clone through resolve(), which reads it for the requesting account only: a
 * clone of another account is as unknown as one that does not exist, and a deleted clone stops
 * speaking at once (nothing is cached).
 */
import { decodeAudio } from '../audio/decode.js';
import type { FfmpegRunner } from '../audio/ffmpeg.js';
import { encodeInt16 } from '../audio/encode.js';
import type { ConcurrencyLimit } from '../audio/concurrency-limit.js';
import { espeakSampleRate, type EspeakNgTts } from '../engines/espeak-ng-tts.js';
import type { ModelGeneration, TimeSpan, TtsEngine, Voice, VoiceActivityDetector } from '../engines/types.js';
import { AbortedError, InvalidRequestError, OverloadedError, UnsupportedAudioError } from '../errors.js';
import { newId, nowIso } from '../store/ids.js';
import type { ClonedVoiceRepository, ClonedVoiceRow } from '../store/cloned-voice-repository.js';
import { resampleForAnalysis } from '../voice-analysis/analysis-rate.js';
import { fitEspeakVoice, type MatchedEspeakSettings } from './espeak-voice-match.js';
import type { ResolvedVoice } from './voice-registry.js';
import { bestSpeechWindow, measureVoiceProfile, type VoiceProfile } from './voice-profile.js';

/** Rate the sample is stored at: above eSpeak's 22.05 kHz, and the rate ZipVoice and Pocket TTS work at. */
export const SAMPLE_RATE = 24_000;
/** Audio kept either side of the speech so that its first and last sounds are whole, seconds. */
const EDGE_PAD_SECONDS = 0.1;
export const MATCHED_ENGINE = 'espeak-ng-matched';
const allModels: ModelGeneration[] = ['tts-large', 'tts-v2', 'tts-v3.1'];

export interface CloningLimits {
  maxSampleAudioSeconds: number;
  minSpeechSeconds: number;
  sampleSeconds: number;
  maxClonesPerAccount: number;
}

/** Engines one creation uses, held until release(). */
export interface CloningEngines {
  vad?: VoiceActivityDetector;
  release(): void;
}

export interface CloneRequest {
  accountId: string;
  /** The route's model: tts-large or tts-v3.1. */
  model: ModelGeneration;
  displayName: string;
  file: { bytes: Uint8Array; contentType?: string; filename?: string };
  description?: string;
  accent?: string;
  tags: string[];
  /** ISO 639-1; default en. */
  language?: string;
  transcript?: string;
}

export interface VoiceCloningDeps {
  repo: ClonedVoiceRepository;
  espeak: EspeakNgTts;
  engines(): CloningEngines;
  limits: CloningLimits;
  /** Creations at once on this node. */
  concurrency: ConcurrencyLimit;
  ffmpeg?: FfmpegRunner | false;
  clock?: () => number;
}

export class VoiceCloningService {
  constructor(private readonly deps: VoiceCloningDeps) {}

  async create(request: CloneRequest, signal?: AbortSignal): Promise<ClonedVoiceRow> {
    const { repo, limits } = this.deps;
    const count = await repo.countForAccount(request.accountId);
    if (count >= limits.maxClonesPerAccount) {
      throw new InvalidRequestError(`This account already has ${count} cloned voices, the most it may keep (${limits.maxClonesPerAccount}); delete one first`);
    }
    const release = await this.deps.concurrency.acquire(signal);
    try {
      const engines = this.deps.engines();
      let prepared: PreparedSample;
      try {
        prepared = await this.prepareSample(request, engines, signal);
      } finally {
        engines.release();
      }
      return await this.store(request, prepared);
    } finally {
      release();
    }
  }

  /** The clone `voiceId` of `accountId` as a voice synthesis can use; undefined when the account has none such. */
  async resolve(accountId: string, voiceId: string): Promise<ResolvedVoice | undefined> {
    if (!voiceId.startsWith('voice_')) return undefined;
    const row = await this.deps.repo.findForAccount(accountId, voiceId);
    if (!row) return undefined;
    if (row.status !== 'completed') {
      throw new InvalidRequestError(`Cloned voice ${voiceId} cannot speak: its status is ${row.status}${row.error ? ` (${row.error})` : ''}`);
    }
    const profile = parseJson<VoiceProfile>(row.profile);
    const language = row.language ?? 'en';
    if (row.engine === MATCHED_ENGINE) {
      const settings = parseJson<MatchedEspeakSettings>(row.engine_settings);
      if (!settings) return undefined;
      const voice = cloneVoice(row, language, profile, espeakSampleRate);
      return { voice, engine: matchedEngine(this.deps.espeak, settings, voice) };
    }
    throw new InvalidRequestError(`Cloned voice ${voiceId} needs engine ${row.engine}, which this server does not have`);
  }

  private async prepareSample(request: CloneRequest, engines: CloningEngines, signal?: AbortSignal): Promise<PreparedSample> {
    const { limits } = this.deps;
    const { vad } = engines;
    if (!vad) {
      // 503, not 400: the request is fine, this server is not set up for it yet.
      throw new OverloadedError(300, 'Voice cloning is unavailable: no voice activity detection model is installed (run `parley models pull silero-vad`)');
    }
    const audio = await decodeAudio(
      request.file.bytes,
      { contentType: request.file.contentType, filename: request.file.filename },
      { sampleRate: SAMPLE_RATE, maxSeconds: limits.maxSampleAudioSeconds, ffmpeg: this.deps.ffmpeg, signal },
    ).catch((err: unknown) => {
      if (err instanceof UnsupportedAudioError) {
        throw Object.assign(new InvalidRequestError('file is not audio that Parley can decode (wav, mp3, flac, ogg, webm, and more with ffmpeg)'), { cause: err });
      }
      throw err;
    });
    const atVadRate = await resampleForAnalysis(audio.samples, SAMPLE_RATE, vad.sampleRate);
    const spans = await vad.detect(atVadRate, { signal });
    const speech = spans.reduce((sum, s) => sum + (s.end - s.start), 0);
    const window = bestSpeechWindow(spans, limits.sampleSeconds);
    if (!window || window.speechSeconds < limits.minSpeechSeconds) {
      throw new InvalidRequestError(
        `file holds ${speech.toFixed(1)} s of speech; a voice clone needs at least ${limits.minSpeechSeconds} s of speech` +
          (speech >= limits.minSpeechSeconds ? ` within ${limits.sampleSeconds} s` : ''),
      );
    }
    const duration = audio.samples.length / SAMPLE_RATE;
    const start = Math.max(0, window.start - EDGE_PAD_SECONDS);
    const end = Math.min(duration, window.end + EDGE_PAD_SECONDS);
    const samples = audio.samples.slice(Math.floor(start * SAMPLE_RATE), Math.ceil(end * SAMPLE_RATE));
    const inWindow = clipSpans(spans, window.start, window.end).map((s) => ({ start: s.start - start, end: s.end - start }));
    if (signal?.aborted) throw new AbortedError();
    const profile = await measureVoiceProfile(samples, SAMPLE_RATE, inWindow, signal);
    if (!profile) throw new InvalidRequestError('file has too little voiced speech to measure a voice from');
    return { samples, profile };
  }

  /**
   * Stores the clone with its sample, then prepares its engine. From here on the work is bounded
   * and no longer tied to the client: a client that goes away still finds the clone completed.
   */
  private async store(request: CloneRequest, prepared: PreparedSample): Promise<ClonedVoiceRow> {
    const { repo } = this.deps;
    const id = newId('voice', 10);
    const language = request.language ?? 'en';
    await repo.insert(
      {
        id,
        account_id: request.accountId,
        display_name: request.displayName,
        accent: request.accent ?? '',
        tags: JSON.stringify(request.tags),
        model: request.model,
        status: 'processing',
        created_at: nowIso(this.deps.clock),
        reference_path: null,
        description: request.description ?? null,
        language,
        transcript: request.transcript ?? null,
        profile: JSON.stringify(prepared.profile),
      },
      { sampleRate: SAMPLE_RATE, pcm: encodeInt16(prepared.samples) },
    );
    try {
      const settings = await fitEspeakVoice(this.deps.espeak, prepared.profile, language);
      await repo.update(id, { status: 'completed', engine: MATCHED_ENGINE, engine_settings: JSON.stringify(settings) });
    } catch (err) {
      await repo.update(id, { status: 'failed', error: `the voice could not be prepared: ${(err as Error).message}` });
    }
    return (await repo.findForAccount(request.accountId, id))!;
  }
}

interface PreparedSample {
  /** The stored stretch, mono at SAMPLE_RATE. */
  samples: Float32Array;
  profile: VoiceProfile;
}

/** The Voice synthesis sees for a clone row. */
function cloneVoice(row: ClonedVoiceRow, language: string, profile: VoiceProfile | undefined, sampleRate: number): Voice {
  return {
    id: row.id,
    displayName: row.display_name,
    languages: [language],
    accent: row.accent,
    gender: profile?.genderClass === 'male' ? 'male' : profile ? 'female' : 'neutral',
    sampleRate,
    engine: row.engine ?? MATCHED_ENGINE,
    models: allModels,
  };
}

/** eSpeak speaking with a clone's fitted settings; `speed` scales the fitted rate. */
function matchedEngine(espeak: EspeakNgTts, settings: MatchedEspeakSettings, voice: Voice): TtsEngine {
  return {
    name: MATCHED_ENGINE,
    normalizesText: true,
    listVoices: () => [voice],
    synthesize: (_voice, text, options) =>
      espeak.speak(
        { voice: settings.voice, pitch: settings.pitch, range: settings.range, wordsPerMinute: settings.wordsPerMinute * options.speed },
        text,
        options,
      ),
    close: async () => undefined,
  };
}

function clipSpans(spans: TimeSpan[], from: number, to: number): TimeSpan[] {
  return spans.map((s) => ({ start: Math.max(s.start, from), end: Math.min(s.end, to) })).filter((s) => s.end > s.start);
}

function parseJson<T>(text: string | null | undefined): T | undefined {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}
