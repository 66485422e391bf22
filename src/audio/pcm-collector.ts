/**
 * Where every decoder puts its output: mono samples, brought to the rate the caller needs as they
 * arrive, counted against the duration cap before they are stored. A compressed file can expand
 * a thousandfold (hours of silence in a few MB), so the cap is enforced here, chunk by chunk,
 * and memory per request stays bounded by `maxSeconds` at the target rate.
 */
import { AbortedError, AudioTooLongError, ParleyError, UnsupportedAudioError } from '../errors.js';
import { concatFloat32, mixToMono } from './channel-mix.js';
import type { PcmAudio } from './pcm.js';
import { yieldToEventLoop } from '../concurrency/event-loop.js';
import { createStreamingResampler, type StreamingResampler } from './resample.js';

/** Sample rates a header may declare: uploads of any rate are accepted, and these are the sane ones. */
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

/**
 * Decoded audio on its way to the caller. Samples at or below the target rate are stored as they
 * come and brought up to it once decoding is done: a bomb of low-rate audio is then refused after
 * decoding alone (upsampling 2 hours of 8 kHz took 9 s of the 15 s it cost to refuse). Samples
 * above the target rate are brought down as they come, so what is stored never outgrows
 * `maxSeconds` at the target rate.
 */
export class PcmCollector {
  readonly maxSeconds: number;
  private sourceRate = 0;
  private targetRate = 0;
  private maxFrames = 0;
  private frames = 0;
  /** Downsampling happens on the way in; upsampling (or none) at the end. */
  private inbound: StreamingResampler | undefined;
  /** Storage blocks past the buffer (or without one); the last is filled up to `partFill`. */
  private readonly parts: Float32Array[] = [];
  private partFill = 0;
  /** Preallocated storage when the length is known from the bytes themselves; filled up to `filled`. */
  private buffer: Float32Array | undefined;
  private filled = 0;

  constructor(private readonly options: CollectOptions = {}) {
    this.maxSeconds = options.maxSeconds ?? DEFAULT_MAX_AUDIO_SECONDS;
  }

  get started(): boolean {
    return this.sourceRate > 0;
  }

  /**
   * Sets the source rate. `knownFrames`, when the bytes at hand prove the length (PCM data size,
   * counted packets), is checked against the cap at once and sizes the storage in one allocation.
   */
  async begin(sourceRate: number, knownFrames?: number): Promise<void> {
    if (this.started) throw new Error('PcmCollector.begin called twice');
    if (!(Number.isInteger(sourceRate) && sourceRate >= MIN_SAMPLE_RATE && sourceRate <= MAX_SAMPLE_RATE)) {
      throw new RefusedAudioHeaderError(`Unsupported sample rate ${sourceRate} Hz`);
    }
    this.sourceRate = sourceRate;
    this.targetRate = this.options.sampleRate ?? sourceRate;
    this.maxFrames = Math.floor(this.maxSeconds * sourceRate);
    if (knownFrames !== undefined) this.checkLength(knownFrames);
    if (sourceRate > this.targetRate) this.inbound = await createStreamingResampler(sourceRate, this.targetRate);
    if (knownFrames !== undefined && knownFrames > 0) {
      const storeRate = Math.min(sourceRate, this.targetRate);
      // + a few samples: the resampler may round the count either way.
      this.buffer = new Float32Array(Math.ceil((knownFrames * storeRate) / sourceRate) + 16);
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

  /** Mono samples at the source rate. They are copied: the caller may reuse the array. */
  push(mono: Float32Array): void {
    if (!this.started) throw new Error('PcmCollector.push before begin');
    if (this.options.signal?.aborted) throw new AbortedError();
    if (mono.length === 0) return;
    this.checkLength(this.frames + mono.length);
    this.frames += mono.length;
    this.store(this.inbound ? this.inbound.process(mono) : mono);
  }

  /** The collected audio at the target rate; UnsupportedAudioError when nothing was decoded. */
  async finish(): Promise<PcmAudio> {
    if (!this.started || this.frames === 0) throw new UnsupportedAudioError('The audio holds no samples');
    if (this.inbound) {
      this.store(this.inbound.flush());
      this.inbound = undefined;
    }
    const stored = this.buffer && this.parts.length === 0 ? this.buffer.subarray(0, this.filled) : concatFloat32(this.stored());
    this.buffer = undefined;
    this.parts.length = 0;
    const samples = this.sourceRate < this.targetRate ? await upsample(stored, this.sourceRate, this.targetRate, this.options.signal) : stored;
    if (samples.length === 0) throw new UnsupportedAudioError('The audio holds no samples');
    return { samples, sampleRate: this.targetRate };
  }

  /** Releases the resampler's native state (on failure; `finish` does it on success). */
  dispose(): void {
    this.inbound?.dispose();
    this.inbound = undefined;
    this.parts.length = 0;
    this.buffer = undefined;
  }

  /** What was stored, in order: the buffer's filled part, then the blocks, the last one cut to its fill. */
  private stored(): Float32Array[] {
    const blocks = this.parts.map((block, i) => (i === this.parts.length - 1 ? block.subarray(0, this.partFill) : block));
    return this.buffer ? [this.buffer.subarray(0, this.filled), ...blocks] : blocks;
  }

  /**
   * Appends to the preallocated buffer, else to blocks that grow to 16 MB: decoders hand over
   * thousands of small chunks, and keeping each as its own array left hundreds of MB of freed
   * small allocations that the allocator never gave back to the system (RSS stayed at its peak).
   */
  private store(chunk: Float32Array): void {
    if (chunk.length === 0) return;
    const buffer = this.buffer;
    if (buffer && this.parts.length === 0 && this.filled + chunk.length <= buffer.length) {
      buffer.set(chunk, this.filled);
      this.filled += chunk.length;
      return;
    }
    let offset = 0;
    while (offset < chunk.length) {
      let block = this.parts[this.parts.length - 1];
      if (!block || this.partFill === block.length) {
        const size = Math.min(MAX_BLOCK_SAMPLES, Math.max(MIN_BLOCK_SAMPLES, this.frames >> 2));
        block = new Float32Array(size);
        this.parts.push(block);
        this.partFill = 0;
      }
      const n = Math.min(chunk.length - offset, block.length - this.partFill);
      block.set(chunk.subarray(offset, offset + n), this.partFill);
      this.partFill += n;
      offset += n;
    }
  }
}

/** Storage blocks start at 1 MB and grow with the audio to 16 MB. */
const MIN_BLOCK_SAMPLES = 1 << 18;
const MAX_BLOCK_SAMPLES = 1 << 22;

/** Input samples resampled between turns of the event loop. */
const UPSAMPLE_BLOCK = 240_000;

async function upsample(samples: Float32Array, fromRate: number, toRate: number, signal?: AbortSignal): Promise<Float32Array> {
  const resampler = await createStreamingResampler(fromRate, toRate);
  try {
    const out = new Float32Array(Math.round((samples.length * toRate) / fromRate));
    let filled = 0;
    const put = (chunk: Float32Array) => {
      const n = Math.min(chunk.length, out.length - filled);
      out.set(chunk.subarray(0, n), filled);
      filled += n;
    };
    for (let at = 0; at < samples.length; at += UPSAMPLE_BLOCK) {
      if (signal?.aborted) throw new AbortedError();
      put(resampler.process(samples.subarray(at, at + UPSAMPLE_BLOCK)));
      await yieldToEventLoop();
    }
    put(resampler.flush());
    return out.subarray(0, filled);
  } finally {
    resampler.dispose();
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
    return await collector.finish();
  } finally {
    collector.dispose();
  }
}

/** What a decoder's failure becomes: our own errors (cap, abort, bad header) as they are, anything else "corrupt". */
export function asDecodeError(error: unknown, codec: string): ParleyError {
  if (error instanceof ParleyError) return error;
  return new UnsupportedAudioError(`Corrupt ${codec} data: ${(error as Error)?.message ?? String(error)}`);
}
