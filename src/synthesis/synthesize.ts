/**
 * The synthesis use case: text → sentences → engine PCM → resampled → encoded bytes.
 * Engine-agnostic: it reaches engines only through the voice registry and `TtsEngine`.
 * Everything a client can get wrong is checked in `prepare()`, before any byte is sent.
 */
import type { OutputFormat } from '../audio/pcm.js';
import { concatBytes } from '../audio/encode.js';
import { yieldToEventLoop } from '../concurrency/event-loop.js';
import { openLocalPipeline, PIPELINE_SLICE, type AudioPipeline, type EncodedFormat, type PipelineOptions, type PipelineOutput } from '../audio/pipeline.js';
import type { EngineWordMark, ModelGeneration, TtsEngine, Voice } from '../engines/types.js';
import { AbortedError, EngineError, InvalidRequestError, ParleyError } from '../errors.js';
import { listCatalogue } from '../models/catalogue.js';
import { baseLanguage, modelLanguages } from './languages.js';
import type { PronunciationDictCache } from './pronunciation-dict-cache.js';
import { outputUrgency, SynthesisStream, type OutputUrgency, type SynthesisScheduler } from './scheduler.js';
import { synthesizeAhead } from './sentence-lookahead.js';
import { detectLanguage } from './text/detect-language.js';
import { NORMALIZED_LANGUAGES } from './text/normalize.js';
import { prepareText } from './text/prepare.js';
import type { ResolvedVoice, VoiceRegistry } from './voice-registry.js';
import { loudnessFrameSamples, WordTimer, type TimedWord } from './word-timing.js';

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
 * Whether the request's `numberLanguage` is honoured: absent (undefined), "auto" or the synthesis
 * language itself, or one whose numbers the normaliser spells. Else numbers are read in the
 * synthesis language, and the answer says so.
 */
export function numberLanguageApplied(request: SynthesisRequest): boolean | undefined {
  const { numberLanguage } = request;
  if (numberLanguage === undefined) return undefined;
  return numberLanguage === 'auto' || numberLanguage === request.language || NORMALIZED_LANGUAGES.includes(baseLanguage(numberLanguage));
}

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
  /** The language numeric content is read in ('auto' or absent: the synthesis language). */
  numberLanguage?: string;
  /** Read digit-flanked math operators as words. */
  mathNotation?: boolean;
  /**
   * The service's language routing (its product models): a catalogue voice that does not speak the
   * language hands the text to the installed voice most like it that does, and "auto" detects
   * among `detectAmong`. Absent: the voice must speak the language.
   */
  routing?: { detectAmong: readonly string[] };
}

/** A request whose voice, language and dictionaries are checked; its text is not yet. */
export interface ResolvedSynthesis {
  request: SynthesisRequest;
  voice: Voice;
  engine: TtsEngine;
  voiceLanguages: string[];
  /** With request.routing and a catalogue voice: the languages "auto" may detect (the voice's, and the route's that some installed voice speaks). */
  routedLanguages?: string[];
  dicts: Awaited<ReturnType<PronunciationDictCache['load']>>['found'];
}

export interface PreparedSynthesis {
  request: SynthesisRequest;
  /** The voice that speaks: the request's, or the one its language was routed to. */
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

/** What a request sent in parts gives, in order: its bytes as they are encoded, and after each part's audio (when asked) the times of its words. */
export type SpokenPart = { bytes: Uint8Array } | { words: TimedWord[] };

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
      /** Where resampling and encoding run (output-workers.ts); without it, on the event loop. */
      output?: {
        /** `urgency`: how soon the pipeline's next call is needed, so that first audio goes before later pieces. */
        open(options: PipelineOptions, urgency?: () => OutputUrgency): Promise<AudioPipeline>;
        warmUp(): Promise<string[]>;
        close(): Promise<void>;
      };
    },
  ) {
    this.limits = { ...defaultLimits, ...deps.limits };
  }

  /** This service without its observer, sharing everything else (scheduler, output workers): for work no client asked for, such as the warm-up. */
  unobserved(): SynthesisService {
    return new SynthesisService({ ...this.deps, observer: undefined });
  }

  /** Runs every output encoder once in each output worker, so the first response of a format is not the one to compile it. */
  async warmUp(): Promise<string[]> {
    return (await this.deps.output?.warmUp()) ?? [];
  }

  /** Stops the output workers (after the last response). */
  async close(): Promise<void> {
    await this.deps.output?.close();
  }

  async prepare(request: SynthesisRequest): Promise<PreparedSynthesis> {
    return this.prepareText(await this.resolve(request), request.text);
  }

  /** Checks what does not depend on the text: the voice (a catalogue voice, else a clone of the account), the language, the dictionaries. */
  async resolve(request: SynthesisRequest): Promise<ResolvedSynthesis> {
    const catalogued = this.deps.voices.find(request.model, request.voiceId);
    const resolved = catalogued ?? (await this.deps.accountVoices?.resolve(request.accountId, request.voiceId));
    if (!resolved) {
      const listed = this.deps.voiceListOf ? ` (see ${this.deps.voiceListOf(request.model)})` : '';
      throw new InvalidRequestError(`voice_id "${request.voiceId}" is not a voice of ${request.model}${listed}`);
    }
    const { voice, engine } = resolved;
    const voiceLanguages = [...new Set(voice.languages.map(baseLanguage))];

    // Clones are not routed: they speak their own language, whatever the request names.
    const routes = request.routing !== undefined && catalogued !== undefined;
    if (request.language !== 'auto' && !voiceLanguages.includes(request.language)) {
      if (routes) this.speakerOf(request, voice, request.language);
      else if (!request.routing) {
        throw new InvalidRequestError(
          `language "${request.language}" cannot be spoken by voice "${voice.id}", which speaks ${voiceLanguages.join(', ')}`,
        );
      }
    }
    const speakable = (language: string) => this.deps.voices.speakerOf(request.model, language, voice) !== undefined;
    // The voice's own languages are always among those "auto" may find.
    const routedLanguages = routes ? [...new Set([...voiceLanguages, ...request.routing!.detectAmong.filter(speakable)])] : undefined;

    const { found, missing } = await this.deps.dicts.load(request.accountId, request.pronunciationDicts);
    if (missing.length) throw new InvalidRequestError(`pronunciation_dicts has unknown id(s): ${missing.join(', ')}`);
    return { request, voice, engine, voiceLanguages, ...(routedLanguages ? { routedLanguages } : {}), dicts: found };
  }

  /** The installed voice that speaks `language` for a routed request: `voice` itself, else the one most like it; an InvalidRequestError naming what would speak it when none does. */
  private speakerOf(request: SynthesisRequest, voice: Voice, language: string): ResolvedVoice {
    const speaker = this.deps.voices.speakerOf(request.model, language, voice);
    if (speaker) return speaker;
    const packs = listCatalogue()
      .filter((entry) => entry.kind.startsWith('tts-') && entry.models.includes(request.model) && entry.languages.map(baseLanguage).includes(language))
      .map((entry) => entry.id);
    const would = packs.length ? `the model pack ${packs.join(' or ')} would (parley models pull <id>)` : `an eSpeak NG build with a "${language}" voice would`;
    throw new InvalidRequestError(`language "${language}" cannot be spoken: no installed voice of ${request.model} speaks it; ${would}`);
  }

  /** Splits `text` (the request's, or one piece of it) into sentences for the resolved voice. */
  prepareText(resolved: ResolvedSynthesis, text: string, stream?: SynthesisStream): PreparedSynthesis {
    const { request, voiceLanguages, routedLanguages } = resolved;
    let { voice, engine } = resolved;
    const allowed = modelLanguages[request.model].filter((l) => voiceLanguages.includes(l));
    let language = request.language;
    if (routedLanguages) {
      // Routed: "auto" reads the text's language among all the route's, and another voice speaks it when this one cannot.
      if (language === 'auto') language = detectLanguage(text, routedLanguages);
      ({ voice, engine } = this.speakerOf(request, voice, language));
    } else if (request.routing && language !== 'auto' && !voiceLanguages.includes(language)) {
      // A clone asked for a language it does not speak says the text in its own.
      language = voiceLanguages[0] ?? 'auto';
    }
    const prepared = prepareText(text, {
      language,
      // Detection only chooses among what this voice can say; a voice speaks its own language otherwise.
      allowedLanguages: allowed.length ? allowed : voiceLanguages,
      dicts: resolved.dicts,
      normalize: !engine.normalizesText,
      maxChars: this.limits.maxPreparedTextChars,
      numberLanguage: request.numberLanguage,
      mathNotation: request.mathNotation,
    });
    if (prepared.sentences.length === 0) throw new InvalidRequestError('text must contain something to say');
    return { request, voice, engine, language: prepared.language, sentences: prepared.sentences, stream };
  }

  /**
   * Mono PCM at the requested rate as the engine produces it (the next sentence is synthesised
   * while this one is processed). Throws OutputTooLongError, and stops the engine, before it would
   * pass limits.maxOutputSeconds.
   */
  async *pcm(prepared: PreparedSynthesis, signal: AbortSignal, stats?: SynthesisStats, onWords?: (words: EngineWordMark[]) => void): AsyncGenerator<Float32Array> {
    const stream = prepared.stream ?? new SynthesisStream();
    const pipeline = await this.openPipeline({ toRate: prepared.request.sampleRate }, () => stream, true);
    try {
      for await (const out of this.process({ ...prepared, stream }, pipeline, signal, stats, true, onWords)) if (out.pcm?.length) yield out.pcm;
    } finally {
      pipeline.close();
    }
  }

  /** A pipeline for the output of `streamOf()` (`playing`: a listener plays it as it comes). */
  private openPipeline(options: PipelineOptions, streamOf: () => SynthesisStream, playing: boolean): Promise<AudioPipeline> {
    const urgentSlack = this.deps.scheduler?.urgentSlackSeconds;
    return this.deps.output ? this.deps.output.open(options, () => outputUrgency(streamOf(), playing, urgentSlack)) : openLocalPipeline(options);
  }

  /**
   * One prepared piece through `pipeline` (begun here, flushed at its end): its outputs as they
   * come. `playing`: a listener plays the audio as it comes (a stream, not a whole file), so the
   * scheduler keeps this stream ahead of its playback. `onWords`: once the piece is done, where the
   * engine started each word of `prepared.sentences.join(' ')`, in seconds from the piece's first
   * audio; called only when the engine reported every sentence's words.
   */
  private async *process(
    prepared: PreparedSynthesis,
    pipeline: AudioPipeline,
    signal: AbortSignal,
    stats: SynthesisStats | undefined,
    playing: boolean,
    onWords?: (words: EngineWordMark[]) => void,
  ): AsyncGenerator<PipelineOutput> {
    const { voice, engine, request } = prepared;
    const startedAt = performance.now();
    const observer = this.deps.observer;
    let samplesHere = 0;
    // A model reload during this synthesis must not close its engine under it.
    const release = engine.hold?.();
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
    // Each sentence's engine samples and word marks, for onWords.
    const sentenceSamples = prepared.sentences.map(() => 0);
    const sentenceMarks: (EngineWordMark[] | undefined)[] = [];
    const speak = async function* (sentence: string, stop: AbortSignal, index: number) {
      const marked = onWords ? { onWords: (words: EngineWordMark[]) => void (sentenceMarks[index] = words) } : {};
      for await (const piece of engine.synthesize(voice, sentence, { speed: request.speed, language: prepared.language, consistency: request.consistency, signal: stop, ...marked })) {
        sentenceSamples[index]! += piece.length;
        yield piece;
      }
    };
    const audio = synthesizeAhead(
      prepared.sentences,
      scheduler
        ? async function* scheduled(sentence, stop, index) {
            const releaseSlot = await scheduler.acquire(engine, stream, stop);
            try {
              yield* speak(sentence, stop, index);
            } finally {
              releaseSlot();
            }
          }
        : speak,
      signal,
    );
    // On the event loop, pieces go in slices that keep the first bytes from waiting for the whole
    // piece and let other requests run between them; output workers take them whole.
    const slice = pipeline.inThread ? PIPELINE_SLICE : Infinity;
    // The first sentence asks for its engine slot now, while the pipeline gets ready (in an output
    // worker that is a round trip, which must not delay this stream's place in the scheduler).
    let upcoming: Promise<IteratorResult<Float32Array>> | undefined = audio.next();
    upcoming.catch(() => {}); // awaited below, or dropped when begin fails
    let first = true;
    const emitted = (out: PipelineOutput) => {
      count(out.samples);
      if (observer && out.samples && samplesHere === 0) observer.firstChunk(request.model, engine.name, (performance.now() - startedAt) / 1000);
      samplesHere += out.samples;
      if (playing) stream.played(out.samples / request.sampleRate);
      return out.samples > 0 || (out.bytes?.length ?? 0) > 0;
    };
    try {
      await pipeline.begin(voice.sampleRate);
      for (;;) {
        let next: IteratorResult<Float32Array>;
        const pending = upcoming ?? audio.next();
        upcoming = undefined;
        try {
          next = await pending;
        } catch (err) {
          if (err instanceof AbortedError || signal.aborted) throw new AbortedError();
          if (err instanceof ParleyError) throw err;
          throw new EngineError(`Voice ${voice.id} failed: ${(err as Error).message}`);
        }
        if (next.done) break;
        const piece = next.value;
        for (let at = 0; at < piece.length; at += slice) {
          if (!first && pipeline.inThread) await yieldToEventLoop();
          first = false;
          if (signal.aborted) throw new AbortedError();
          const out = await pipeline.push(slice >= piece.length ? piece : piece.subarray(at, at + slice));
          if (emitted(out)) yield out;
        }
      }
      const tail = await pipeline.flush();
      if (emitted(tail)) yield tail;
      if (onWords && prepared.sentences.every((_, i) => sentenceMarks[i])) onWords(placeMarks(prepared.sentences, sentenceSamples, sentenceMarks as EngineWordMark[][], voice.sampleRate));
    } finally {
      await audio.return(undefined);
      release?.();
      if (observer && samplesHere) observer.audioProduced(request.model, engine.name, samplesHere / request.sampleRate);
    }
  }

  /**
   * The requested output format as a byte stream: header first for wav. `format` overrides the
   * request's (OpenAI's speech API also offers Ogg Opus and FLAC); `tempo` changes the speed
   * beyond what the engine does (OpenAI's speeds), without changing the pitch.
   */
  async *encodedStream(
    prepared: PreparedSynthesis,
    signal: AbortSignal,
    stats?: SynthesisStats,
    format: EncodedFormat = prepared.request.outputFormat,
    tempo = 1,
  ): AsyncGenerator<Uint8Array> {
    for await (const part of this.spokenPieces(prepared.request, [prepared], signal, stats, { format, tempo })) if ('bytes' in part) yield part.bytes;
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
    format: EncodedFormat = request.outputFormat,
  ): AsyncGenerator<Uint8Array> {
    for await (const part of this.spokenPieces(request, pieces, signal, stats, { format })) if ('bytes' in part) yield part.bytes;
  }

  /**
   * Text arriving in parts (a socket's request: each part spoken as it comes) as one continuous
   * byte stream of the request's format, every part one stream to the scheduler; with
   * `wordTimestamps`, each part's word times follow its audio. Throws InvalidRequestError when the
   * parts end without any text.
   */
  async *spokenParts(
    resolved: ResolvedSynthesis,
    texts: AsyncIterable<string>,
    signal: AbortSignal,
    stats: SynthesisStats,
    options: { wordTimestamps: boolean },
  ): AsyncGenerator<SpokenPart> {
    const stream = new SynthesisStream();
    const prepare = (text: string) => this.prepareText(resolved, text, stream);
    const pieces = async function* () {
      let count = 0;
      for await (const text of texts) {
        count++;
        yield prepare(text);
      }
      if (count === 0) throw new InvalidRequestError('text must contain something to say');
    };
    yield* this.spokenPieces(resolved.request, pieces(), signal, stats, options);
  }

  /**
   * The pieces through one encoding pipeline. Word times are measured beside the encoder (the
   * pipeline reports each frame's loudness), so the samples themselves never come back.
   */
  private async *spokenPieces(
    request: SynthesisRequest,
    pieces: Iterable<PreparedSynthesis> | AsyncIterable<PreparedSynthesis>,
    signal: AbortSignal,
    stats: SynthesisStats = { samples: 0 },
    options: { format?: EncodedFormat; wordTimestamps?: boolean; tempo?: number },
  ): AsyncGenerator<SpokenPart> {
    const rate = request.sampleRate;
    const loudnessFrame = options.wordTimestamps ? { loudnessFrame: loudnessFrameSamples(rate) } : {};
    const tempo = options.tempo !== undefined && options.tempo !== 1 ? { tempo: options.tempo } : {};
    // The pieces are one stream to the scheduler unless they name theirs.
    let stream = new SynthesisStream();
    const pipeline = await this.openPipeline({ toRate: rate, encode: { format: options.format ?? request.outputFormat }, ...loudnessFrame, ...tempo }, () => stream, true);
    try {
      for await (const prepared of pieces) {
        stream = prepared.stream ?? stream;
        const timer = options.wordTimestamps ? new WordTimer(prepared.sentences.join(' '), stats.samples / rate, rate) : undefined;
        for await (const out of this.process({ ...prepared, stream }, pipeline, signal, stats, true, timer && ((marks) => timer.engineMarks(marks)))) {
          timer?.observeLoudness(out.loudness ?? [], out.samples);
          if (out.bytes?.length) yield { bytes: out.bytes };
        }
        if (timer) yield { words: timer.words() };
      }
      // With a tempo change, the end holds the stretched audio's tail.
      const last = await pipeline.end();
      stats.samples += last.samples;
      if (last.bytes?.length) yield { bytes: last.bytes };
    } finally {
      pipeline.close();
    }
  }

  /** The whole file of /get_speech, encoded while the engine still speaks. */
  async wholeFile(prepared: PreparedSynthesis, options: { wavHeader: boolean }, signal: AbortSignal): Promise<SpeechFile> {
    const rate = prepared.request.sampleRate;
    const stream = prepared.stream ?? new SynthesisStream();
    const pipeline = await this.openPipeline({ toRate: rate, encode: { format: prepared.request.outputFormat, file: options } }, () => stream, false);
    const stats: SynthesisStats = { samples: 0 };
    const parts: Uint8Array[] = [];
    try {
      for await (const out of this.process({ ...prepared, stream }, pipeline, signal, stats, false)) if (out.bytes?.length) parts.push(out.bytes);
      const last = (await pipeline.end()).bytes;
      if (last?.length) parts.push(last);
    } finally {
      pipeline.close();
    }
    // mp3 may be encoded at the nearest MPEG rate: report the rate the bytes really have.
    return { bytes: concatBytes(parts), contentType: pipeline.info.contentType, sampleRate: pipeline.info.sampleRate, durationSeconds: stats.samples / rate };
  }
}

/**
 * Word marks of each sentence, made relative to the sentences joined by one space and to their
 * audio one after another (a sentence's audio starts where the previous one's ends).
 */
function placeMarks(sentences: readonly string[], samples: readonly number[], marks: readonly EngineWordMark[][], sampleRate: number): EngineWordMark[] {
  const placed: EngineWordMark[] = [];
  let textAt = 0;
  let audioAt = 0;
  for (const [i, sentence] of sentences.entries()) {
    for (const mark of marks[i]!) placed.push({ start: textAt + mark.start, length: mark.length, seconds: audioAt + mark.seconds });
    textAt += sentence.length + 1;
    audioAt += samples[i]! / sampleRate;
  }
  return placed;
}
