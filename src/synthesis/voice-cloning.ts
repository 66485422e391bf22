/**
 * The voice-cloning use case: a sample becomes a voice of the account that sent it.
 *
 * add_voice: decode (within the size and duration caps) → VAD → at least minSpeechSeconds of
 * speech or 400 → the stretch of at most sampleSeconds with the most speech is kept, as 16-bit
 * PCM in the database (every node can use it) → its profile is measured → the clone is stored as
 * `processing` (within the account's clone limit, counted and inserted as one step) and the
 * response goes out → the engine is prepared after the response → `completed`, or `failed` with
 * the reason (a write that meets a database outage is made again once the database answers, so the
 * clone does not stay `processing`). Everything up to storing is checked before anything is stored, so a bad sample
 * leaves nothing behind. The state lives in the database, so any node lists it; a creation whose
 * node stopped before it finished is marked failed by the next node that starts
 * (failInterrupted).
 *
 * Engines, best first:
 *  1. a zero-shot pack (ZipVoice, Pocket TTS) that speaks the clone's language: synthesis
 *     conditions on the stored sample itself. ZipVoice also needs what the sample says: the
 *     `transcript` field, else Parley's own transcription of the sample (injected as
 *     transcribeSample; it is the slow part of a creation, which is why creation finishes after
 *     the response);
 *  2. the built-in match (espeak-voice-match.ts): an eSpeak NG voice fitted to the profile.
 *
 * Synthesis reaches a clone through resolve(), which reads it for the requesting account only: a
 * clone of another account is as unknown as one that does not exist, and a deleted clone stops
 * speaking at once (nothing is cached).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { decodeAudio } from '../audio/decode.js';
import type { FfmpegRunner } from '../audio/ffmpeg.js';
import { decodeInt16, encodeInt16 } from '../audio/encode.js';
import type { ConcurrencyLimit } from '../concurrency/concurrency-limit.js';
import { espeakSampleRate, type EspeakNgTts } from '../engines/server/espeak-ng-tts.js';
import type { ZeroShotTts } from '../engines/server/sherpa-tts.js';
import type { TtsReference } from '../engines/sherpa-tasks.js';
import type { ModelGeneration, TimeSpan, TtsEngine, Voice, VoiceActivityDetector } from '../engines/types.js';
import { AbortedError, InvalidRequestError, OverloadedError, PackNotInstalledError, ParleyError, UnsupportedAudioError, VoiceCloneError } from '../errors.js';
import { DEFAULT_VAD_PACK, missingPacksMessage } from '../models/missing-packs.js';
import { DatabaseUnavailableError } from '../store/availability.js';
import { newId, nowIso } from '../store/ids.js';
import type { ClonedVoiceOutcome, ClonedVoiceRepository, ClonedVoiceRow } from '../store/cloned-voice-repository.js';
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

/** Engines one creation (or one resolve) uses, held until release(). */
export interface CloningEngines {
  vad?: VoiceActivityDetector;
  /** Loaded zero-shot packs, in the order of the models dir (the first that speaks a clone's language serves it). */
  zeroShot: ZeroShotTts[];
  release(): void;
}

/** What a clone made with a zero-shot pack keeps in engine_settings. */
interface ZeroShotSettings {
  pack: string;
  /** What the sample says (ZipVoice's referenceText). */
  referenceText?: string;
}

/** Transcribes a clone's sample (mono, `sampleRate`) in `language`; the text, or '' when nothing was heard. */
export type TranscribeSample = (samples: Float32Array, sampleRate: number, language: string, signal: AbortSignal) => Promise<string>;

/** A creation still `processing` this long after it began is taken to have lost its node. */
export const INTERRUPTED_AFTER_MS = 15 * 60_000;

/**
 * What a clone is made for: the route's model, or the `model` of POST /voice-cloning (tts-v3.1-pro:
 * the product's premium pool, spoken by tts-v3.1's engines here too).
 */
export type CloningModel = 'tts-large' | 'tts-v3.1' | 'tts-v3.1-pro';

export interface CloneRequest {
  accountId: string;
  model: CloningModel;
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
  /** Parley's own transcription, for a ZipVoice clone sent without a transcript. */
  transcribeSample?: TranscribeSample;
  /** Where failures of the work after the response are reported (the clone shows them as `failed`). */
  log?: { error(details: object, message: string): void; info(details: object, message: string): void };
  clock?: () => number;
}

export class VoiceCloningService {
  /** Creations finishing after their response; close() waits for them. */
  private readonly pending = new Set<Promise<void>>();
  /** Aborted by close(): work after the response stops and records `failed`. */
  private readonly closing = new AbortController();

  constructor(private readonly deps: VoiceCloningDeps) {}

  /**
   * Checks and stores the clone as `processing` and returns it; its engine is prepared after the
   * return. Throws InvalidRequestError for a bad sample or a full account.
   */
  async create(request: CloneRequest, signal?: AbortSignal): Promise<ClonedVoiceRow> {
    return (await this.begin(request, signal)).row;
  }

  /**
   * Like create(), but answers once the clone can speak: the stored clone, `completed`. A clone
   * that fails, or is not ready within `timeoutMs`, is removed and the call throws: the failure's
   * own 4xx when the sample is at fault, else VoiceCloneError (voice_clone_error, or
   * voice_clone_timeout when the time ran out); so is one whose client goes away.
   */
  async createReady(request: CloneRequest, timeoutMs: number, signal?: AbortSignal): Promise<ClonedVoiceRow> {
    const { row, settled, cancel } = await this.begin(request, signal);
    // The wait ends with the outcome, the time allowed, or the client going away.
    const stopWaiting = new AbortController();
    let result: SettledClone | undefined;
    try {
      const waitSignal = signal ? AbortSignal.any([signal, stopWaiting.signal]) : stopWaiting.signal;
      result = await Promise.race([settled, sleep(timeoutMs, undefined, { signal: waitSignal }).catch(() => undefined)]);
    } finally {
      stopWaiting.abort();
    }
    if (result?.outcome.status === 'completed') return { ...row, ...result.outcome } as ClonedVoiceRow;
    // Whatever ends the wait without a voice, the creation stops and nothing is kept, so a client that retries makes no second clone.
    if (!result) cancel();
    await this.remove(row);
    if (!result && signal?.aborted) throw new AbortedError();
    if (this.closing.signal.aborted) throw shuttingDown();
    if (!result) throw new VoiceCloneError('voice_clone_timeout', `The voice clone was not ready within ${timeoutMs / 1000} s; nothing was kept. Please try again.`);
    if (result.cause instanceof ParleyError && result.cause.status < 500) throw result.cause;
    throw new VoiceCloneError('voice_clone_error', result.outcome.error ?? 'the voice could not be prepared');
  }

  /** Checks and stores the clone as `processing`, and starts the work that prepares its engine. */
  private async begin(request: CloneRequest, signal?: AbortSignal): Promise<StartedClone> {
    const { repo, limits } = this.deps;
    // A quick refusal before the sample is read; the insert counts again, atomically.
    const count = await repo.countForAccount(request.accountId);
    if (count >= limits.maxClonesPerAccount) throw tooManyClones(count, limits.maxClonesPerAccount);
    if (this.closing.signal.aborted) throw shuttingDown();
    const release = await this.deps.concurrency.acquire(signal);
    let handedOff = false;
    try {
      const language = request.language ?? 'en';
      const engines = this.deps.engines();
      let prepared: PreparedSample;
      let zeroShot: ZeroShotTts | undefined;
      try {
        prepared = await this.prepareSample(request, engines, signal);
        zeroShot = engines.zeroShot.find((e) => e.languages.includes(language));
      } finally {
        engines.release();
      }
      const row = await this.store(request, prepared);
      const cancelled = new AbortController();
      const chosen = zeroShot && { name: zeroShot.name, pack: zeroShot.packId, needsText: zeroShot.needsReferenceText };
      // The slot is held until the engine is prepared, so the work after the response is bounded too.
      const work = this.finish({ row, request, prepared, zeroShot: chosen, cancelled: cancelled.signal }, release);
      handedOff = true;
      const tracked = work.then(() => undefined);
      this.pending.add(tracked);
      void tracked.finally(() => this.pending.delete(tracked));
      return { row, settled: work, cancel: () => cancelled.abort() };
    } finally {
      if (!handedOff) release();
    }
  }

  /** Removes a clone whose creation answered with an error; an outage leaves it `failed` (or to failInterrupted). */
  private async remove(row: ClonedVoiceRow): Promise<void> {
    await this.deps.repo.deleteForAccount(row.account_id, row.id).catch((err: unknown) => {
      this.deps.log?.error({ err, voiceId: row.id }, 'removing a voice clone whose creation failed');
    });
  }

  /** Stops work after responses (those clones record `failed`) and waits until every one has recorded its outcome. */
  async close(): Promise<void> {
    this.closing.abort();
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  /** Marks creations that lost their node (still `processing` after INTERRUPTED_AFTER_MS) as failed. */
  async failInterrupted(): Promise<number> {
    const before = nowIso(() => (this.deps.clock ?? Date.now)() - INTERRUPTED_AFTER_MS);
    return this.deps.repo.failInterrupted(before, 'creation was interrupted: the server creating the clone stopped before it finished');
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
    const engines = this.deps.engines();
    try {
      const zeroShot = engines.zeroShot.find((e) => e.name === row.engine);
      if (!zeroShot) throw new InvalidRequestError(`Cloned voice ${voiceId} needs engine ${row.engine}, which this server does not have`);
      const sample = await this.deps.repo.findSample(accountId, voiceId);
      if (!sample) return undefined;
      const settings = parseJson<ZeroShotSettings>(row.engine_settings);
      const reference: TtsReference = { samples: decodeInt16(sample.pcm), sampleRate: sample.sampleRate, ...(settings?.referenceText ? { text: settings.referenceText } : {}) };
      const voice = cloneVoice(row, language, profile, zeroShot.sampleRate);
      return { voice, engine: zeroShotEngine(zeroShot, reference, voice) };
    } finally {
      engines.release();
    }
  }

  private async prepareSample(request: CloneRequest, engines: CloningEngines, signal?: AbortSignal): Promise<PreparedSample> {
    const { limits } = this.deps;
    const { vad } = engines;
    if (!vad) {
      // Only an install fixes it: answered at once, as transcription answers a missing pack.
      const missing = [{ role: 'vad' as const, pack: DEFAULT_VAD_PACK }];
      throw new PackNotInstalledError(missingPacksMessage(missing, 'Voice cloning'), missing);
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

  /** Stores the clone, `processing`, with its sample: 400 when the account is full by now. */
  private async store(request: CloneRequest, prepared: PreparedSample): Promise<ClonedVoiceRow> {
    const { repo, limits } = this.deps;
    const row: ClonedVoiceRow = {
      id: newId('voice', 10),
      account_id: request.accountId,
      display_name: request.displayName,
      accent: request.accent ?? '',
      tags: JSON.stringify(request.tags),
      model: request.model,
      status: 'processing',
      created_at: nowIso(this.deps.clock),
      reference_path: null,
      description: request.description ?? null,
      language: request.language ?? 'en',
      transcript: request.transcript ?? null,
      engine: null,
      engine_settings: null,
      profile: JSON.stringify(prepared.profile),
      error: null,
    };
    const stored = await repo.insertWithinLimit(row, { sampleRate: SAMPLE_RATE, pcm: encodeInt16(prepared.samples) }, limits.maxClonesPerAccount);
    if (!stored) throw tooManyClones(limits.maxClonesPerAccount, limits.maxClonesPerAccount);
    return row;
  }

  /**
   * Prepares the clone's engine and records `completed` or `failed`. Runs after the response, no
   * longer tied to the client: a client that went away still finds its clone finished. `release`
   * frees the creation's slot once the engine work is done (before the outcome is written).
   */
  private async finish(creation: Creation, release: () => void): Promise<SettledClone> {
    let settled: SettledClone;
    try {
      settled = await this.prepareEngine(creation);
    } finally {
      release();
    }
    // What the database holds is what a client will find: a `completed` it refused is `failed`.
    const recorded = await this.recordOutcome(creation.row.id, settled.outcome);
    return recorded ? { ...settled, outcome: recorded } : settled;
  }

  /** The clone's engine and its settings, or `failed` with the reason (and the error that failed it); never throws. */
  private async prepareEngine({ row, request, prepared, zeroShot, cancelled }: Creation): Promise<SettledClone> {
    const signal = AbortSignal.any([this.closing.signal, cancelled]);
    const language = row.language ?? 'en';
    try {
      if (zeroShot) {
        let referenceText = request.transcript?.trim() || undefined;
        if (!referenceText && zeroShot.needsText) {
          if (!this.deps.transcribeSample) throw new InvalidRequestError(`${zeroShot.name} needs what the sample says: send it in the transcript field`);
          const heard = await this.deps.transcribeSample(prepared.samples, SAMPLE_RATE, language, signal).catch((err: unknown) => {
            // A server-side failure (inference restarting, 503) stays one: the client may simply try again.
            if (signal.aborted || !(err instanceof ParleyError) || err.status >= 500) throw err;
            throw new InvalidRequestError(`the sample could not be transcribed (${err.message}): send what it says in the transcript field`);
          });
          referenceText = heard.trim() || undefined;
          if (!referenceText) throw new InvalidRequestError('no words were recognised in the sample: send what it says in the transcript field');
        }
        const settings: ZeroShotSettings = { pack: zeroShot.pack, ...(referenceText ? { referenceText } : {}) };
        return { outcome: { status: 'completed', engine: zeroShot.name, engine_settings: JSON.stringify(settings), transcript: referenceText ?? null } };
      }
      const settings = await fitEspeakVoice(this.deps.espeak, prepared.profile, language);
      if (signal.aborted) throw new AbortedError();
      return { outcome: { status: 'completed', engine: MATCHED_ENGINE, engine_settings: JSON.stringify(settings) } };
    } catch (err) {
      // Parley's own errors say what went wrong in words a client can act on; anything else is logged, not shown.
      const reason = this.closing.signal.aborted
        ? 'the server shut down before the voice was ready'
        : cancelled.aborted
          ? 'its creation ran out of time'
          : err instanceof ParleyError
            ? err.message
            : 'an internal error (logged on the server)';
      // A sample the engines cannot use (a 4xx) is the client's to fix, not the operator's.
      if (err instanceof ParleyError && err.status < 500) this.deps.log?.info({ reason: err.message, voiceId: row.id }, 'voice clone creation failed');
      else this.deps.log?.error({ err, voiceId: row.id }, 'voice clone creation failed');
      return { outcome: { status: 'failed', error: `the voice could not be prepared: ${reason}` }, cause: err };
    }
  }

  /**
   * Writes the outcome. While the database is unavailable the write is retried, the wait doubling
   * up to OUTCOME_RETRY_MAX_DELAY_MS, for at most INTERRUPTED_AFTER_MS (from then on a starting
   * node takes the creation to be interrupted); at shutdown it is tried once more, not waited for.
   * A `completed` the database refuses for another reason is recorded as `failed`.
   */
  private async recordOutcome(id: string, outcome: ClonedVoiceOutcome): Promise<ClonedVoiceOutcome | undefined> {
    const { repo } = this.deps;
    const clock = this.deps.clock ?? Date.now;
    const started = clock();
    let delayMs = OUTCOME_RETRY_FIRST_DELAY_MS;
    for (let attempt = 1; ; attempt++) {
      try {
        await repo.update(id, outcome);
        if (attempt > 1) this.deps.log?.info({ voiceId: id, status: outcome.status, attempts: attempt, waitedMs: clock() - started }, 'voice clone outcome recorded once the database answered');
        return outcome;
      } catch (err) {
        if (!(err instanceof DatabaseUnavailableError)) {
          this.deps.log?.error({ err, voiceId: id }, 'recording a voice clone outcome failed');
          if (outcome.status === 'completed') return this.recordOutcome(id, { status: 'failed', error: 'the voice could not be prepared: an internal error (logged on the server)' });
          return undefined;
        }
        if (this.closing.signal.aborted || clock() - started + delayMs > INTERRUPTED_AFTER_MS) {
          this.deps.log?.error({ err, voiceId: id, status: outcome.status, attempts: attempt }, 'the outcome of a voice clone could not be recorded: the database stayed unavailable; the clone stays processing until a server starts after it is interrupted');
          return undefined;
        }
        if (attempt === 1) this.deps.log?.info({ voiceId: id, status: outcome.status }, 'voice clone outcome waits for the database');
        // Cut short at shutdown: the loop then makes its last try.
        await sleep(delayMs, undefined, { signal: this.closing.signal }).catch(() => undefined);
        delayMs = Math.min(OUTCOME_RETRY_MAX_DELAY_MS, delayMs * 2);
      }
    }
  }
}

/** First wait before writing an outcome again, ms. */
const OUTCOME_RETRY_FIRST_DELAY_MS = 250;
/** Longest wait between two writes of an outcome, ms. */
const OUTCOME_RETRY_MAX_DELAY_MS = 10_000;

/** What the work after a clone is stored needs: the clone, its sample, the zero-shot pack chosen (if any), and its cancellation. */
interface Creation {
  row: ClonedVoiceRow;
  request: CloneRequest;
  prepared: PreparedSample;
  zeroShot?: { name: string; pack: string; needsText: boolean };
  cancelled: AbortSignal;
}

/** A creation under way: its stored row, its outcome once recorded, and how to stop it. */
interface StartedClone {
  row: ClonedVoiceRow;
  settled: Promise<SettledClone>;
  cancel(): void;
}

/** How a creation ended: the outcome recorded, and for a failure the error behind it. */
interface SettledClone {
  outcome: ClonedVoiceOutcome;
  cause?: unknown;
}

const shuttingDown = () => new OverloadedError(5, 'The server is shutting down. Please try again later.');

const tooManyClones = (count: number, limit: number) =>
  new InvalidRequestError(`This account already has ${count} cloned voices, the most it may keep (${limit}); delete one first`);

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

/** A zero-shot pack speaking in the voice of a clone's sample. */
function zeroShotEngine(tts: ZeroShotTts, reference: TtsReference, voice: Voice): TtsEngine {
  return {
    name: tts.name,
    listVoices: () => [voice],
    synthesize: (_voice, text, options) => tts.synthesize(reference, text, options),
    ...(tts.hold ? { hold: () => tts.hold!() } : {}),
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
