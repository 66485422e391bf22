/**
 * Opus out of WebM/Matroska (what browsers' MediaRecorder produces). The container is walked by
 * hand over the caller's bytes: only the few elements that lead to the audio matter (Segment,
 * Tracks, Cluster, blocks), every other element is stepped over by its size, and nothing is
 * copied or kept per block. (The `ebml` package used before copied its input through JavaScript
 * arrays on every write: a block declaring 20 MB made that quadratic.)
 */
import { UnsupportedAudioError } from '../errors.js';
import { decodeOpusPackets, parseOpusHead } from './opus.js';
import type { PcmCollector } from './pcm-collector.js';

const ID = {
  segment: 0x18538067,
  tracks: 0x1654ae6b,
  trackEntry: 0xae,
  trackNumber: 0xd7,
  codecId: 0x86,
  codecPrivate: 0x63a2,
  cluster: 0x1f43b675,
  blockGroup: 0xa0,
  block: 0xa1,
  simpleBlock: 0xa3,
} as const;

/** Master elements whose children are read; every other element is skipped whole. */
const DESCEND = new Set<number>([ID.segment, ID.tracks, ID.trackEntry, ID.cluster, ID.blockGroup]);

interface Vint {
  value: number;
  length: number;
  /** All value bits set: an element of unknown size (live streams write these). */
  unknown: boolean;
}

/** Reads an EBML variable-length integer; `keepMarker` keeps the length bit (element IDs do). */
function readVint(bytes: Uint8Array, at: number, keepMarker: boolean): Vint | null {
  const first = bytes[at];
  if (first === undefined || first === 0) return null;
  let length = 1;
  while (!(first & (0x80 >> (length - 1)))) length++;
  if (length > 8 || at + length > bytes.length) return null;
  let value = keepMarker ? first : first & (0xff >> length);
  let allOnes = value === 0xff >> length;
  for (let i = 1; i < length; i++) {
    value = value * 256 + bytes[at + i];
    allOnes &&= bytes[at + i] === 0xff;
  }
  return { value, length, unknown: !keepMarker && allOnes };
}

interface Element {
  id: number;
  /** The element's body; empty for the masters of DESCEND, whose children follow as elements of their own. */
  data: Uint8Array;
}

/** The elements in file order, descending into the masters of DESCEND. */
function* elements(bytes: Uint8Array): Generator<Element> {
  let at = 0;
  while (at < bytes.length) {
    const id = readVint(bytes, at, true);
    if (!id) return;
    const size = readVint(bytes, at + id.length, false);
    if (!size) return;
    const body = at + id.length + size.length;
    if (DESCEND.has(id.value)) {
      yield { id: id.value, data: bytes.subarray(body, body) };
      at = body; // children follow; an unknown size is fine, the walk goes on through them
      continue;
    }
    if (size.unknown) return; // only masters may have an unknown size
    const end = body + size.value;
    if (end > bytes.length) return; // cut short: what came before still counts
    yield { id: id.value, data: bytes.subarray(body, end) };
    at = end;
  }
}

interface Track {
  number?: number;
  codecId?: string;
  codecPrivate?: Uint8Array;
}

function readUint(data: Uint8Array): number {
  let value = 0;
  for (const byte of data) value = value * 256 + byte;
  return value;
}

function findTracks(bytes: Uint8Array): Track[] {
  const tracks: Track[] = [];
  let current: Track | undefined;
  for (const { id, data } of elements(bytes)) {
    if (id === ID.cluster) break; // tracks come before the audio
    if (id === ID.trackEntry) tracks.push((current = {}));
    else if (id === ID.trackNumber && current) current.number = readUint(data);
    else if (id === ID.codecId && current) current.codecId = new TextDecoder().decode(data).replace(/\0+$/, '');
    else if (id === ID.codecPrivate && current) current.codecPrivate = data;
  }
  return tracks;
}

/** The frames in a (Simple)Block body of track `track`, undoing Xiph, fixed-size or EBML lacing. */
function* blockFrames(data: Uint8Array, track: number): Generator<Uint8Array> {
  const number = readVint(data, 0, false);
  if (!number || number.value !== track) return;
  const flagsAt = number.length + 2;
  if (flagsAt >= data.length) throw corrupt();
  const lacing = (data[flagsAt] >> 1) & 3;
  let at = flagsAt + 1;
  if (lacing === 0) {
    yield data.subarray(at);
    return;
  }
  if (at >= data.length) throw corrupt();
  const count = data[at++] + 1;
  const sizes: number[] = [];
  if (lacing === 1) {
    for (let i = 0; i < count - 1; i++) {
      let size = 0;
      let byte: number;
      do {
        if (at >= data.length) throw corrupt();
        byte = data[at++];
        size += byte;
      } while (byte === 255);
      sizes.push(size);
    }
  } else if (lacing === 3) {
    const first = readVint(data, at, false);
    if (!first) throw corrupt();
    at += first.length;
    sizes.push(first.value);
    for (let i = 1; i < count - 1; i++) {
      const delta = readVint(data, at, false);
      if (!delta) throw corrupt();
      at += delta.length;
      sizes.push(sizes[i - 1] + delta.value - (2 ** (7 * delta.length - 1) - 1));
    }
  } else {
    const size = (data.length - at) / count;
    if (!Number.isInteger(size)) throw corrupt();
    for (let i = 0; i < count - 1; i++) sizes.push(size);
  }
  for (const size of sizes) {
    if (size < 0 || at + size > data.length) throw corrupt();
    yield data.subarray(at, at + size);
    at += size;
  }
  yield data.subarray(at);
}

function corrupt(): UnsupportedAudioError {
  return new UnsupportedAudioError('Corrupt Matroska block lacing');
}

/** Decodes the first Opus track of a WebM/Matroska file into `collector`. */
export async function decodeMatroskaOpus(bytes: Uint8Array, collector: PcmCollector, targetRate: number | undefined): Promise<void> {
  const tracks = findTracks(bytes);
  const track = tracks.find((t) => t.codecId === 'A_OPUS');
  if (!track || track.number === undefined) {
    const codecs = tracks.map((t) => t.codecId).filter(Boolean);
    throw new UnsupportedAudioError(`No Opus track in WebM/Matroska file${codecs.length ? ` (found ${codecs.join(', ')})` : ''}`);
  }
  const number = track.number;
  function* packets(): Generator<Uint8Array> {
    for (const { id, data } of elements(bytes)) {
      if (id === ID.simpleBlock || id === ID.block) yield* blockFrames(data, number);
    }
  }
  await decodeOpusPackets(packets, parseOpusHead(track.codecPrivate, false), collector, targetRate);
}
