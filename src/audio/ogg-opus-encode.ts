/**
 * Ogg Opus encoding (RFC 7845): libopus 1.4 compiled to WebAssembly (opusscript) makes the Opus
 * packets, and this file puts them into Ogg pages (RFC 3533). A page leaves every
 * PACKETS_PER_PAGE packets (0.2 s), so a stream's first audio reaches the client that soon.
 */
import { createRequire } from 'node:module';
import type OpusScript from 'opusscript';
import { encodeInt16 } from './encode.js';
import type { AudioEncoder } from './encode.js';

const require = createRequire(import.meta.url);

/** The rates libopus encodes at; anything else is resampled by the caller first. */
export const OPUS_SAMPLE_RATES: readonly number[] = [8000, 12000, 16000, 24000, 48000];
/** 20 ms frames: the size Opus is tuned for. */
const FRAME_MS = 20;
const PACKETS_PER_PAGE = 10;
/** Granule positions count 48 kHz samples whatever the input rate (RFC 7845 section 4). */
const GRANULE_RATE = 48000;
/** libopus's look-ahead at 48 kHz with the default settings: the decoder drops this many samples. */
const PRE_SKIP = 312;
const BITRATE = 32_000;
/** OPUS_SET_COMPLEXITY_REQUEST. */
const SET_COMPLEXITY = 4010;
/**
 * libopus's default is 10. At 5 it encodes 60 s of 24 kHz speech-like audio in ~0.9 s instead of
 * ~2.3 s on this WebAssembly build, which runs on the event loop; at 32 kb/s speech sounds the same.
 */
const COMPLEXITY = 5;

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let r = i << 24;
    for (let j = 0; j < 8; j++) r = r & 0x80000000 ? (r << 1) ^ 0x04c11db7 : r << 1;
    table[i] = r >>> 0;
  }
  return table;
})();

function oggCrc(bytes: Uint8Array): number {
  let crc = 0;
  for (let i = 0; i < bytes.length; i++) crc = ((crc << 8) ^ CRC_TABLE[((crc >>> 24) ^ bytes[i]!) & 0xff]!) >>> 0;
  return crc;
}

/** Writes the pages of one logical stream. */
class OggPageWriter {
  private sequence = 0;
  constructor(private readonly serial: number) {}

  /** One page holding whole packets (each < 255 * 255 bytes, which Opus packets always are). */
  page(packets: Uint8Array[], granule: bigint, flags: { first?: boolean; last?: boolean } = {}): Uint8Array {
    const lacing: number[] = [];
    for (const p of packets) {
      let n = p.length;
      while (n >= 255) {
        lacing.push(255);
        n -= 255;
      }
      lacing.push(n);
    }
    if (lacing.length > 255) throw new RangeError('too many packets for one Ogg page');
    const bodyLength = packets.reduce((n, p) => n + p.length, 0);
    const page = new Uint8Array(27 + lacing.length + bodyLength);
    const view = new DataView(page.buffer);
    page.set([0x4f, 0x67, 0x67, 0x53], 0); // "OggS"
    page[4] = 0; // version
    page[5] = (flags.first ? 2 : 0) | (flags.last ? 4 : 0);
    view.setBigInt64(6, granule, true);
    view.setUint32(14, this.serial, true);
    view.setUint32(18, this.sequence++, true);
    page[26] = lacing.length;
    page.set(lacing, 27);
    let at = 27 + lacing.length;
    for (const p of packets) {
      page.set(p, at);
      at += p.length;
    }
    view.setUint32(22, oggCrc(page), true);
    return page;
  }
}

function opusHead(inputRate: number): Uint8Array {
  const head = new Uint8Array(19);
  const view = new DataView(head.buffer);
  head.set(new TextEncoder().encode('OpusHead'), 0);
  head[8] = 1; // version
  head[9] = 1; // channels
  view.setUint16(10, PRE_SKIP, true);
  view.setUint32(12, inputRate, true);
  view.setInt16(16, 0, true); // output gain
  head[18] = 0; // mapping family: mono/stereo
  return head;
}

function opusTags(): Uint8Array {
  const vendor = new TextEncoder().encode('Parley');
  const tags = new Uint8Array(8 + 4 + vendor.length + 4);
  const view = new DataView(tags.buffer);
  tags.set(new TextEncoder().encode('OpusTags'), 0);
  view.setUint32(8, vendor.length, true);
  tags.set(vendor, 12);
  view.setUint32(12 + vendor.length, 0, true); // no comments
  return tags;
}

/** A mono Ogg Opus stream at one of OPUS_SAMPLE_RATES: headers with the first bytes, pages as packets fill them. */
export class OggOpusEncoder implements AudioEncoder {
  readonly contentType = 'audio/ogg';
  private opus: OpusScript | undefined;
  private readonly writer = new OggPageWriter((Math.random() * 2 ** 32) >>> 0);
  private readonly frameSize: number;
  private readonly frame: Float32Array;
  private filled = 0;
  private packets: Uint8Array[] = [];
  /** Input samples taken so far (the padding of the last frame excluded). */
  private samples = 0;
  /** Samples in the packets made so far (whole frames). */
  private encodedSamples = 0;
  private headersSent = false;

  constructor(readonly sampleRate: number) {
    if (!OPUS_SAMPLE_RATES.includes(sampleRate)) throw new RangeError(`Opus cannot encode at ${sampleRate} Hz`);
    const Opus = require('opusscript') as typeof OpusScript;
    this.opus = new Opus(sampleRate as 24000, 1, Opus.Application.AUDIO);
    this.opus.setBitrate(BITRATE);
    this.opus.encoderCTL(SET_COMPLEXITY, COMPLEXITY);
    this.frameSize = (sampleRate * FRAME_MS) / 1000;
    this.frame = new Float32Array(this.frameSize);
  }

  push(samples: Float32Array): Uint8Array {
    const out: Uint8Array[] = [this.headers()];
    for (let at = 0; at < samples.length; ) {
      const n = Math.min(this.frameSize - this.filled, samples.length - at);
      this.frame.set(samples.subarray(at, at + n), this.filled);
      this.filled += n;
      this.samples += n;
      at += n;
      if (this.filled === this.frameSize) this.encodeFrame();
      if (this.packets.length === PACKETS_PER_PAGE) out.push(this.flushPage(false));
    }
    return Buffer.concat(out);
  }

  end(): Uint8Array {
    const out: Uint8Array[] = [this.headers()];
    if (this.filled > 0) {
      this.frame.fill(0, this.filled);
      this.encodeFrame();
    }
    // The last page always exists and carries end-of-stream: its granule tells the decoder where the audio ends.
    out.push(this.flushPage(true));
    this.abandon();
    return Buffer.concat(out);
  }

  abandon(): void {
    this.opus?.delete();
    this.opus = undefined;
  }

  private headers(): Uint8Array {
    if (this.headersSent) return new Uint8Array(0);
    this.headersSent = true;
    return Buffer.concat([this.writer.page([opusHead(this.sampleRate)], 0n, { first: true }), this.writer.page([opusTags()], 0n)]);
  }

  private encodeFrame(): void {
    if (!this.opus) throw new Error('the Opus encoder is finished');
    const pcm = encodeInt16(this.frame);
    this.packets.push(new Uint8Array(this.opus.encode(Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength), this.frameSize)));
    this.filled = 0;
    this.encodedSamples += this.frameSize;
  }

  private flushPage(last: boolean): Uint8Array {
    // A page's granule is where its last packet ends; the last page's is where the input ended, so the padding is cut.
    const ended = last ? this.samples : this.encodedSamples;
    const granule = BigInt(PRE_SKIP + Math.round((ended * GRANULE_RATE) / this.sampleRate));
    const page = this.writer.page(this.packets, granule, { last });
    this.packets = [];
    return page;
  }
}
