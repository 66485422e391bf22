/**
 * Streaming transcription of one socket: audio in as it is spoken, partial and final transcripts
 * out, with any installed recogniser.
 *
 * - Every `tickSeconds` of new audio the VAD scans that audio (plus a little overlap). Speech opens
 *   an utterance; `eouSeconds` without speech closes it with a final. An utterance reaching
 *   `maxUtteranceSeconds` is finalised where it is and the next one goes on from there.
 * - A streaming recogniser (one with openStream) gets a live stream per utterance: each piece of
 *   audio is fed to it once as it arrives, a partial is the stream's hypothesis after it, and the
 *   final is the stream finished (its last words decoded): nothing is decoded twice.
 * - Any other recogniser (or a streaming one that cannot open a stream now: too many open, or its
 *   process died) re-decodes the open utterance at most every `partialIntervalSeconds` of audio
 *   for a partial, and once more for the final.
 * - With `maxWords`, an utterance's words go out in finals of at most that many: once more than
 *   `maxWords` words of it have been heard (the next word begun, so the last one is whole), the
 *   first `maxWords` are sent as a final and later messages of the utterance carry only the words
 *   after them; its last final is split the same way. The recogniser keeps its stream and context.
 * Work is bounded: one engine step at a time per session (audio that comes meanwhile is taken by
 * the next step, so a loaded engine gets fewer, larger pieces), and the audio held is the open
 * utterance plus a second.
 *
 * Times are seconds from the start of the stream. Only audio at the VAD's rate (16 kHz) is held.
 */
import { HeldAudio } from '../audio/held-audio.js';
import { createStreamingResampler, resample, type StreamingResampler } from '../audio/resample.js';
import type { Diarizer, Hotword, RecognizedSegment, Recognizer, RecognizerStream, VoiceActivityDetector } from '../engines/types.js';
import { AbortedError, OverloadedError } from '../errors.js';
import { assignSpeakers, labelSingleSpeaker } from './speakers.js';
import { assembleWords, joinWords, wordConfidences, type TimedWord } from './words.js';
import type { Word } from './types.js';

export interface StreamingOptions {
  language: string;
  /** Rate of the samples given to push(). */
  inputSampleRate: number;
  wordTimestamps: boolean;
  diarize: boolean;
  vadEvents: boolean;
  eouSeconds: number;
  partialIntervalSeconds: number;
  maxUtteranceSeconds: number;
  /** Audio scanned by the VAD at a time; default 0.3 s. */
  tickSeconds?: number;
  /** Audio kept before detected speech (the VAD fires a little late); default 0.25 s. */
  leadSeconds?: number;
  /** Speech probability the VAD must pass (its own default without it). */
  vadThreshold?: number;
  /** Shared by every session of the server; without it every partial runs. */
  partialBudget?: PartialBudget;
  /** Keywords to boost, for recognisers that can (sherpa hotwords). */
  hotwords?: Hotword[];
  /** Most words in one final (see the top of this file); unset: an utterance is one final. */
  maxWords?: number;
}

/**
 * Partial re-decodes that may run at once across all sessions. A partial that finds none free is
 * skipped (the next tick tries again): under load partials thin out, finals and VAD keep their place.
 */
export class PartialBudget {
  private running = 0;
  skipped = 0;

  constructor(readonly slots: number) {}

  tryTake(): boolean {
    if (this.running >= this.slots) {
      this.skipped++;
      return false;
    }
    this.running++;
    return true;
  }

  give(): void {
    this.running--;
  }
}

export interface StreamingEngines {
  vad: VoiceActivityDetector;
  recognizer: Recognizer;
  diarizer?: Diarizer;
}

/** confidence: see wordConfidences() (null when the recogniser gives no token probabilities). */
export type StreamingWord = Word & { confidence: number | null };

export type StreamingEvent =
  | {
      type: 'transcription';
      transcript: string;
      is_final: boolean;
      is_last: boolean;
      /** The span of its words in the utterance (the whole utterance unless word-count finals split it). */
      start: number;
      end: number;
      words: StreamingWord[];
      /** The language the recogniser detected, when it says. */
      language?: string;
      /** A final made because the client asked for it (finalize or close_stream), not by silence, a bound or a word count. */
      requested?: boolean;
    }
  | { type: 'speech_started' | 'speech_ended'; timestamp: number };

/** Context the VAD sees before the new audio, so speech starting at a tick's edge is not cut. */
const OVERLAP_SECONDS = 0.5;
/** Audio kept before detected speech (the VAD fires a little late) and after its end. */
const LEAD_SECONDS = 0.25;
const TRAIL_SECONDS = 0.3;

interface Utterance {
  /** Sample index (at the VAD's rate) where it starts. */
  start: number;
  /** Its live recognition stream; null when it is re-decoded instead. */
  stream: RecognizerStream | null;
  /** Audio before this index has been fed to the stream. */
  fed: number;
  /** Text of the last partial sent. */
  lastText: string;
  /** Re-decoding: audio end of the last partial attempted. */
  lastPartialAt: number;
  /** Words at its start already sent in word-count finals. */
  wordsSent: number;
  /** Seconds from the stream start where the words not yet sent begin (the end of the last word-count final). */
  unsentFrom: number;
}

/** A recognised word with its time and the recogniser's confidence. */
type HeardWord = TimedWord & { confidence: number | null };

export class StreamingTranscription {
  private readonly rate: number;
  private readonly tickSamples: number;
  private readonly audio = new HeldAudio();
  private scanned = 0;
  private lastSpeechEnd = 0;
  private utterance: Utterance | null = null;
  private work: Promise<void> = Promise.resolve();
  /** Steps scheduled and not yet done. */
  private steps = 0;
  private failure: unknown;
  /** Background steps skipped because the engines were busy. */
  skippedTicks = 0;
  /** Utterances re-decoded because no recognition stream could open (too many open). */
  unstreamedUtterances = 0;
  private readonly abort = new AbortController();

  private constructor(
    private readonly engines: StreamingEngines,
    private readonly options: StreamingOptions,
    private readonly emit: (event: StreamingEvent) => void,
    private readonly resampler: StreamingResampler | null,
  ) {
    this.rate = engines.vad.sampleRate;
    this.tickSamples = (options.tickSeconds ?? 0.3) * this.rate;
  }

  static async create(engines: StreamingEngines, options: StreamingOptions, emit: (event: StreamingEvent) => void): Promise<StreamingTranscription> {
    const rate = engines.vad.sampleRate;
    const resampler = options.inputSampleRate === rate ? null : await createStreamingResampler(options.inputSampleRate, rate);
    return new StreamingTranscription(engines, options, emit, resampler);
  }

  private seconds(samples: number): number {
    return Math.round((samples / this.rate) * 1000) / 1000;
  }

  private get received(): number {
    return this.audio.end;
  }

  /**
   * Audio at the input rate. Engine work starts in the background; an engine error is thrown
   * (once) by the next push or finalize, after the audio is taken, and the stream goes on.
   */
  push(samples: Float32Array): void {
    this.audio.push(this.resampler ? this.resampler.process(samples) : samples);
    try {
      this.takeFailure();
    } finally {
      this.kick();
    }
  }

  /** Everything so far decoded: a final (possibly empty) for the open utterance, or for nothing. */
  async finalize(isLast: boolean): Promise<void> {
    if (isLast && this.resampler) this.audio.push(this.resampler.flush());
    this.schedule(async () => {
      await this.tick(true);
      if (this.utterance) await this.final(this.received, isLast, true);
      else this.emit({ type: 'transcription', transcript: '', is_final: true, is_last: isLast, requested: true, start: this.seconds(this.received), end: this.seconds(this.received), words: [] });
    }, false);
    await this.work;
    this.takeFailure();
  }

  /** Seconds of audio held: an open utterance and what waits for the engines. */
  get heldSeconds(): number {
    return (this.audio.end - this.audio.start) / this.rate;
  }

  /** Stops engine work (the socket went away); the session is unusable after this. */
  close(): void {
    this.abort.abort();
    this.utterance?.stream?.close();
    if (this.resampler) this.resampler.dispose();
  }

  /** Throws a failure of background work once; it is the caller's to report. */
  private takeFailure(): void {
    const failure = this.failure;
    if (failure === undefined) return;
    this.failure = undefined;
    throw failure;
  }

  /** Whether a background step has work: a VAD tick due, or audio the open stream has not had. */
  private wantsStep(): boolean {
    if (this.received - this.scanned >= this.tickSamples) return true;
    const u = this.utterance;
    return u !== null && u.stream !== null && this.received > u.fed;
  }

  private kick(): void {
    if (this.steps === 0 && this.failure === undefined && !this.abort.signal.aborted && this.wantsStep()) this.schedule(() => this.step());
  }

  /**
   * Runs engine steps one at a time. A busy engine (OverloadedError) only skips a background
   * step: its audio stays and the next step takes it; for a finalize it is the caller's error.
   */
  private schedule(step: () => Promise<void>, background = true): void {
    this.steps++;
    this.work = this.work
      .then(async () => {
        if (this.failure === undefined && !this.abort.signal.aborted) await step();
      })
      .catch((err: unknown) => {
        if (err instanceof AbortedError) return;
        if (background && err instanceof OverloadedError) {
          this.skippedTicks++;
          return;
        }
        this.failure = err;
      })
      .finally(() => {
        this.steps--;
        // Audio that came during the step; a skipped (overloaded) step waits for the next push.
        if (background) this.kick();
      });
  }

  private async step(): Promise<void> {
    if (this.received - this.scanned >= this.tickSamples) await this.tick(false);
    const u = this.utterance;
    if (!u) return;
    if (u.stream) await this.feed(u, this.received, true);
    else await this.redecodePartial(u);
  }

  private async tick(flushing: boolean): Promise<void> {
    const { signal } = this.abort;
    const rate = this.rate;
    const end = this.received;
    const from = Math.max(this.audio.start, this.scanned - OVERLAP_SECONDS * rate);
    if (end > from) {
      const spans = await this.engines.vad.detect(this.audio.slice(from, end), { signal, threshold: this.options.vadThreshold });
      for (const span of spans) {
        const spanStart = from + Math.round(span.start * rate);
        const spanEnd = from + Math.round(span.end * rate);
        if (this.utterance === null) {
          if (spanEnd <= this.lastSpeechEnd) continue; // already finalised
          if (this.options.vadEvents) this.emit({ type: 'speech_started', timestamp: this.seconds(spanStart) });
          await this.openUtterance(Math.max(this.audio.start, this.lastSpeechEnd, spanStart - (this.options.leadSeconds ?? LEAD_SECONDS) * rate));
        }
        this.lastSpeechEnd = Math.max(this.lastSpeechEnd, spanEnd);
      }
      this.scanned = end;
    }
    const u = this.utterance;
    if (u === null) {
      this.audio.drop(end - rate);
      return;
    }
    if (flushing) return;
    const { eouSeconds, maxUtteranceSeconds } = this.options;
    if (end - this.lastSpeechEnd >= eouSeconds * rate) {
      await this.final(Math.min(end, this.lastSpeechEnd + TRAIL_SECONDS * rate), false);
    } else if (end - u.start >= maxUtteranceSeconds * rate) {
      await this.final(end, false);
      // Still speaking: the next utterance goes on from here.
      await this.openUtterance(end);
    }
  }

  /** Opens an utterance at `start`, with a recognition stream when the recogniser streams and one may open. */
  private async openUtterance(start: number): Promise<void> {
    const u: Utterance = { start, stream: null, fed: start, lastText: '', lastPartialAt: start, wordsSent: 0, unsentFrom: this.seconds(start) };
    this.utterance = u;
    const { recognizer } = this.engines;
    if (!recognizer.openStream) return;
    try {
      u.stream = await recognizer.openStream({ signal: this.abort.signal, ...(this.options.hotwords ? { hotwords: this.options.hotwords } : {}) });
    } catch (err) {
      // Streams are bounded per inference process: past the bound, this utterance is re-decoded.
      if (!(err instanceof OverloadedError)) throw err;
      this.unstreamedUtterances++;
      return;
    }
    if (this.abort.signal.aborted || this.utterance !== u) {
      u.stream.close();
      u.stream = null;
      throw new AbortedError();
    }
  }

  /** A call on the utterance's stream; a stream that fails (its process died) is let go and the utterance re-decoded. */
  private async onStream(u: Utterance, call: (stream: RecognizerStream) => Promise<RecognizedSegment>): Promise<RecognizedSegment> {
    const stream = u.stream!;
    try {
      return await call(stream);
    } catch (err) {
      if (!this.abort.signal.aborted) {
        stream.close();
        if (u.stream === stream) u.stream = null;
      }
      throw err;
    }
  }

  /** Feeds audio up to `to` to the utterance's stream; a changed hypothesis is sent as a partial. */
  private async feed(u: Utterance, to: number, partial: boolean): Promise<void> {
    if (to <= u.fed) return;
    const samples = await resample(this.audio.slice(u.fed, to), this.rate, this.engines.recognizer.sampleRate);
    u.fed = to;
    const result = await this.onStream(u, (stream) => stream.accept(samples, { signal: this.abort.signal }));
    if (partial) await this.sendPartial(u, result, to);
  }

  private async redecodePartial(u: Utterance): Promise<void> {
    const end = this.received;
    if (end - u.lastPartialAt < this.options.partialIntervalSeconds * this.rate) return;
    const budget = this.options.partialBudget;
    if (budget && !budget.tryTake()) return;
    u.lastPartialAt = end;
    try {
      await this.sendPartial(u, await this.redecode(u.start, end), end);
    } finally {
      budget?.give();
    }
  }

  /**
   * A partial of the words not yet sent; first, with `maxWords`, a final for every `maxWords` of
   * them once a word after those has begun.
   */
  private async sendPartial(u: Utterance, result: RecognizedSegment, to: number): Promise<void> {
    if (this.utterance !== u || !textOf(result)) return;
    const heard = this.heardWords(result, u.start, to);
    const limit = this.options.maxWords;
    while (limit !== undefined && heard.length - u.wordsSent > limit) {
      const words = heard.slice(u.wordsSent, u.wordsSent + limit);
      await this.emitWords(result, u, words, { is_final: true, is_last: false, start: u.unsentFrom, end: words.at(-1)!.end });
      u.wordsSent += limit;
      u.unsentFrom = words.at(-1)!.end;
      u.lastText = '';
    }
    const words = heard.slice(u.wordsSent);
    const transcript = u.wordsSent === 0 ? textOf(result) : joinWords(words.map((w) => w.word));
    if (!transcript || transcript === u.lastText) return;
    u.lastText = transcript;
    await this.emitWords(result, u, words, { is_final: false, is_last: false, start: u.unsentFrom, end: this.seconds(to), transcript });
  }

  /** The open utterance's last final(s), for its audio up to `to`; the utterance closes. */
  private async final(to: number, isLast: boolean, requested = false): Promise<void> {
    const u = this.utterance!;
    let result: RecognizedSegment;
    if (u.stream) {
      await this.feed(u, to, false);
      result = await this.onStream(u, (stream) => stream.finish({ signal: this.abort.signal }));
      u.stream = null;
    } else {
      result = await this.redecode(u.start, to);
    }
    const end = this.seconds(to);
    const words = this.heardWords(result, u.start, to).slice(u.wordsSent);
    const limit = this.options.maxWords;
    // Words past the limit (heard since the last partial) go out in finals of `limit` before the last one.
    while (limit !== undefined && words.length > limit) {
      const chunk = words.splice(0, limit);
      await this.emitWords(result, u, chunk, { is_final: true, is_last: false, start: u.unsentFrom, end: chunk.at(-1)!.end });
      u.unsentFrom = chunk.at(-1)!.end;
      u.wordsSent += limit;
    }
    const transcript = u.wordsSent === 0 ? textOf(result) : joinWords(words.map((w) => w.word));
    await this.emitWords(result, u, words, { is_final: true, is_last: isLast, start: u.unsentFrom, end, transcript, ...(requested && { requested }) });
    if (this.options.vadEvents) this.emit({ type: 'speech_ended', timestamp: this.seconds(Math.min(this.lastSpeechEnd, to)) });
    this.utterance = null;
    this.lastSpeechEnd = Math.max(this.lastSpeechEnd, to);
    this.audio.drop(to);
  }

  /** Sends a transcript message of `words` of the utterance (their transcript unless given). */
  private async emitWords(
    result: RecognizedSegment,
    u: Utterance,
    words: HeardWord[],
    message: { is_final: boolean; is_last: boolean; start: number; end: number; transcript?: string; requested?: boolean },
  ): Promise<void> {
    const { transcript = joinWords(words.map((w) => w.word)), ...rest } = message;
    const labelled = await this.labelled(words, message.is_final, Math.round(message.start * this.rate), Math.round(message.end * this.rate), u);
    this.emit({ type: 'transcription', transcript, ...rest, words: labelled, ...(result.language ? { language: result.language } : {}) });
  }

  private async redecode(from: number, to: number): Promise<RecognizedSegment> {
    const { recognizer } = this.engines;
    const samples = await resample(this.audio.slice(from, to), this.rate, recognizer.sampleRate);
    return recognizer.recognize(samples, { language: this.options.language, signal: this.abort.signal, ...(this.options.hotwords ? { hotwords: this.options.hotwords } : {}) });
  }

  /** Every word of a result for audio [from, to), timed, with its confidence (null when the recogniser gives none). */
  private heardWords(result: RecognizedSegment, from: number, to: number): HeardWord[] {
    const timed = assembleWords(result, { start: from / this.rate, end: to / this.rate });
    const confidences = wordConfidences(result);
    return timed.map((w, i) => ({ word: w.word, start: round(w.start), end: round(w.end), confidence: confidences.length === timed.length ? confidences[i]! : null }));
  }

  /** The words as sent: none without word timestamps; speakers told apart on finals when asked, over audio [from, to). */
  private async labelled(words: HeardWord[], final: boolean, from: number, to: number, u: Utterance): Promise<StreamingWord[]> {
    if (!this.options.wordTimestamps) return [];
    const { diarizer } = this.engines;
    // Speakers are told apart within a final's audio (labels do not carry across finals).
    if (!final || !this.options.diarize || !diarizer || words.length === 0) return labelSingleSpeaker(words).map((w, i) => ({ ...w, confidence: words[i]!.confidence }));
    const start = Math.max(from, u.start, this.audio.start);
    const turns = await diarizer.diarize(await resample(this.audio.slice(start, to), this.rate, diarizer.sampleRate), { signal: this.abort.signal });
    return assignSpeakers(words, offset(turns, start / this.rate)).map((w, i) => ({ ...w, confidence: words[i]!.confidence }));
  }
}

function textOf(result: RecognizedSegment): string {
  return result.text.replace(/\s+/g, ' ').trim();
}

function round(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}

function offset<T extends { start: number; end: number }>(turns: T[], by: number): T[] {
  return turns.map((t) => ({ ...t, start: t.start + by, end: t.end + by }));
}
