/**
 * What synthesis does to an engine's audio before it leaves: resampling to the requested rate,
 * then (optionally) encoding to the requested format. One pipeline serves one response: its
 * encoder spans the whole response, and each piece of engine audio (a request sent in parts may
 * change voice between pieces) gets a resampler of its own, flushed at the piece's end.
 *
 * `LocalPipeline` does the work in the calling thread; synthesis runs it in worker threads
 * (src/synthesis/output-workers.ts), so that the event loop only moves finished buffers.
 */
import { concatFloat32 } from './channel-mix.js';
import { concatBytes, createEncoder, createFileEncoder, type AudioEncoder } from './encode.js';
import type { OutputFormat } from './pcm.js';
import { createStreamingResampler, type StreamingResampler } from './resample.js';
import { TimeStretcher } from './time-stretch.js';
import { streamEncoder } from './stream-encode.js';

/**
 * Engine samples resampled and encoded at a time: at 22.05 kHz about 0.19 s of audio, ~0.5 ms of
 * resampling and ~0.5 ms of mp3 encoding. On the event loop (no output workers) synthesis pushes
 * slices of this size, so the first bytes leave that soon after the engine's first piece and the
 * loop is never held longer than that.
 */
export const PIPELINE_SLICE = 4096;

/** What a pipeline encodes to: the synthesis formats, and Ogg Opus and FLAC (OpenAI's speech formats). */
export type EncodedFormat = OutputFormat | 'opus' | 'flac';

export interface PipelineOptions {
  /** Rate of the output, Hz. */
  toRate: number;
  /** Encode the resampled audio; without it the pipeline gives float PCM. */
  encode?: {
    format: EncodedFormat;
    /** A whole file (createFileEncoder's rules); without it a stream. */
    file?: { wavHeader: boolean };
  };
  /**
   * Also measure loudness: the mean square of every frame of this many output samples, frames
   * counted from each piece's begin (a piece's last, partial frame has none). Word timing reads it
   * (the synthesis use case's WordTimer), so the samples need not come back beside the bytes.
   */
  loudnessFrame?: number;
  /**
   * Change the tempo of the resampled audio without changing its pitch (TimeStretcher, one across
   * the whole response; > 1 faster) before it is encoded or measured; `end` gives its tail.
   */
  tempo?: number;
}

export interface PipelineInfo {
  /** The encoder's content type ('' without an encoder). */
  contentType: string;
  /** Rate of the bytes (mp3 may be encoded at the nearest MPEG rate). */
  sampleRate: number;
}

export interface PipelineOutput {
  /** Samples produced at the output rate (before encoding). */
  samples: number;
  /** Without an encoder: the resampled samples. */
  pcm?: Float32Array;
  /** With an encoder: the next bytes (possibly empty). */
  bytes?: Uint8Array;
  /** With `loudnessFrame`: the mean square of each frame completed by these samples. */
  loudness?: Float64Array;
}

/** The mean square of each frame of `frameSamples` samples of a stream of samples, as they come. */
export class FrameLoudness {
  private sum = 0;
  private count = 0;

  constructor(readonly frameSamples: number) {}

  /** The frames `samples` complete. */
  push(samples: Float32Array): number[] {
    const frames: number[] = [];
    for (const v of samples) {
      this.sum += v * v;
      if (++this.count === this.frameSamples) {
        frames.push(this.sum / this.frameSamples);
        this.sum = 0;
        this.count = 0;
      }
    }
    return frames;
  }
}

/** A pipeline, here or in a worker; every call waits for the previous one. */
export interface AudioPipeline {
  readonly info: PipelineInfo;
  /** True when the work runs in this thread (the caller then slices long pieces to keep the event loop free). */
  readonly inThread: boolean;
  /** A piece of engine audio at `fromRate` begins (the previous one, if any, was flushed). */
  begin(fromRate: number): Promise<void>;
  /** The next engine samples of the current piece. The array may be handed over (detached). */
  push(samples: Float32Array): Promise<PipelineOutput>;
  /** The current piece ends: the resampler's tail. */
  flush(): Promise<PipelineOutput>;
  /** The response ends: the encoder's last bytes. The pipeline is finished after this. */
  end(): Promise<PipelineOutput>;
  /** Gives the pipeline up (an abort, a failure): frees what `end` would. Safe to call more than once. */
  close(): void;
}

export class LocalPipeline {
  private resampler: StreamingResampler | undefined;
  private loudness: FrameLoudness | undefined;

  private constructor(
    private readonly toRate: number,
    private readonly encoder: AudioEncoder | undefined,
    private readonly loudnessFrame: number | undefined,
    private readonly stretcher: TimeStretcher | undefined,
  ) {}

  static async open(options: PipelineOptions): Promise<LocalPipeline> {
    const { encode, toRate } = options;
    let encoder: AudioEncoder | undefined;
    if (encode?.format === 'opus' || encode?.format === 'flac') encoder = await streamEncoder(encode.format, toRate);
    else if (encode) encoder = encode.file ? await createFileEncoder(encode.format, toRate, encode.file) : await createEncoder(encode.format, toRate, 'stream');
    const tempo = options.tempo ?? 1;
    return new LocalPipeline(toRate, encoder, options.loudnessFrame, tempo === 1 ? undefined : new TimeStretcher(tempo, toRate));
  }

  get info(): PipelineInfo {
    return { contentType: this.encoder?.contentType ?? '', sampleRate: this.encoder?.sampleRate ?? this.toRate };
  }

  async begin(fromRate: number): Promise<void> {
    this.resampler?.dispose();
    this.resampler = await createStreamingResampler(fromRate, this.toRate);
    if (this.loudnessFrame) this.loudness = new FrameLoudness(this.loudnessFrame);
  }

  /**
   * Resamples and encodes `samples` in slices of PIPELINE_SLICE: the Speex resampler's output
   * length depends a little on how its input is cut, so every caller cuts the same way and a
   * response's bytes do not depend on where the pipeline runs.
   */
  push(samples: Float32Array): PipelineOutput {
    const resampler = this.resampler;
    if (!resampler) throw new Error('push before begin');
    if (samples.length <= PIPELINE_SLICE) return this.emit(resampler.process(samples));
    const outputs: PipelineOutput[] = [];
    for (let at = 0; at < samples.length; at += PIPELINE_SLICE) outputs.push(this.emit(resampler.process(samples.subarray(at, at + PIPELINE_SLICE))));
    return {
      samples: outputs.reduce((n, o) => n + o.samples, 0),
      ...(this.encoder ? { bytes: concatBytes(outputs.map((o) => o.bytes!)) } : { pcm: concatFloat32(outputs.map((o) => o.pcm!)) }),
      ...(this.loudness && { loudness: Float64Array.from(outputs.flatMap((o) => [...o.loudness!])) }),
    };
  }

  flush(): PipelineOutput {
    const tail = this.resampler?.flush() ?? new Float32Array(0);
    this.resampler = undefined;
    return this.emit(tail);
  }

  end(): PipelineOutput {
    this.resampler?.dispose();
    this.resampler = undefined;
    const tail = this.stretcher?.flush();
    if (!tail?.length) return { samples: 0, bytes: this.encoder?.end() };
    const out = this.emit(tail, false);
    return this.encoder ? { ...out, bytes: concatBytes([out.bytes!, this.encoder.end()]) } : out;
  }

  close(): void {
    this.resampler?.dispose();
    this.resampler = undefined;
    this.encoder?.abandon();
  }

  /** `out` (stretched first when the tempo changes, unless `stretch` is false), measured and encoded. */
  private emit(resampled: Float32Array, stretch = true): PipelineOutput {
    const out = stretch && this.stretcher ? this.stretcher.push(resampled) : resampled;
    const loudness = this.loudness && { loudness: Float64Array.from(this.loudness.push(out)) };
    return { ...(this.encoder ? { samples: out.length, bytes: this.encoder.push(out) } : { samples: out.length, pcm: out }), ...loudness };
  }
}

/** A LocalPipeline behind the async interface, working in the calling thread. */
export async function openLocalPipeline(options: PipelineOptions): Promise<AudioPipeline> {
  const local = await LocalPipeline.open(options);
  let closed = false;
  return {
    info: local.info,
    inThread: true,
    begin: (fromRate) => local.begin(fromRate),
    push: async (samples) => local.push(samples),
    flush: async () => local.flush(),
    end: async () => {
      closed = true;
      return local.end();
    },
    close: () => {
      if (closed) return;
      closed = true;
      local.close();
    },
  };
}
