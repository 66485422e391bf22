/**
 * Container detection from magic bytes. Clients often send a wrong or generic Content-Type
 * (audio/mp3 for an m4a, application/octet-stream...), so the bytes decide, never the header.
 */
import { isAiff } from './aiff.js';
import { isWav } from './wav.js';

export type AudioContainer =
  | 'wav'
  | 'aiff'
  | 'mp3'
  | 'flac'
  | 'ogg-opus'
  | 'ogg-vorbis'
  /** Ogg holding something else (Speex, FLAC...): left to ffmpeg. */
  | 'ogg'
  | 'matroska'
  /** ISO base media (m4a, mp4, 3gp, mov): needs a seekable input for ffmpeg. */
  | 'mp4'
  | 'unknown';

function ascii(bytes: Uint8Array, offset: number, text: string): boolean {
  if (offset + text.length > bytes.length) return false;
  for (let i = 0; i < text.length; i++) if (bytes[offset + i] !== text.charCodeAt(i)) return false;
  return true;
}

/** Length of the ID3v2 tags at `offset` (several may be stacked), 0 when there are none. */
export function id3Length(bytes: Uint8Array, offset = 0): number {
  let at = offset;
  while (ascii(bytes, at, 'ID3') && at + 10 <= bytes.length) {
    const flags = bytes[at + 5];
    // The tag size is a "syncsafe" integer: 4 bytes of 7 bits each.
    const size = ((bytes[at + 6] & 0x7f) << 21) | ((bytes[at + 7] & 0x7f) << 14) | ((bytes[at + 8] & 0x7f) << 7) | (bytes[at + 9] & 0x7f);
    at += 10 + size + (flags & 0x10 ? 10 : 0);
  }
  return at - offset;
}

const MPEG1_BITRATES = [
  [], // layer index 0 is reserved
  [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320], // layer III
  [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384], // layer II
  [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448], // layer I
];
const MPEG2_BITRATES = [
  [],
  [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
  [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
  [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
];
const SAMPLE_RATES = [44100, 48000, 32000];

/** Byte length of the MPEG audio frame whose header is at `at`, or 0 if there is no valid header. */
export function mpegFrameLength(bytes: Uint8Array, at: number): number {
  if (at + 4 > bytes.length || bytes[at] !== 0xff || (bytes[at + 1] & 0xe0) !== 0xe0) return 0;
  const version = (bytes[at + 1] >> 3) & 3; // 0: MPEG 2.5, 1: reserved, 2: MPEG 2, 3: MPEG 1
  const layer = (bytes[at + 1] >> 1) & 3; // 0 is reserved: it is what AAC's ADTS sync looks like
  const bitrateIndex = bytes[at + 2] >> 4;
  const rateIndex = (bytes[at + 2] >> 2) & 3;
  if (version === 1 || layer === 0 || bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3) return 0;
  const padding = (bytes[at + 2] >> 1) & 1;
  const bitrate = (version === 3 ? MPEG1_BITRATES : MPEG2_BITRATES)[layer][bitrateIndex] * 1000;
  const sampleRate = SAMPLE_RATES[rateIndex] / (version === 3 ? 1 : version === 2 ? 2 : 4);
  if (layer === 3) return Math.floor((12 * bitrate) / sampleRate + padding) * 4;
  const perFrame = layer === 1 && version !== 3 ? 72 : 144;
  return Math.floor((perFrame * bitrate) / sampleRate) + padding;
}

/** Seconds of audio in the MPEG audio frame whose (valid) header is at `at`. */
export function mpegFrameSeconds(bytes: Uint8Array, at: number): number {
  const version = (bytes[at + 1] >> 3) & 3;
  const layer = (bytes[at + 1] >> 1) & 3;
  const sampleRate = SAMPLE_RATES[(bytes[at + 2] >> 2) & 3] / (version === 3 ? 1 : version === 2 ? 2 : 4);
  // Layer I: 384 samples; layer II: 1152; layer III: 1152 in MPEG 1, 576 in MPEG 2 and 2.5.
  const samples = layer === 3 ? 384 : layer === 2 || version === 3 ? 1152 : 576;
  return samples / sampleRate;
}

/** An MPEG audio stream starts at `at`: a valid frame header followed by another (or the end). */
function isMpegAudioAt(bytes: Uint8Array, at: number): boolean {
  const length = mpegFrameLength(bytes, at);
  if (length === 0) return false;
  return at + length >= bytes.length || mpegFrameLength(bytes, at + length) > 0;
}

/** The first Ogg packet begins after the 27-byte page header and its segment table. */
function oggFirstPacket(bytes: Uint8Array): number {
  return bytes.length > 27 ? 27 + bytes[26] : bytes.length;
}

export function sniffContainer(bytes: Uint8Array): AudioContainer {
  if (isWav(bytes)) return 'wav';
  if (isAiff(bytes)) return 'aiff';
  if (ascii(bytes, 0, 'OggS')) {
    const packet = oggFirstPacket(bytes);
    if (ascii(bytes, packet, 'OpusHead')) return 'ogg-opus';
    if (bytes[packet] === 1 && ascii(bytes, packet + 1, 'vorbis')) return 'ogg-vorbis';
    return 'ogg';
  }
  if (bytes.length >= 4 && bytes[0] === 0x1a && bytes[1] === 0x45 && bytes[2] === 0xdf && bytes[3] === 0xa3) {
    return 'matroska';
  }
  // Old QuickTime files may open with a moov/mdat/wide atom instead of ftyp.
  if (['ftyp', 'moov', 'mdat', 'wide'].some((atom) => ascii(bytes, 4, atom))) return 'mp4';
  const tags = id3Length(bytes);
  if (ascii(bytes, tags, 'fLaC')) return 'flac';
  if (isMpegAudioAt(bytes, tags)) return 'mp3';
  if (tags > 0 && tags < bytes.length) {
    // Some taggers pad past the declared ID3 size: look for the first frame a little further on.
    const limit = Math.min(bytes.length, tags + 64 * 1024);
    for (let at = tags; at < limit; at++) if (bytes[at] === 0xff && isMpegAudioAt(bytes, at)) return 'mp3';
  }
  return 'unknown';
}
