/**
 * Where every decoder puts its output: mono samples, brought to the rate the caller needs as they
 * arrive, counted against the duration cap before they are stored. A compressed file can expand
 * a thousandfold (hours of silence in a few MB), so the cap is enforced here, chunk by chunk,
 * and memory per request stays bounded by `maxSeconds` at the target rate.
 */
import { AbortedError, AudioTooLongError, ParleyError, UnsupportedAudioError } from '../errors.js';
import { concatFloat32, mixToMono } from './channel-mix.js';
import type { PcmAudio } from './pcm.js';
import { createStreamingResampler, type StreamingResampler } from './resample.js';

/** Sample rates a header may declare (decisions.md 22 accepts "any" rate; these are the sane ones). */
export const MIN_SAMPLE_RATE = 4_000;
export const MAX_SAMPLE_RATE = 384_000;
/** Most channels any decoder accepts (7.1 surround); they are mixed down anyway. */
export const MAX_CHANNELS = 8;
/** Default cap on decoded audio per request: 2 hours. */
export const DEFAULT_MAX_AUDIO_SECONDS = 7_200;

export interface CollectOptions {
  /** Rate of the samples handed back; undefined keeps the source's own rate. */
  sampleRate?: number;
  /** Longest audio accepted, in seconds of the source. */
  maxSeconds?: number;
  /** Stops the work when the client goes away. */
  signal?: AbortSignal;
}

/**
 * A header declaring what Parley refuses to decode (rate, channels, bit depth out of range). It is
 * answered like any undecodable file, but final: ffmpeg does not get a second try at it.
 */
export class RefusedAudioHeaderError extends UnsupportedAudioError {}

/** RefusedAudioHeaderError unless `rate` and `channels` are within what Parley decodes. */
export function checkDeclaredFormat(what: string, sampleRate: number, channels: number): void {
  if (!Number.isInteger(channels) || channels < 1 || channels > MAX_CHANNELS) {
    throw new RefusedAudioHeaderError(`${what} declares ${channels} channels (1 to ${MAX_CHANNELS} are accepted)`);
  }
  if (!(sampleRate >= MIN_SAMPLE_RATE && sampleRate <= MAX_SAMPLE_RATE)) {
    throw new RefusedAudioHeaderError(`${what} declares a sample rate of ${sampleRate} Hz (${MIN_SAMPLE_RATE} to ${MAX_SAMPLE_RATE} are accepted)`);
  }
}

export class PcmCollector {
  readonly maxSeconds: number;
  private sourceRate = 0;
  private maxFrames = 0;
  private frames = 0;
  private resampler: StreamingResampler | undefined;
  private readonly parts: Float32Array[] = [];
  /** Preallocated output when the length is known from the bytes themselves; filled up to `filled`. */
  private buffer: Float32Array | undefined;
  private filled = 0;

  constructor(private readonly options: CollectOptions = {}) {
    this.maxSeconds = options.maxSeconds ?? DEFAULT_MAX_AUDIO_SECONDS;
  }

  get started(): boolean {
    return this.sourceRate > 0;
  }

  /** Frames of source audio taken so far. */
  get sourceFrames(): number {
    return this.frames;
  }

  /**
   * Sets the source rate. `knownFrames`, when the bytes at hand prove the length (PCM data size,
   * counted packets), is checked against the cap at once and sizes the output in one allocation.
   */
  async begin(sourceRate: number, knownFrames?: number): Promise<void> {
    if (this.started) throw new Error('PcmCollector.begin called twice');
    if (!(Number.isInteger(sourceRate) && sourceRate >= MIN_SAMPLE_RATE && sourceRate <= MAX_SAMPLE_RATE)) {
      throw new RefusedAudioHeaderError(`Unsupported sample rate ${sourceRate} Hz`);
    }
    this.sourceRate = sourceRate;
    this.maxFrames = Math.floor(this.maxSeconds * sourceRate);
    if (knownFrames !== undefined) this.checkLength(knownFrames);
    const targetRate = this.options.sampleRate ?? sourceRate;
    this.resampler = await createStreamingResampler(sourceRate, targetRate);
    if (knownFrames !== undefined && knownFrames > 0) {
      // + a few samples: the resampler may round the count either way.
      this.buffer = new Float32Array(Math.ceil((knownFrames * targetRate) / sourceRate) + 16);
    }
  }

  /** Throws AudioTooLongError when a source of `frames` frames would pass the cap. */
  checkLength(frames: number): void {
    if (frames > this.maxFrames) throw new AudioTooLongError(this.maxSeconds);
  }

  /** Planar channels of `frames` frames, mixed down and taken. */
  pushChannels(channels: readonly Float32Array[], frames: number): void {
    if (frames <= 0) return;
    if (channels.length > MAX_CHANNELS) throw new UnsupportedAudioError(`The audio has ${channels.length} channels (at most ${MAX_CHANNELS})`);
    this.push(mixToMono(channels, frames));
  }

  /** Mono samples at the source rate. */
  push(mono: Float32Array): void {
    if (!this.resampler) throw new Error('PcmCollector.push before begin');
    if (this.options.signal?.aborted) throw new AbortedError();
    if (mono.length === 0) return;
    this.checkLength(this.frames + mono.length);
    this.frames += mono.length;
    this.store(this.resampler.process(mono));
  }

  /** The collected audio; UnsupportedAudioError when nothing was decoded. */
  finish(): PcmAudio {
    if (!this.resampler || this.frames === 0) {
      this.dispose();
      throw new UnsupportedAudioError('The audio holds no samples');
    }
    const sampleRate = this.resampler.toRate;
    this.store(this.resampler.flush());
    this.resampler = undefined;
    let samples: Float32Array;
    if (this.buffer && this.parts.length === 0) samples = this.buffer.subarray(0, this.filled);
    else samples = concatFloat32(this.buffer ? [this.buffer.subarray(0, this.filled), ...this.parts] : this.parts);
    this.buffer = undefined;
    this.parts.length = 0;
    if (samples.length === 0) throw new UnsupportedAudioError('The audio holds no samples');
    return { samples, sampleRate };
  }

  /** Releases the resampler's native state (on failure; `finish` does it on success). */
  dispose(): void {
    this.resampler?.dispose();
    this.resampler = undefined;
    this.parts.length = 0;
    this.buffer = undefined;
  }

  private store(chunk: Float32Array): void {
    if (chunk.length === 0) return;
    const buffer = this.buffer;
    if (buffer && this.parts.length === 0 && this.filled + chunk.length <= buffer.length) {
      buffer.set(chunk, this.filled);
      this.filled += chunk.length;
      return;
    }
    this.parts.push(chunk);
  }
}

/**
 * Runs `decode` against a fresh collector and returns what it collected, releasing the
 * collector's native state whatever happens.
 */
export async function collect(options: CollectOptions, decode: (collector: PcmCollector) => Promise<void> | void): Promise<PcmAudio> {
  const collector = new PcmCollector(options);
  try {
    await decode(collector);
    return collector.finish();
  } finally {
    collector.dispose();
  }
}

/** What a decoder's failure becomes: our own errors (cap, abort, bad header) as they are, anything else "corrupt". */
export function asDecodeError(error: unknown, codec: string): ParleyError {
  if (error instanceof ParleyError) return error;
  return new UnsupportedAudioError(`Corrupt ${codec} data: ${(error as Error)?.message ?? String(error)}`);
}
