/**
 * Streaming transcription of one socket: audio in as it is spoken, partial and final transcripts
 * out. Works with any installed recogniser (offline or streaming), by re-decoding:
 *
 * - Every `tickSeconds` of new audio the VAD scans that audio (plus a little overlap). Speech opens
 *   an utterance; `eouSeconds` without speech closes it, and the utterance is decoded once more
 *   for its final. An utterance reaching `maxUtteranceSeconds` is finalised where it is.
 * - While an utterance is open, it is re-decoded at most every `partialIntervalSeconds` (of
 *   audio) for a partial. Work is bounded: one engine task at a time per session, ticks that
 *   come during it are folded into the next, and the audio held is one utterance plus a second.
 *
 * Times are seconds from the start of the stream. Only audio at the VAD's rate (16 kHz) is held.
 */
import { concatFloat32 } from '../audio/channel-mix.js';
import { createStreamingResampler, resample, type StreamingResampler } from '../audio/resample.js';
import type { Diarizer, Recognizer, VoiceActivityDetector } from '../engines/types.js';
import { AbortedError, OverloadedError } from '../errors.js';
import { assignSpeakers, labelSingleSpeaker } from './speakers.js';
import { assembleWords } from './words.js';
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
  /** Shared by every session of the server; without it every partial runs. */
  partialBudget?: PartialBudget;
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

export type StreamingEvent =
  | {
      type: 'transcription';
      transcript: string;
      is_final: boolean;
      is_last: boolean;
      /** The utterance's span. */
      start: number;
      end: number;
      words: (Word & { confidence: number | null })[];
    }
  | { type: 'speech_started' | 'speech_ended'; timestamp: number };

/** Context the VAD sees before the new audio, so speech starting at a tick's edge is not cut. */
const OVERLAP_SECONDS = 0.5;
/** Audio kept before detected speech (the VAD fires a little late) and after its end. */
const LEAD_SECONDS = 0.25;
const TRAIL_SECONDS = 0.3;

export class StreamingTranscription {
  private readonly rate: number;
  private readonly chunks: Float32Array[] = [];
  /** Absolute sample index of chunks[0][0]. */
  private bufferStart = 0;
  /** Samples received so far (at the VAD's rate). */
  private received = 0;
  private scanned = 0;
  private speechStart: number | null = null;
  private lastSpeechEnd = 0;
  private lastPartialAt = 0;
  private lastPartialText = '';
  private work: Promise<void> = Promise.resolve();
  private busy = false;
  private failure: unknown;
  /** Background ticks skipped because the engines were busy. */
  skippedTicks = 0;
  private readonly abort = new AbortController();

  private constructor(
    private readonly engines: StreamingEngines,
    private readonly options: StreamingOptions,
    private readonly emit: (event: StreamingEvent) => void,
    private readonly resampler: StreamingResampler | null,
  ) {
    this.rate = engines.vad.sampleRate;
  }

  static async create(engines: StreamingEngines, options: StreamingOptions, emit: (event: StreamingEvent) => void): Promise<StreamingTranscription> {
    const rate = engines.vad.sampleRate;
    const resampler = options.inputSampleRate === rate ? null : await createStreamingResampler(options.inputSampleRate, rate);
    return new StreamingTranscription(engines, options, emit, resampler);
  }

  private seconds(samples: number): number {
    return Math.round((samples / this.rate) * 1000) / 1000;
  }

  /** Audio at the input rate. Engine work starts in the background; errors surface in the next push/finalize. */
  push(samples: Float32Array): void {
    this.throwIfFailed();
    const audio = this.resampler ? this.resampler.process(samples) : samples;
    if (audio.length === 0) return;
    this.chunks.push(audio);
    this.received += audio.length;
    if (!this.busy && this.received - this.scanned >= (this.options.tickSeconds ?? 0.3) * this.rate) this.schedule(() => this.tick());
  }

  /** Everything so far decoded: a final (possibly empty) for the open utterance, or for nothing. */
  async finalize(isLast: boolean): Promise<void> {
    if (isLast && this.resampler) {
      const tail = this.resampler.flush();
      if (tail.length) {
        this.chunks.push(tail);
        this.received += tail.length;
      }
    }
    this.schedule(async () => {
      await this.tick(true);
      if (this.speechStart !== null) await this.final(this.speechStart, this.received, isLast);
      else this.emit({ type: 'transcription', transcript: '', is_final: true, is_last: isLast, start: this.seconds(this.received), end: this.seconds(this.received), words: [] });
    }, false);
    await this.work;
    const failure = this.failure;
    // Reported to the client by the caller; the stream may go on.
    this.failure = undefined;
    if (failure !== undefined) throw failure;
  }

  /** Seconds of audio held: an open utterance and what waits for the engines. */
  get heldSeconds(): number {
    return (this.received - this.bufferStart) / this.rate;
  }

  /** Stops engine work (the socket went away); the session is unusable after this. */
  close(): void {
    this.abort.abort();
    if (this.resampler) this.resampler.dispose();
  }

  private throwIfFailed(): void {
    if (this.failure !== undefined) throw this.failure;
  }

  /**
   * Runs engine steps one at a time. A busy engine (OverloadedError) only skips a background
   * tick: its audio stays and the next tick tries again; for a finalize it is the caller's error.
   */
  private schedule(step: () => Promise<void>, background = true): void {
    this.busy = true;
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
      .finally(() => (this.busy = false));
  }

  private slice(from: number, to: number): Float32Array {
    const all = concatFloat32(this.chunks);
    this.chunks.length = 0;
    this.chunks.push(all);
    return all.subarray(Math.max(0, from - this.bufferStart), Math.max(0, to - this.bufferStart));
  }

  /** Forgets audio before `position`. */
  private drop(position: number): void {
    const all = concatFloat32(this.chunks);
    const cut = Math.min(all.length, Math.max(0, position - this.bufferStart));
    this.chunks.length = 0;
    this.chunks.push(all.slice(cut));
    this.bufferStart += cut;
  }

  private async tick(flushing = false): Promise<void> {
    const { signal } = this.abort;
    const rate = this.rate;
    const end = this.received;
    const from = Math.max(this.bufferStart, this.scanned - OVERLAP_SECONDS * rate);
    if (end > from) {
      const spans = await this.engines.vad.detect(this.slice(from, end), { signal });
      for (const span of spans) {
        const spanStart = from + Math.round(span.start * rate);
        const spanEnd = from + Math.round(span.end * rate);
        if (this.speechStart === null) {
          if (spanEnd <= this.lastSpeechEnd) continue; // already finalised
          this.speechStart = Math.max(this.bufferStart, this.lastSpeechEnd, spanStart - LEAD_SECONDS * rate);
          this.lastPartialAt = this.speechStart;
          if (this.options.vadEvents) this.emit({ type: 'speech_started', timestamp: this.seconds(spanStart) });
        }
        this.lastSpeechEnd = Math.max(this.lastSpeechEnd, spanEnd);
      }
      this.scanned = end;
    }
    if (this.speechStart === null) {
      this.drop(end - rate);
      return;
    }
    if (flushing) return;
    const { eouSeconds, maxUtteranceSeconds, partialIntervalSeconds } = this.options;
    if (end - this.lastSpeechEnd >= eouSeconds * rate) {
      await this.final(this.speechStart, Math.min(end, this.lastSpeechEnd + TRAIL_SECONDS * rate), false);
    } else if (end - this.speechStart >= maxUtteranceSeconds * rate) {
      await this.final(this.speechStart, end, false);
      // Still speaking: the next utterance goes on from here.
      this.speechStart = end;
      this.lastPartialAt = end;
    } else if (end - this.lastPartialAt >= partialIntervalSeconds * rate) {
      const budget = this.options.partialBudget;
      if (budget && !budget.tryTake()) return;
      this.lastPartialAt = end;
      try {
        const result = await this.decode(this.speechStart, end, false);
        if (result.transcript && result.transcript !== this.lastPartialText) {
          this.lastPartialText = result.transcript;
          this.emit({ type: 'transcription', is_final: false, is_last: false, ...result });
        }
      } finally {
        budget?.give();
      }
    }
  }

  private async final(from: number, to: number, isLast: boolean): Promise<void> {
    const result = await this.decode(from, to, true);
    this.emit({ type: 'transcription', is_final: true, is_last: isLast, ...result });
    if (this.options.vadEvents) this.emit({ type: 'speech_ended', timestamp: this.seconds(Math.min(this.lastSpeechEnd, to)) });
    this.speechStart = null;
    this.lastPartialText = '';
    this.lastSpeechEnd = Math.max(this.lastSpeechEnd, to);
    this.drop(to);
  }

  private async decode(from: number, to: number, final: boolean): Promise<{ transcript: string; start: number; end: number; words: (Word & { confidence: null })[] }> {
    const { signal } = this.abort;
    const { recognizer, diarizer } = this.engines;
    const span = { start: from / this.rate, end: to / this.rate };
    const samples = await resample(this.slice(from, to), this.rate, recognizer.sampleRate);
    const result = await recognizer.recognize(samples, { language: this.options.language, signal });
    const transcript = result.text.replace(/\s+/g, ' ').trim();
    let words: Word[] = [];
    if (this.options.wordTimestamps) {
      const timed = assembleWords(result, span).map((w) => ({ ...w, start: round(w.start), end: round(w.end) }));
      // Speakers are told apart within a final's utterance (labels do not carry across utterances).
      if (final && this.options.diarize && diarizer) {
        const turns = await diarizer.diarize(await resample(this.slice(from, to), this.rate, diarizer.sampleRate), { signal });
        words = assignSpeakers(timed, offset(turns, span.start));
      } else {
        words = labelSingleSpeaker(timed);
      }
    }
    return {
      transcript,
      start: this.seconds(from),
      end: this.seconds(to),
      words: this.options.wordTimestamps ? words.map((w) => ({ ...w, confidence: null })) : [],
    };
  }
}

function round(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}

function offset<T extends { start: number; end: number }>(turns: T[], by: number): T[] {
  return turns.map((t) => ({ ...t, start: t.start + by, end: t.end + by }));
}
