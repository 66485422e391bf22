/**
 * Opus out of WebM/Matroska (what browsers' MediaRecorder produces): the `ebml` package walks
 * the container, this file picks the first Opus track's packets (undoing block lacing) and
 * `opus-decoder` turns them into samples.
 */
import { createRequire } from 'node:module';
import { OpusDecoder } from 'opus-decoder';
import { UnsupportedAudioError } from '../errors.js';
import { concatFloat32, mixToMono } from './channel-mix.js';
import type { PcmAudio } from './pcm.js';
import { yieldToEventLoop } from './event-loop.js';

/** The subset of an `ebml` Decoder event that we read (the package ships no types). */
interface EbmlTag {
  name: string;
  value?: number | string;
  data?: Uint8Array;
  track?: number;
  payload?: Uint8Array;
}
type EbmlEvent = ['start' | 'tag' | 'end', EbmlTag];
interface EbmlDecoder {
  on(event: 'data', listener: (chunk: EbmlEvent) => void): void;
  on(event: 'error', listener: (error: unknown) => void): void;
  on(event: 'end', listener: () => void): void;
  write(chunk: Uint8Array): boolean;
  end(): void;
}
const { Decoder } = createRequire(import.meta.url)('ebml') as { Decoder: new () => EbmlDecoder };

interface Track {
  number?: number;
  codecId?: string;
  codecPrivate?: Uint8Array;
}

/** Opus track header (RFC 7845 section 5.1), carried as the Matroska CodecPrivate. */
interface OpusHead {
  channels: number;
  preSkip: number;
  streamCount?: number;
  coupledStreamCount?: number;
  channelMappingTable?: number[];
}

function parseOpusHead(bytes: Uint8Array | undefined): OpusHead {
  const magic = bytes ? String.fromCharCode(...bytes.subarray(0, 8)) : '';
  if (!bytes || magic !== 'OpusHead' || bytes.length < 19) return { channels: 2, preSkip: 0 };
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const channels = bytes[9];
  const preSkip = view.getUint16(10, true);
  if (bytes[18] === 0 || bytes.length < 21 + channels) return { channels, preSkip };
  return {
    channels,
    preSkip,
    streamCount: bytes[19],
    coupledStreamCount: bytes[20],
    channelMappingTable: Array.from(bytes.subarray(21, 21 + channels)),
  };
}

/** Reads an EBML variable-length integer; `signed` applies the lacing-delta bias. */
function readVint(bytes: Uint8Array, at: number, signed = false): { value: number; length: number } {
  const first = bytes[at];
  if (first === undefined || first === 0) throw new UnsupportedAudioError('Corrupt Matroska block lacing');
  let length = 1;
  while (!(first & (0x80 >> (length - 1)))) length++;
  if (at + length > bytes.length) throw new UnsupportedAudioError('Truncated Matroska block');
  let value = first & (0xff >> length);
  for (let i = 1; i < length; i++) value = value * 256 + bytes[at + i];
  if (signed) value -= 2 ** (7 * length - 1) - 1;
  return { value, length };
}

/** The frames in a (Simple)Block body, undoing Xiph, fixed-size or EBML lacing. */
function blockFrames(data: Uint8Array): Uint8Array[] {
  const track = readVint(data, 0);
  const flagsAt = track.length + 2;
  const lacing = (data[flagsAt] >> 1) & 3;
  let at = flagsAt + 1;
  if (lacing === 0) return [data.subarray(at)];

  const count = data[at++] + 1;
  const sizes: number[] = [];
  if (lacing === 1) {
    for (let i = 0; i < count - 1; i++) {
      let size = 0;
      let byte: number;
      do {
        byte = data[at++];
        size += byte;
      } while (byte === 255);
      sizes.push(size);
    }
  } else if (lacing === 3) {
    const first = readVint(data, at);
    at += first.length;
    sizes.push(first.value);
    for (let i = 1; i < count - 1; i++) {
      const delta = readVint(data, at, true);
      at += delta.length;
      sizes.push(sizes[i - 1] + delta.value);
    }
  } else {
    const size = (data.length - at) / count;
    for (let i = 0; i < count - 1; i++) sizes.push(size);
  }
  const frames: Uint8Array[] = [];
  for (const size of sizes) {
    if (size < 0 || at + size > data.length) throw new UnsupportedAudioError('Corrupt Matroska block lacing');
    frames.push(data.subarray(at, at + size));
    at += size;
  }
  frames.push(data.subarray(at));
  return frames;
}

const PARSE_SLICE_BYTES = 256 * 1024;

interface Extracted {
  track: Track;
  packets: Uint8Array[];
}

/** Walks the container and returns the packets of the first Opus track. */
async function extractOpus(bytes: Uint8Array): Promise<Extracted> {
  const tracks: Track[] = [];
  const blocks: { track: number; data: Uint8Array }[] = [];
  let current: Track | undefined;

  const decoder = new Decoder();
  const done = new Promise<void>((resolve, reject) => {
    decoder.on('error', reject);
    // 'end' fires once every parsed element has been emitted as 'data'.
    decoder.on('end', () => resolve());
  });
  decoder.on('data', ([kind, tag]) => {
    if (kind === 'start' && tag.name === 'TrackEntry') {
      current = {};
      tracks.push(current);
    } else if (kind === 'tag') {
      if (tag.name === 'TrackNumber' && current) current.number = Number(tag.value);
      else if (tag.name === 'CodecID' && current) current.codecId = String(tag.value);
      else if (tag.name === 'CodecPrivate' && current) current.codecPrivate = tag.data;
      else if ((tag.name === 'SimpleBlock' || tag.name === 'Block') && tag.data && tag.track !== undefined) {
        blocks.push({ track: tag.track, data: tag.data });
      }
    }
  });
  // Slices with a turn of the event loop between them: parsing 7 MB in one write held the loop
  // for 560 ms. The bundled stream implementation accepts only Buffers, not plain Uint8Arrays.
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let offset = 0; offset < buffer.length; offset += PARSE_SLICE_BYTES) {
    decoder.write(buffer.subarray(offset, offset + PARSE_SLICE_BYTES));
    await yieldToEventLoop();
  }
  decoder.end();
  await done;

  const track = tracks.find((t) => t.codecId === 'A_OPUS');
  if (!track) {
    const codecs = tracks.map((t) => t.codecId).filter(Boolean);
    throw new UnsupportedAudioError(`No Opus track in WebM/Matroska file${codecs.length ? ` (found ${codecs.join(', ')})` : ''}`);
  }
  const packets: Uint8Array[] = [];
  for (const block of blocks) if (block.track === track.number) packets.push(...blockFrames(block.data));
  return { track, packets };
}

/** Packets decoded per batch before giving the event loop a turn (about 10 s of 20 ms packets). */
const PACKETS_PER_BATCH = 500;

/** Decodes the first Opus track of a WebM/Matroska file (48 kHz, mixed to mono). */
export async function decodeMatroskaOpus(bytes: Uint8Array): Promise<PcmAudio> {
  const { track, packets } = await extractOpus(bytes);
  if (packets.length === 0) throw new UnsupportedAudioError('WebM/Matroska Opus track holds no audio');
  const head = parseOpusHead(track.codecPrivate);
  const decoder = new OpusDecoder({ ...head, sampleRate: 48000 });
  try {
    await decoder.ready;
    const parts: Float32Array[] = [];
    for (let i = 0; i < packets.length; i += PACKETS_PER_BATCH) {
      const decoded = decoder.decodeFrames(packets.slice(i, i + PACKETS_PER_BATCH));
      if (decoded.samplesDecoded > 0) parts.push(mixToMono(decoded.channelData, decoded.samplesDecoded));
      await yieldToEventLoop();
    }
    const samples = concatFloat32(parts);
    if (samples.length === 0) throw new UnsupportedAudioError('WebM/Matroska Opus track did not decode');
    return { samples, sampleRate: 48000 };
  } finally {
    decoder.free();
  }
}
