/**
 * AIFF / AIFF-C reading, by hand: like WAV it is a few big-endian fields, and it saves a trip
 * through ffmpeg (which users may not have) for a format macOS tools still write.
 */
import { UnsupportedAudioError } from '../errors.js';
import { aLawTable, muLawTable } from './g711.js';
import { checkDeclaredFormat, RefusedAudioHeaderError } from './pcm-collector.js';
import type { PcmSource } from './pcm.js';
import { checkedFloat, mixFrames } from './wav.js';

function fourCc(bytes: Uint8Array, offset: number): string {
  return String.fromCharCode(bytes[offset], bytes[offset + 1], bytes[offset + 2], bytes[offset + 3]);
}

export function isAiff(bytes: Uint8Array): boolean {
  if (bytes.length < 12 || fourCc(bytes, 0) !== 'FORM') return false;
  const type = fourCc(bytes, 8);
  return type === 'AIFF' || type === 'AIFC';
}

/** The 80-bit IEEE 754 extended float AIFF uses for its sample rate. */
function readExtended(view: DataView, offset: number): number {
  const signAndExponent = view.getUint16(offset);
  const high = view.getUint32(offset + 2);
  const low = view.getUint32(offset + 6);
  const exponent = (signAndExponent & 0x7fff) - 16383;
  const mantissa = high * 2 ** 32 + low;
  const value = mantissa * 2 ** (exponent - 63);
  return signAndExponent & 0x8000 ? -value : value;
}

interface AiffFormat {
  channels: number;
  frames: number;
  bitsPerSample: number;
  sampleRate: number;
  compression: string;
}

/**
 * Reads an AIFF or AIFF-C header (NONE, twos, sowt, fl32, fl64, ulaw, alaw), 4-384 kHz, 1-8
 * channels, 1-32-bit integer samples.
 */
export function openAiff(bytes: Uint8Array): PcmSource {
  if (!isAiff(bytes)) throw new UnsupportedAudioError('Not an AIFF file');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const isAifc = fourCc(bytes, 8) === 'AIFC';
  let format: AiffFormat | undefined;
  let sound: Uint8Array | undefined;

  let offset = 12;
  while (offset + 8 <= bytes.length) {
    const id = fourCc(bytes, offset);
    const size = view.getUint32(offset + 4);
    const body = offset + 8;
    if (id === 'COMM') {
      if (body + 18 > bytes.length) throw new UnsupportedAudioError('Truncated AIFF COMM chunk');
      format = {
        channels: view.getUint16(body),
        frames: view.getUint32(body + 2),
        bitsPerSample: view.getUint16(body + 6),
        sampleRate: readExtended(view, body + 8),
        compression: isAifc && body + 22 <= bytes.length ? fourCc(bytes, body + 18) : 'NONE',
      };
    } else if (id === 'SSND') {
      if (body + 8 > bytes.length) throw new UnsupportedAudioError('Truncated AIFF SSND chunk');
      const dataOffset = view.getUint32(body);
      // Size 0 is what a writer that cannot seek back (a pipe) leaves: the data runs to the end.
      const end = size === 0 ? bytes.length : Math.min(bytes.length, body + size);
      sound = bytes.subarray(Math.min(end, body + 8 + dataOffset), end);
      if (size === 0) break;
    }
    offset = body + size + (size & 1);
  }
  if (!format || !sound) throw new UnsupportedAudioError('AIFF file lacks a COMM or SSND chunk');
  const { channels } = format;
  const sampleRate = Math.round(format.sampleRate);
  checkDeclaredFormat('AIFF file', sampleRate, channels);

  const { width, read } = sampleReader(sound, format);
  // COMM's frame count may be smaller than the data (padding) or larger (a file cut short).
  const frames = Math.min(format.frames || Infinity, Math.floor(sound.length / (width * channels)));
  if (frames === 0) throw new UnsupportedAudioError('AIFF file holds no audio samples');
  const data = sound;
  return { sampleRate, frames, read: (from, to) => mixFrames(read, from, Math.min(to, frames), channels, width, data.length) };
}

/** Bytes per sample, and a function reading one sample at a byte offset as a float in [-1, 1]. */
function sampleReader(data: Uint8Array, format: AiffFormat): { width: number; read: (at: number) => number } {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const compression = format.compression.toLowerCase();
  if (compression === 'ulaw' || compression === 'alaw') {
    const table = compression === 'ulaw' ? muLawTable : aLawTable;
    return { width: 1, read: (at) => table[data[at]] };
  }
  if (compression === 'fl32') return { width: 4, read: (at) => checkedFloat(view.getFloat32(at)) };
  if (compression === 'fl64') return { width: 8, read: (at) => checkedFloat(view.getFloat64(at)) };
  const littleEndian = compression === 'sowt';
  if (compression !== 'none' && compression !== 'twos' && !littleEndian) {
    throw new UnsupportedAudioError(`Unsupported AIFF-C compression '${format.compression}'`);
  }
  const bits = format.bitsPerSample;
  if (!(bits >= 1 && bits <= 32)) throw new RefusedAudioHeaderError(`AIFF file declares ${bits}-bit samples`);
  switch (Math.ceil(bits / 8)) {
    case 1:
      return { width: 1, read: (at) => view.getInt8(at) / 128 }; // AIFF 8-bit is signed, unlike WAV
    case 2:
      return { width: 2, read: (at) => view.getInt16(at, littleEndian) / 32768 };
    case 3:
      return {
        width: 3,
        read: littleEndian
          ? (at) => ((data[at + 2] << 24) | (data[at + 1] << 16) | (data[at] << 8)) / 2147483648
          : (at) => ((data[at] << 24) | (data[at + 1] << 16) | (data[at + 2] << 8)) / 2147483648,
      };
    default:
      return { width: 4, read: (at) => view.getInt32(at, littleEndian) / 2147483648 };
  }
}
