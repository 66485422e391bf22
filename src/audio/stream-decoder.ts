/**
 * Audio that arrives in pieces (WebSocket frames) of a format named up front, decoded piece by
 * piece to mono float samples. Frames need not align with samples: a sample cut between two
 * frames is completed by the next one. Opus comes as Ogg pages (from "OggS" on) or as raw packets,
 * one packet per frame, decided by the first frame.
 */
import { OggOpusDecoder } from 'ogg-opus-decoder';
import { OpusDecoder } from 'opus-decoder';
import { UnsupportedAudioError } from '../errors.js';
import { mixToMono } from './channel-mix.js';
import { decodeALaw, decodeMuLaw } from './g711.js';
import { opusPacketSamples } from './opus.js';

export type StreamEncoding = 'linear16' | 'linear32' | 'mulaw' | 'alaw' | 'opus';

export interface StreamDecoder {
  /** Rate of the samples `decode` returns: the declared rate, 48 kHz for Opus. */
  readonly sampleRate: number;
  /** Samples of this frame (and of what earlier frames left incomplete). Async: the Ogg Opus decoder is. */
  decode(bytes: Uint8Array): Float32Array | Promise<Float32Array>;
  free(): void;
}

const EMPTY = new Float32Array(0);
const OPUS_RATE = 48_000;
/** A raw Opus packet is at most 1275 bytes per frame, 120 ms (RFC 6716 section 3.2.1/3.4). */
const MAX_OPUS_PACKET_BYTES = 1275 * 6 + 6;

/** Fixed-size little-endian samples, with the bytes of a sample split across frames kept for the next. */
class PcmStreamDecoder implements StreamDecoder {
  private carry = new Uint8Array(0);

  constructor(
    readonly sampleRate: number,
    private readonly bytesPerSample: number,
    private readonly read: (view: DataView, at: number) => number,
  ) {}

  decode(bytes: Uint8Array): Float32Array {
    const joined = this.carry.length ? Buffer.concat([this.carry, bytes]) : bytes;
    const count = Math.floor(joined.length / this.bytesPerSample);
    this.carry = joined.slice(count * this.bytesPerSample);
    const view = new DataView(joined.buffer, joined.byteOffset, count * this.bytesPerSample);
    const out = new Float32Array(count);
    for (let i = 0; i < count; i++) {
      const v = this.read(view, i * this.bytesPerSample);
      // NaN and infinities in float input are not sound: silence rather than poison downstream.
      out[i] = Number.isFinite(v) ? Math.max(-1, Math.min(1, v)) : 0;
    }
    return out;
  }

  free(): void {}
}

class G711StreamDecoder implements StreamDecoder {
  constructor(
    readonly sampleRate: number,
    private readonly table: (bytes: Uint8Array) => Float32Array,
  ) {}

  decode(bytes: Uint8Array): Float32Array {
    return this.table(bytes);
  }

  free(): void {}
}

/** Opus in whichever framing the first frame shows. Decoders are made lazily (they load WebAssembly). */
class OpusStreamDecoder implements StreamDecoder {
  readonly sampleRate = OPUS_RATE;
  private ogg: OggOpusDecoder | undefined;
  private raw: OpusDecoder<48000> | undefined;

  static async create(): Promise<OpusStreamDecoder> {
    const decoder = new OpusStreamDecoder();
    decoder.ogg = new OggOpusDecoder();
    decoder.raw = new OpusDecoder({ sampleRate: OPUS_RATE, channels: 1 });
    await Promise.all([decoder.ogg.ready, decoder.raw.ready]);
    return decoder;
  }

  private mode: 'ogg' | 'raw' | undefined;

  async decode(bytes: Uint8Array): Promise<Float32Array> {
    this.mode ??= bytes.length >= 4 && Buffer.from(bytes.subarray(0, 4)).toString('latin1') === 'OggS' ? 'ogg' : 'raw';
    if (this.mode === 'ogg') {
      // Typed as synchronous, but returns a promise (ogg-opus-decoder 1.7).
      const decoded = await (this.ogg!.decode(bytes) as ReturnType<OggOpusDecoder['decode']> | Promise<ReturnType<OggOpusDecoder['decode']>>);
      if (decoded.errors.length > 0) throw new UnsupportedAudioError(`Corrupt Ogg Opus data: ${decoded.errors[0]!.message}`);
      return decoded.samplesDecoded ? mixToMono(decoded.channelData, decoded.samplesDecoded) : EMPTY;
    }
    // Checked before libopus sees it: a raw packet must have a valid table of contents and size.
    if (bytes.length === 0 || bytes.length > MAX_OPUS_PACKET_BYTES || opusPacketSamples(bytes) === 0) {
      throw new UnsupportedAudioError('A binary frame is not an Opus packet (send one packet per frame, or Ogg pages)');
    }
    const decoded = this.raw!.decodeFrame(bytes);
    if (decoded.errors.length > 0) throw new UnsupportedAudioError(`Corrupt Opus packet: ${decoded.errors[0]!.message}`);
    return decoded.samplesDecoded ? mixToMono(decoded.channelData, decoded.samplesDecoded) : EMPTY;
  }

  free(): void {
    this.ogg?.free();
    this.raw?.free();
  }
}

export async function createStreamDecoder(encoding: StreamEncoding, sampleRate: number): Promise<StreamDecoder> {
  switch (encoding) {
    case 'linear16':
      return new PcmStreamDecoder(sampleRate, 2, (view, at) => view.getInt16(at, true) / 32768);
    case 'linear32':
      return new PcmStreamDecoder(sampleRate, 4, (view, at) => view.getFloat32(at, true));
    case 'mulaw':
      return new G711StreamDecoder(sampleRate, decodeMuLaw);
    case 'alaw':
      return new G711StreamDecoder(sampleRate, decodeALaw);
    case 'opus':
      return OpusStreamDecoder.create();
  }
}
