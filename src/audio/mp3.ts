/**
 * MP3 encoding with LAME 3.100 compiled to WebAssembly (wasm-media-encoders). It replaced the
 * lamejs port of LAME: on 20 s of 24 kHz mono at 64 kb/s it encodes in 64 ms instead of 380-460 ms
 * (real-time factor 0.0032 vs 0.02), which had made mp3 synthesis five times slower than eSpeak
 * itself.
 *
 * Setting up a LAME encoder (lame_init_params builds its tables) costs about 1 ms, and a fresh
 * WASM instance about 1.5 ms more. Finished encoders are therefore kept, set up again for the same
 * rate and bitrate off the request path, and handed to the next request ready to encode.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createEncoder, type WasmMediaEncoder } from 'wasm-media-encoders';

type LameEncoder = WasmMediaEncoder<'audio/mpeg'>;

/** The constant bitrates LAME accepts. */
type Bitrate = 8 | 16 | 24 | 32 | 40 | 48 | 64 | 80 | 96 | 112 | 128 | 160 | 192 | 224 | 256 | 320;

/**
 * Ready encoders kept per rate and bitrate; more concurrent mp3 requests than this create new ones.
 * Each holds a 16 MB WASM memory, about 3 MB of it resident (measured: 4 pooled encoders, +11 MB RSS).
 */
const IDLE_PER_SETTING = 4;

let compiled: Promise<WebAssembly.Module> | undefined;

function lameModule(): Promise<WebAssembly.Module> {
  compiled ??= readFile(createRequire(import.meta.url).resolve('wasm-media-encoders/wasm/mp3')).then((bytes) => WebAssembly.compile(bytes));
  return compiled;
}

const idle = new Map<string, LameEncoder[]>();

function settingKey(sampleRate: number, bitrate: number): string {
  return `${sampleRate}/${bitrate}`;
}

function configure(encoder: LameEncoder, sampleRate: number, bitrate: number): void {
  encoder.configure({ sampleRate, channels: 1, bitrate: bitrate as Bitrate });
}

/** A mono CBR mp3 stream: feed float samples, get MPEG frames. */
export class Mp3FrameEncoder {
  private encoder: LameEncoder | undefined;

  private constructor(
    encoder: LameEncoder,
    readonly sampleRate: number,
    readonly bitrate: number,
  ) {
    this.encoder = encoder;
  }

  /** `sampleRate` must be an MPEG rate (8-48 kHz, see MP3_SAMPLE_RATES). */
  static async create(sampleRate: number, bitrate: number): Promise<Mp3FrameEncoder> {
    const ready = idle.get(settingKey(sampleRate, bitrate))?.pop();
    if (ready) return new Mp3FrameEncoder(ready, sampleRate, bitrate);
    const encoder = await createEncoder('audio/mpeg', await lameModule());
    configure(encoder, sampleRate, bitrate);
    return new Mp3FrameEncoder(encoder, sampleRate, bitrate);
  }

  /** MPEG frames completed by these samples (may be empty). The bytes are the caller's own. */
  encode(samples: Float32Array): Uint8Array {
    if (samples.length === 0) return new Uint8Array(0);
    // LAME returns a view of its own memory, reused by the next call: copy it out.
    return this.lame().encode([samples]).slice();
  }

  /** The last frames; the encoder goes back to the idle pool and this object is done. */
  finish(): Uint8Array {
    const tail = this.lame().finalize().slice();
    this.release();
    return tail;
  }

  /**
   * Back to the idle pool without finishing the stream (the client left). Setting it up again
   * resets LAME, and keeping it spares the next request a new WASM instance: dropping instances
   * at every hang-up made the next request wait for their memory to be collected.
   */
  release(): void {
    const encoder = this.encoder;
    if (!encoder) return;
    this.encoder = undefined;
    const { sampleRate, bitrate } = this;
    // Set it up again after the current request's work, not during it.
    setImmediate(() => {
      const key = settingKey(sampleRate, bitrate);
      const pool = idle.get(key) ?? [];
      if (pool.length >= IDLE_PER_SETTING) return;
      configure(encoder, sampleRate, bitrate);
      pool.push(encoder);
      idle.set(key, pool);
    });
  }

  private lame(): LameEncoder {
    if (!this.encoder) throw new Error('mp3 encoder already finished');
    return this.encoder;
  }
}
