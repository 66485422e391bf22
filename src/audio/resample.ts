/**
 * Band-limited resampling with the Speex resampler (SpeexDSP, compiled to WASM). Synthesis feeds
 * it one sentence at a time, so the streaming form keeps the filter state between chunks: the
 * concatenated output equals resampling the whole signal at once.
 */
import { concatFloat32 } from './channel-mix.js';
import createSpeexModule, { type SpeexResamplerModule as SpeexModule } from '@echogarden/speex-resampler-wasm';

/**
 * Speex quality 0-10; 4 is SpeexDSP's own default (64 taps, ~89% passband, ~80 dB stopband).
 * Measured on 6.9 s of eSpeak speech, 22.05 → 24 kHz: q4 differs from q10 by −45.2 dB and q6 by
 * −46.4 dB (the passband edge, above 9.8 kHz), while q4 costs 10.2 ms against q6's 14.9 ms. On a
 * long text resampling was a third of all synthesis CPU, and this machine's two cores barely
 * overlap such floating-point work, so the cheaper filter is what made synthesis faster.
 */
export const DEFAULT_RESAMPLER_QUALITY = 4;

let speexModule: Promise<SpeexModule> | undefined;

function loadSpeex(): Promise<SpeexModule> {
  speexModule ??= createSpeexModule();
  return speexModule;
}

export interface StreamingResampler {
  readonly fromRate: number;
  readonly toRate: number;
  /** Resamples the next chunk; the output lags the input by the filter's delay until `flush`. */
  process(chunk: Float32Array): Float32Array;
  /** Returns the tail held in the filter and releases the native state. */
  flush(): Float32Array;
  /** Releases the native state without flushing (e.g. on abort). Safe to call more than once. */
  dispose(): void;
}

/** Native memory of a resampler that was dropped without flush/dispose gets freed on GC. */
const leakGuard = new FinalizationRegistry<() => void>((release) => release());

/** Input samples copied into WASM memory per call. */
const BLOCK = 16384;

class SpeexStreamingResampler implements StreamingResampler {
  private state: number;
  private readonly buffers: number;
  private readonly outputCapacity: number;
  private inputCount = 0;
  private outputCount = 0;
  private readonly release: () => void;

  constructor(
    private readonly speex: SpeexModule,
    readonly fromRate: number,
    readonly toRate: number,
    quality: number,
  ) {
    this.outputCapacity = Math.ceil((BLOCK * toRate) / fromRate) + 64;
    // One allocation: [error/in-length, out-length, input block, output block].
    this.buffers = speex._malloc(8 + 4 * (BLOCK + this.outputCapacity));
    const state = speex._speex_resampler_init(1, fromRate, toRate, quality, this.buffers);
    if (!state) {
      speex._free(this.buffers);
      throw new RangeError(`Speex resampler rejected ${fromRate} → ${toRate} Hz (error ${speex.HEAP32[this.buffers >> 2]})`);
    }
    // Without this the output starts with the filter's delay worth of silence.
    speex._speex_resampler_skip_zeros(state);
    this.state = state;
    const buffers = this.buffers;
    let released = false;
    this.release = () => {
      if (released) return;
      released = true;
      speex._speex_resampler_destroy(state);
      speex._free(buffers);
    };
    leakGuard.register(this, this.release, this);
  }

  process(chunk: Float32Array): Float32Array {
    if (!this.state) throw new Error('Resampler already flushed or disposed');
    this.inputCount += chunk.length;
    return this.run(chunk);
  }

  flush(): Float32Array {
    if (!this.state) throw new Error('Resampler already flushed or disposed');
    // Push zeros through so the last real samples leave the filter, then cut the output to the
    // length the input implies.
    const latency = this.speex._speex_resampler_get_input_latency(this.state);
    const tail = this.run(new Float32Array(latency + 16));
    const expected = Math.round((this.inputCount * this.toRate) / this.fromRate);
    const keep = Math.max(0, Math.min(tail.length, expected - (this.outputCount - tail.length)));
    this.dispose();
    return tail.subarray(0, keep);
  }

  dispose(): void {
    if (!this.state) return;
    this.state = 0;
    leakGuard.unregister(this);
    this.release();
  }

  private run(input: Float32Array): Float32Array {
    const { speex, state } = this;
    const inLengthPointer = this.buffers;
    const outLengthPointer = this.buffers + 4;
    const inputPointer = this.buffers + 8;
    const outputPointer = inputPointer + 4 * BLOCK;
    const parts: Float32Array[] = [];
    let total = 0;
    let offset = 0;
    while (offset < input.length) {
      const n = Math.min(BLOCK, input.length - offset);
      // Re-read the heap views after every call: WASM memory growth replaces the buffer.
      speex.HEAPF32.set(input.subarray(offset, offset + n), inputPointer >> 2);
      speex.HEAPU32[inLengthPointer >> 2] = n;
      speex.HEAPU32[outLengthPointer >> 2] = this.outputCapacity;
      speex._speex_resampler_process_float(state, 0, inputPointer, inLengthPointer, outputPointer, outLengthPointer);
      const consumed = speex.HEAPU32[inLengthPointer >> 2];
      const produced = speex.HEAPU32[outLengthPointer >> 2];
      if (produced > 0) {
        parts.push(speex.HEAPF32.slice(outputPointer >> 2, (outputPointer >> 2) + produced));
        total += produced;
      }
      if (consumed === 0 && produced === 0) break; // cannot happen with room for the output; never spin
      offset += consumed;
    }
    this.outputCount += total;
    return concatFloat32(parts);
  }
}

/** Passes samples through when the rates are equal, so callers need no special case. */
class IdentityResampler implements StreamingResampler {
  constructor(
    readonly fromRate: number,
    readonly toRate: number,
  ) {}
  process(chunk: Float32Array): Float32Array {
    return chunk;
  }
  flush(): Float32Array {
    return new Float32Array(0);
  }
  dispose(): void {}
}

function checkRate(rate: number, name: string): void {
  if (!Number.isInteger(rate) || rate < 1 || rate > 1_000_000) throw new RangeError(`Invalid ${name}: ${rate}`);
}

export async function createStreamingResampler(
  fromRate: number,
  toRate: number,
  quality = DEFAULT_RESAMPLER_QUALITY,
): Promise<StreamingResampler> {
  checkRate(fromRate, 'source sample rate');
  checkRate(toRate, 'target sample rate');
  if (fromRate === toRate) return new IdentityResampler(fromRate, toRate);
  return new SpeexStreamingResampler(await loadSpeex(), fromRate, toRate, quality);
}

/** Resamples a whole signal. Returns the input itself when the rates are equal. */
export async function resample(
  samples: Float32Array,
  fromRate: number,
  toRate: number,
  quality = DEFAULT_RESAMPLER_QUALITY,
): Promise<Float32Array> {
  const resampler = await createStreamingResampler(fromRate, toRate, quality);
  try {
    const body = resampler.process(samples);
    const tail = resampler.flush();
    if (tail.length === 0) return body;
    const out = new Float32Array(body.length + tail.length);
    out.set(body, 0);
    out.set(tail, body.length);
    return out;
  } finally {
    resampler.dispose();
  }
}
