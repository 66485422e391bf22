/**
 * AIFF / AIFF-C reading, by hand: like WAV it is a few big-endian fields, and it saves a trip
 * through ffmpeg (which users may not have) for a format macOS tools still write.
 */
import { UnsupportedAudioError } from '../errors.js';
import { decodeALaw, decodeMuLaw } from './g711.js';
import type { PcmAudio } from './pcm.js';

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

/** Decodes AIFF or AIFF-C (NONE, twos, sowt, fl32, fl64, ulaw, alaw) to mono float samples. */
export function parseAiff(bytes: Uint8Array): PcmAudio {
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
  const { channels, sampleRate } = format;
  if (channels < 1 || !(sampleRate >= 1 && sampleRate <= 1_000_000)) {
    throw new UnsupportedAudioError('AIFF file declares an invalid channel count or sample rate');
  }

  const decoded = decodeSamples(sound, format);
  const frames = Math.min(format.frames || Infinity, Math.floor(decoded.length / channels));
  if (frames === 0) throw new UnsupportedAudioError('AIFF file holds no audio samples');
  const out = new Float32Array(frames);
  for (let i = 0, at = 0; i < frames; i++) {
    let sum = 0;
    for (let c = 0; c < channels; c++) sum += decoded[at++];
    out[i] = sum / channels;
  }
  return { samples: out, sampleRate: Math.round(sampleRate) };
}

/** Interleaved float samples of every channel. */
function decodeSamples(data: Uint8Array, format: AiffFormat): Float32Array {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const compression = format.compression.toLowerCase();
  if (compression === 'ulaw') return decodeMuLaw(data);
  if (compression === 'alaw') return decodeALaw(data);
  if (compression === 'fl32' || compression === 'fl64') {
    const width = compression === 'fl32' ? 4 : 8;
    const out = new Float32Array(Math.floor(data.length / width));
    for (let i = 0; i < out.length; i++) out[i] = width === 4 ? view.getFloat32(i * 4) : view.getFloat64(i * 8);
    return out;
  }
  const littleEndian = compression === 'sowt';
  if (compression !== 'none' && compression !== 'twos' && !littleEndian) {
    throw new UnsupportedAudioError(`Unsupported AIFF-C compression '${format.compression}'`);
  }
  const width = Math.ceil(format.bitsPerSample / 8);
  const out = new Float32Array(Math.floor(data.length / width));
  for (let i = 0, at = 0; i < out.length; i++, at += width) {
    switch (width) {
      case 1:
        out[i] = view.getInt8(at) / 128; // AIFF 8-bit is signed, unlike WAV
        break;
      case 2:
        out[i] = view.getInt16(at, littleEndian) / 32768;
        break;
      case 3: {
        const [hi, mid, lo] = littleEndian ? [data[at + 2], data[at + 1], data[at]] : [data[at], data[at + 1], data[at + 2]];
        out[i] = ((hi << 24) | (mid << 16) | (lo << 8)) / 2147483648;
        break;
      }
      case 4:
        out[i] = view.getInt32(at, littleEndian) / 2147483648;
        break;
      default:
        throw new UnsupportedAudioError(`Unsupported AIFF sample size ${format.bitsPerSample}`);
    }
  }
  return out;
}
