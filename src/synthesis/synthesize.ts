/**
 * The synthesis use case: text → sentences → engine PCM → resampled → encoded bytes.
 * Engine-agnostic: it reaches engines only through the voice registry and `TtsEngine`.
 * Everything a client can get wrong is checked in `prepare()`, before any byte is sent.
 */
import type { OutputFormat } from '../audio/pcm.js';
import { concatBytes, createEncoder, createFileEncoder } from '../audio/encode.js';
import { yieldToEventLoop } from '../concurrency/event-loop.js';
import { createStreamingResampler } from '../audio/resample.js';
import { encodeWith } from '../audio/stream-encode.js';
import type { ModelGeneration, TtsEngine, Voice } from '../engines/types.js';
import { AbortedError, EngineError, InvalidRequestError, ParleyError } from '../errors.js';
import { baseLanguage, modelLanguages } from './languages.js';
import type { PronunciationDictCache } from './pronunciation-dict-cache.js';
import { SynthesisStream, type SynthesisScheduler } from './scheduler.js';
import { synthesizeAhead } from './sentence-lookahead.js';
import { prepareText } from './text/prepare.js';
import type { ResolvedVoice, VoiceRegistry } from './voice-registry.js';

/** What metrics learn from synthesis; implemented outside the use case. */
export interface SynthesisObserver {
  /** Seconds from the start of a synthesis (or of one piece of a stream) to its first audio. */
  firstChunk(model: string, engine: string, seconds: number): void;
  audioProduced(model: string, engine: string, seconds: number): void;
}

/** Voices private to an account (cloned voices), looked up when the catalogue has no such id. */
export interface AccountVoices {
  resolve(accountId: string, voiceId: string): Promise<ResolvedVoice | undefined>;
}

/**
 * Engine samples resampled and encoded at a time: at 22.05 kHz about 0.19 s of audio, ~0.5 ms of
 * resampling and ~0.5 ms of mp3 encoding, so the first bytes leave that soon after the engine's
 * first piece, and the event loop is never held longer than that.
 */
const RESAMPLE_SLICE = 4096;

export interface SynthesisRequest {
  accountId: string;
  model: ModelGeneration;
  text: string;
  voiceId: string;
  /** Output rate in Hz (already defaulted and range-checked by the schema). */
  sampleRate: number;
  speed: number;
  /** 'auto' or an ISO 639-1 code the model allows. */
  language: string;
  outputFormat: OutputFormat;
  consistency?: number;
  pronunciationDicts: string[];
}

/** A request whose voice, language and dictionaries are checked; its text is not yet. */
export interface ResolvedSynthesis {
  request: SynthesisRequest;
  voice: Voice;
  engine: TtsEngine;
  voiceLanguages: string[];
  dicts: Awaited<ReturnType<PronunciationDictCache['load']>>['found'];
}

export interface PreparedSynthesis {
  request: SynthesisRequest;
  voice: Voice;
  engine: TtsEngine;
  language: string;
  sentences: string[];
  /** Pieces of one stream share this, so that only the stream's first piece is a first piece to the scheduler. */
  stream?: SynthesisStream;
}

/** Counts filled in while a stream runs (for the SSE completion event). */
export interface SynthesisStats {
  /** Samples produced at the output rate. */
  samples: number;
}

export interface SpeechFile {
  bytes: Uint8Array;
  contentType: string;
  sampleRate: number;
  durationSeconds: number;
}

export interface SynthesisLimits {
  /** Longest text after dictionaries and normalisation. */
  maxPreparedTextChars: number;
  /** Longest audio of one request, in seconds. */
  maxOutputSeconds: number;
}

const defaultLimits: SynthesisLimits = { maxPreparedTextChars: 20_000, maxOutputSeconds: 1_800 };

/** The request would produce more audio than limits.maxOutputSeconds allows. */
export class OutputTooLongError extends InvalidRequestError {
  constructor(readonly limitSeconds: number) {
    super(`the audio would be longer than the limit of ${limitSeconds} seconds per request; send less text or a higher speed`);
  }
}

export class SynthesisService {
  private readonly limits: SynthesisLimits;

  constructor(
    private readonly deps: {
      voices: VoiceRegistry;
      dicts: PronunciationDictCache;
      limits?: Partial<SynthesisLimits>;
      /** Orders pieces of concurrent streams on each engine; without it pieces go straight to the engine. */
      scheduler?: SynthesisScheduler;
      accountVoices?: AccountVoices;
      observer?: SynthesisObserver;
      /** Where a client can list the voices of a model, named in the error for an unknown voice. */
      voiceListOf?: (model: string) => string;
    },
  ) {
    this.limits = { ...defaultLimits, ...deps.limits };
  }

  async prepare(request: SynthesisRequest): Promise<PreparedSynthesis> {
    return this.prepareText(await this.resolve(request), request.text);
  }

  /** Checks what does not depend on the text: the voice (a catalogue voice, else a clone of the account), the language, the dictionaries. */
  async resolve(request: SynthesisRequest): Promise<ResolvedSynthesis> {
    const resolved =
      this.deps.voices.find(request.model, request.voiceId) ?? (await this.deps.accountVoices?.resolve(request.accountId, request.voiceId));
    if (!resolved) {
      const listed = this.deps.voiceListOf ? ` (see ${this.deps.voiceListOf(request.model)})` : '';
      throw new InvalidRequestError(`voice_id "${request.voiceId}" is not a voice of ${request.model}${listed}`);
    }
    const { voice, engine } = resolved;
    const voiceLanguages = [...new Set(voice.languages.map(baseLanguage))];

    if (request.language !== 'auto' && !voiceLanguages.includes(request.language)) {
      throw new InvalidRequestError(
        `language "${request.language}" cannot be spoken by voice "${voice.id}", which speaks ${voiceLanguages.join(', ')}`,
      );
    }

    const { found, missing } = await this.deps.dicts.load(request.accountId, request.pronunciationDicts);
    if (missing.length) throw new InvalidRequestError(`pronunciation_dicts has unknown id(s): ${missing.join(', ')}`);
    return { request, voice, engine, voiceLanguages, dicts: found };
  }

  /** Splits `text` (the request's, or one piece of it) into sentences for the resolved voice. */
  prepareText(resolved: ResolvedSynthesis, text: string, stream?: SynthesisStream): PreparedSynthesis {
    const { request, voice, engine, voiceLanguages } = resolved;
    const allowed = modelLanguages[request.model].filter((l) => voiceLanguages.includes(l));
    const prepared = prepareText(text, {
      language: request.language,
      // Detection only chooses among what this voice can say; a voice speaks its own language otherwise.
      allowedLanguages: allowed.length ? allowed : voiceLanguages,
      dicts: resolved.dicts,
      normalize: !engine.normalizesText,
      maxChars: this.limits.maxPreparedTextChars,
    });
    if (prepared.sentences.length === 0) throw new InvalidRequestError('text must contain something to say');
    return { request, voice, engine, language: prepared.language, sentences: prepared.sentences, stream };
  }

  /**
   * Mono PCM at the requested rate, in slices of at most RESAMPLE_SLICE engine samples, as the
   * engine produces it (the next sentence is synthesised while this one is processed). Throws
   * OutputTooLongError, and stops the engine, before it would pass limits.maxOutputSeconds.
   */
  async *pcm(prepared: PreparedSynthesis, signal: AbortSignal, stats?: SynthesisStats): AsyncGenerator<Float32Array> {
    const { voice, engine, request } = prepared;
    const startedAt = performance.now();
    const observer = this.deps.observer;
    let samplesHere = 0;
    // A model reload during this synthesis must not close its engine under it.
    const release = engine.hold?.();
    const resampler = await createStreamingResampler(voice.sampleRate, request.sampleRate).catch((err: unknown) => {
      release?.();
      throw err;
    });
    const maxSamples = Math.floor(this.limits.maxOutputSeconds * request.sampleRate);
    // A request sent in pieces counts every piece's audio against the limit.
    let produced = stats?.samples ?? 0;
    const count = (samples: number) => {
      produced += samples;
      if (produced > maxSamples) throw new OutputTooLongError(this.limits.maxOutputSeconds);
      if (stats) stats.samples += samples;
    };
    const { scheduler } = this.deps;
    const stream = prepared.stream ?? new SynthesisStream();
    const speak = (sentence: string, stop: AbortSignal) =>
      engine.synthesize(voice, sentence, { speed: request.speed, language: prepared.language, consistency: request.consistency, signal: stop });
    const audio = synthesizeAhead(
      prepared.sentences,
      scheduler
        ? async function* scheduled(sentence, stop) {
            const releaseSlot = await scheduler.acquire(engine, stream, stop);
            try {
              yield* speak(sentence, stop);
            } finally {
              releaseSlot();
            }
          }
        : speak,
      signal,
    );
    let flushed = false;
    let first = true;
    try {
      for (;;) {
        let next: IteratorResult<Float32Array>;
        try {
          next = await audio.next();
        } catch (err) {
          if (err instanceof AbortedError || signal.aborted) throw new AbortedError();
          if (err instanceof ParleyError) throw err;
          throw new EngineError(`Voice ${voice.id} failed: ${(err as Error).message}`);
        }
        if (next.done) break;
        // Engines hand over up to a sentence at a time. Slices keep the first bytes from waiting
        // for the whole piece, and let other requests run between them (resampling and mp3
        // encoding run on this thread).
        const piece = next.value;
        for (let at = 0; at < piece.length; at += RESAMPLE_SLICE) {
          if (!first) await yieldToEventLoop();
          first = false;
          if (signal.aborted) throw new AbortedError();
          const out = resampler.process(piece.subarray(at, at + RESAMPLE_SLICE));
          count(out.length);
          if (observer && out.length && samplesHere === 0) observer.firstChunk(request.model, engine.name, (performance.now() - startedAt) / 1000);
          samplesHere += out.length;
          if (out.length) yield out;
        }
      }
      const tail = resampler.flush();
      flushed = true;
      count(tail.length);
      samplesHere += tail.length;
      if (tail.length) yield tail;
    } finally {
      // An abort or a consumer that stops early leaves the native filter state to free.
      if (!flushed) resampler.dispose();
      await audio.return(undefined);
      release?.();
      if (observer && samplesHere) observer.audioProduced(request.model, engine.name, samplesHere / request.sampleRate);
    }
  }

  /** The requested output format as a byte stream: header first for wav. */
  encodedStream(prepared: PreparedSynthesis, signal: AbortSignal, stats?: SynthesisStats): AsyncGenerator<Uint8Array> {
    return this.encodedPieces(prepared.request, [prepared], signal, stats);
  }

  /**
   * Several prepared pieces of one request (text that arrived in parts) as one continuous byte
   * stream of the request's format: one encoder, so one wav header and unbroken mp3 frames.
   */
  async *encodedPieces(
    request: SynthesisRequest,
    pieces: Iterable<PreparedSynthesis> | AsyncIterable<PreparedSynthesis>,
    signal: AbortSignal,
    stats?: SynthesisStats,
  ): AsyncGenerator<Uint8Array> {
    const encoder = await createEncoder(request.outputFormat, request.sampleRate, 'stream');
    const pcm = async function* (this: SynthesisService) {
      for await (const prepared of pieces) yield* this.pcm(prepared, signal, stats);
    };
    yield* encodeWith(encoder, pcm.call(this));
  }

  /** The whole file of /get_speech, encoded while the engine still speaks. */
  async wholeFile(prepared: PreparedSynthesis, options: { wavHeader: boolean }, signal: AbortSignal): Promise<SpeechFile> {
    const rate = prepared.request.sampleRate;
    const encoder = await createFileEncoder(prepared.request.outputFormat, rate, options);
    const stats: SynthesisStats = { samples: 0 };
    const parts: Uint8Array[] = [];
    try {
      for await (const samples of this.pcm(prepared, signal, stats)) parts.push(encoder.push(samples));
    } catch (err) {
      encoder.abandon();
      throw err;
    }
    parts.push(encoder.end());
    // mp3 may be encoded at the nearest MPEG rate: report the rate the bytes really have.
    return { bytes: concatBytes(parts), contentType: encoder.contentType, sampleRate: encoder.sampleRate, durationSeconds: stats.samples / rate };
  }
}
