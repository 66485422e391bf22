/**
 * WAV (RIFF/WAVE, RF64/BW64) reading and header writing, by hand: the format is a few fixed
 * fields, and owning the parser lets us accept the streaming headers (sizes 0 or 0xFFFFFFFF)
 * that Parley itself and ffmpeg's pipe output write.
 */
import { UnsupportedAudioError } from '../errors.js';
import { aLawTable, muLawTable } from './g711.js';
import { checkDeclaredFormat, RefusedAudioHeaderError } from './pcm-collector.js';
import type { PcmAudio, PcmSource } from './pcm.js';

/** The wFormatTag values Parley reads or writes. */
export const WavFormatTag = {
  pcm: 1,
  float: 3,
  aLaw: 6,
  muLaw: 7,
  extensible: 0xfffe,
} as const;

export interface WavHeaderOptions {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  formatTag: number;
  /** Bytes of sample data that follow; `undefined` for a stream of unknown length (sizes 0xFFFFFFFF). */
  dataBytes: number | undefined;
}

const UNKNOWN_SIZE = 0xffffffff;

/**
 * A WAV header. PCM gets the canonical 44-byte header. Other tags (mu-law, A-law, float) get the
 * 18-byte fmt chunk and the `fact` chunk that the WAVE spec requires for non-PCM data (58 bytes).
 * The RIFF size accounts for the pad byte that must follow an odd-sized data chunk.
 */
export function wavHeader(options: WavHeaderOptions): Uint8Array {
  const { sampleRate, channels, bitsPerSample, formatTag, dataBytes } = options;
  const isPcm = formatTag === WavFormatTag.pcm;
  const fmtSize = isPcm ? 16 : 18;
  const factSize = isPcm ? 0 : 12;
  const headerBytes = 12 + 8 + fmtSize + factSize + 8;
  const blockAlign = channels * Math.ceil(bitsPerSample / 8);
  const header = new Uint8Array(headerBytes);
  const view = new DataView(header.buffer);
  const ascii = (offset: number, text: string) => {
    for (let i = 0; i < text.length; i++) header[offset + i] = text.charCodeAt(i);
  };
  const riffSize =
    dataBytes === undefined ? UNKNOWN_SIZE : Math.min(UNKNOWN_SIZE, headerBytes - 8 + dataBytes + (dataBytes & 1));

  ascii(0, 'RIFF');
  view.setUint32(4, riffSize, true);
  ascii(8, 'WAVE');
  ascii(12, 'fmt ');
  view.setUint32(16, fmtSize, true);
  view.setUint16(20, formatTag, true);
  view.setUint16(22, channels, true);
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * blockAlign, true);
  view.setUint16(32, blockAlign, true);
  view.setUint16(34, bitsPerSample, true);
  let offset = 36;
  if (!isPcm) {
    view.setUint16(offset, 0, true); // cbSize: no extra format bytes
    offset += 2;
    ascii(offset, 'fact');
    view.setUint32(offset + 4, 4, true);
    view.setUint32(offset + 8, dataBytes === undefined ? UNKNOWN_SIZE : Math.floor(dataBytes / blockAlign), true);
    offset += 12;
  }
  ascii(offset, 'data');
  view.setUint32(offset + 4, dataBytes === undefined ? UNKNOWN_SIZE : Math.min(UNKNOWN_SIZE, dataBytes), true);
  return header;
}

/** A complete WAV file: header, data and the pad byte an odd-sized data chunk needs. */
export function wavFile(data: Uint8Array, format: Omit<WavHeaderOptions, 'dataBytes'>): Uint8Array {
  const header = wavHeader({ ...format, dataBytes: data.length });
  const out = new Uint8Array(header.length + data.length + (data.length & 1));
  out.set(header, 0);
  out.set(data, header.length);
  return out;
}

function fourCc(bytes: Uint8Array, offset: number): string {
  return String.fromCharCode(bytes[offset], bytes[offset + 1], bytes[offset + 2], bytes[offset + 3]);
}

/** True when the bytes start like a little-endian RIFF/RF64 WAVE file. */
export function isWav(bytes: Uint8Array): boolean {
  if (bytes.length < 12) return false;
  const riff = fourCc(bytes, 0);
  return (riff === 'RIFF' || riff === 'RF64' || riff === 'BW64') && fourCc(bytes, 8) === 'WAVE';
}

interface WavFormat {
  tag: number;
  channels: number;
  sampleRate: number;
  /** Bytes of one sample of one channel. */
  bytesPerSample: number;
}

/**
 * Reads a WAV file's header: PCM 8/16/24/32-bit, float 32/64-bit, mu-law and A-law, plain or
 * WAVE_FORMAT_EXTENSIBLE, 4-384 kHz, 1-8 channels.
 *
 * A data chunk that claims more bytes than the file holds is read up to the end of the file:
 * that covers streaming headers and recordings cut short, as ffmpeg and sox do. A file cut
 * inside its header, or with no whole sample frame, is refused.
 */
export function openWav(bytes: Uint8Array): PcmSource {
  if (!isWav(bytes)) throw new UnsupportedAudioError('Not a WAV file');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const isRf64 = fourCc(bytes, 0) !== 'RIFF';
  let rf64DataSize: number | undefined;
  let format: WavFormat | undefined;
  let data: Uint8Array | undefined;

  let offset = 12;
  while (offset + 8 <= bytes.length) {
    const id = fourCc(bytes, offset);
    let size = view.getUint32(offset + 4, true);
    const body = offset + 8;
    if (id === 'ds64' && size >= 24 && body + 24 <= bytes.length) {
      rf64DataSize = view.getUint32(body + 8, true) + view.getUint32(body + 12, true) * 2 ** 32;
    } else if (id === 'fmt ') {
      if (size < 16 || body + 16 > bytes.length) throw new UnsupportedAudioError('Truncated WAV format chunk');
      format = readFormat(view, body, size);
    } else if (id === 'data') {
      if (isRf64 && size === UNKNOWN_SIZE && rf64DataSize !== undefined) size = rf64DataSize;
      const streaming = size === 0 || size === UNKNOWN_SIZE;
      const end = streaming ? bytes.length : Math.min(bytes.length, body + size);
      data = bytes.subarray(body, end);
      // The data chunk is normally last; keep walking only if the format is still missing.
      if (format || streaming || end >= bytes.length) break;
    }
    offset = body + size + (size & 1);
  }

  if (!format) throw new UnsupportedAudioError('WAV file has no format chunk');
  if (!data) throw new UnsupportedAudioError('WAV file has no data chunk');
  const { channels, bytesPerSample } = format;
  const frameBytes = bytesPerSample * channels;
  const frames = Math.floor(data.length / frameBytes);
  if (frames === 0) throw new UnsupportedAudioError('WAV file holds no audio samples');
  const read = sampleReader(format.tag, bytesPerSample, data);
  const samples = data;
  return {
    sampleRate: format.sampleRate,
    frames,
    read: (from, to) => mixFrames(read, from, Math.min(to, frames), channels, bytesPerSample, samples.length),
  };
}

/** Decodes a whole WAV file to mono float samples at its own rate. */
export function parseWav(bytes: Uint8Array): PcmAudio {
  const source = openWav(bytes);
  return { samples: source.read(0, source.frames), sampleRate: source.sampleRate };
}

function readFormat(view: DataView, offset: number, size: number): WavFormat {
  let tag = view.getUint16(offset, true);
  const channels = view.getUint16(offset + 2, true);
  const sampleRate = view.getUint32(offset + 4, true);
  const bitsPerSample = view.getUint16(offset + 14, true);
  if (tag === WavFormatTag.extensible) {
    // WAVEFORMATEXTENSIBLE: cbSize(2) validBits(2) channelMask(4), then a GUID whose first two
    // bytes are the real format tag.
    if (size < 40 || offset + 26 > view.byteLength) throw new UnsupportedAudioError('Truncated WAVE_FORMAT_EXTENSIBLE chunk');
    tag = view.getUint16(offset + 24, true);
  }
  checkDeclaredFormat('WAV file', sampleRate, channels);
  // Trust bitsPerSample over blockAlign when they disagree: writers get blockAlign wrong more often.
  const validBits: Record<number, (bits: number) => boolean> = {
    [WavFormatTag.pcm]: (bits) => bits >= 1 && bits <= 32,
    [WavFormatTag.float]: (bits) => bits === 32 || bits === 64,
    [WavFormatTag.muLaw]: (bits) => bits === 8,
    [WavFormatTag.aLaw]: (bits) => bits === 8,
  };
  // Other encodings (ADPCM...) are left to ffmpeg; a known one with an impossible bit depth is refused.
  if (!validBits[tag]) throw new UnsupportedAudioError(`Unsupported WAV encoding (format tag ${tag})`);
  if (!validBits[tag](bitsPerSample)) throw new RefusedAudioHeaderError(`WAV file declares ${bitsPerSample}-bit samples for format tag ${tag}`);
  return { tag, channels, sampleRate, bytesPerSample: Math.ceil(bitsPerSample / 8) };
}

/** Frames [from, to) of interleaved samples, averaged to mono; `read` takes a byte offset. */
export function mixFrames(
  read: (at: number) => number,
  from: number,
  to: number,
  channels: number,
  bytesPerSample: number,
  dataBytes: number,
): Float32Array {
  const out = new Float32Array(Math.max(0, to - from));
  const frameBytes = channels * bytesPerSample;
  const scale = 1 / channels;
  for (let i = 0, at = from * frameBytes; i < out.length && at + frameBytes <= dataBytes; i++) {
    let sum = 0;
    for (let c = 0; c < channels; c++, at += bytesPerSample) sum += read(at);
    out[i] = channels === 1 ? sum : sum * scale;
  }
  return out;
}

/** A function reading one sample at a byte offset of `data`, as a float in [-1, 1]. */
function sampleReader(tag: number, bytesPerSample: number, data: Uint8Array): (at: number) => number {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  if (tag === WavFormatTag.pcm) {
    switch (bytesPerSample) {
      case 1:
        return (at) => (data[at] - 128) / 128; // 8-bit WAV is unsigned
      case 2:
        return (at) => view.getInt16(at, true) / 32768;
      case 3:
        return (at) => ((data[at] | (data[at + 1] << 8) | (data[at + 2] << 24 >> 8)) / 8388608);
      case 4:
        return (at) => view.getInt32(at, true) / 2147483648;
    }
  } else if (tag === WavFormatTag.float) {
    const get = bytesPerSample === 4 ? (at: number) => view.getFloat32(at, true) : (at: number) => view.getFloat64(at, true);
    return (at) => checkedFloat(get(at));
  } else if (tag === WavFormatTag.muLaw || tag === WavFormatTag.aLaw) {
    const table = tag === WavFormatTag.muLaw ? muLawTable : aLawTable;
    return (at) => table[data[at]];
  }
  throw new UnsupportedAudioError(`Unsupported WAV encoding (format tag ${tag}, ${bytesPerSample * 8}-bit)`);
}

/**
 * A float sample as the engines take it: NaN and infinities make the file invalid (engines choke
 * on them, and they are no recording), and values past full scale are clipped like integer PCM.
 */
export function checkedFloat(x: number): number {
  if (x >= -1 && x <= 1) return x;
  if (!Number.isFinite(x)) throw new RefusedAudioHeaderError('The audio holds NaN or infinite samples');
  return x > 0 ? 1 : -1;
}
