/**
 * Decompression bombs: small files that decode to hours of silence, one per codec, built in
 * memory (no fixture files). FLAC, MP3, Ogg Opus and WebM Opus are written by hand, frame by
 * frame; Vorbis and ADTS AAC repeat one silent packet taken from a second of silence that ffmpeg
 * encodes (their headers are codebooks no one writes by hand).
 */
import { execFileSync } from 'node:child_process';

const FFMPEG = process.env.PARLEY_TEST_FFMPEG ?? 'ffmpeg';

// ---------------------------------------------------------------------------------------------
// Checksums

function crc8(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte;
    for (let i = 0; i < 8; i++) crc = crc & 0x80 ? ((crc << 1) ^ 0x07) & 0xff : (crc << 1) & 0xff;
  }
  return crc;
}

function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x8005) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

const OGG_CRC_TABLE = Uint32Array.from({ length: 256 }, (_, i) => {
  let r = i << 24;
  for (let j = 0; j < 8; j++) r = r & 0x80000000 ? (r << 1) ^ 0x04c11db7 : r << 1;
  return r >>> 0;
});

function oggCrc(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) ^ OGG_CRC_TABLE[((crc >>> 24) ^ byte) & 0xff]) >>> 0;
  return crc;
}

// ---------------------------------------------------------------------------------------------
// FLAC

/** FLAC's UTF-8-like coding of the frame number. */
function utf8Number(n: number): number[] {
  if (n < 0x80) return [n];
  if (n < 0x800) return [0xc0 | (n >> 6), 0x80 | (n & 0x3f)];
  if (n < 0x10000) return [0xe0 | (n >> 12), 0x80 | ((n >> 6) & 0x3f), 0x80 | (n & 0x3f)];
  return [0xf0 | (n >> 18), 0x80 | ((n >> 12) & 0x3f), 0x80 | ((n >> 6) & 0x3f), 0x80 | (n & 0x3f)];
}

/**
 * A mono 8 kHz 16-bit FLAC of `seconds` of silence: frames of 32,768 samples, each one CONSTANT
 * subframe (12 bytes per 4 s). `declareTotal` false leaves STREAMINFO's total at 0 ("unknown"),
 * so only counting while decoding can catch it.
 */
export function flacBomb(seconds: number, declareTotal = true): Uint8Array {
  const blockSize = 32_768;
  const rate = 8_000;
  const frames = Math.ceil((seconds * rate) / blockSize);
  const total = declareTotal ? frames * blockSize : 0;
  const info = new Uint8Array(34);
  const view = new DataView(info.buffer);
  view.setUint16(0, blockSize);
  view.setUint16(2, blockSize);
  // rate (20 bits) | channels-1 (3) | bits-1 (5) | total samples (36)
  info[10] = rate >> 12;
  info[11] = (rate >> 4) & 0xff;
  info[12] = ((rate & 0xf) << 4) | (0 << 1) | (15 >> 4);
  info[13] = ((15 & 0xf) << 4) | Math.floor(total / 2 ** 32);
  view.setUint32(14, total >>> 0);
  const parts: number[] = [...Buffer.from('fLaC'), 0x80, 0, 0, 34, ...info];
  for (let n = 0; n < frames; n++) {
    // sync, blocksize code 15 (32768) + rate code 4 (8 kHz), mono + 16-bit, frame number, CRC-8
    const header = [0xff, 0xf8, 0xf4, 0x08, ...utf8Number(n)];
    header.push(crc8(Uint8Array.from(header)));
    const frame = [...header, 0x00, 0x00, 0x00]; // CONSTANT subframe, value 0
    const crc = crc16(Uint8Array.from(frame));
    parts.push(...frame, crc >> 8, crc & 0xff);
  }
  return Uint8Array.from(parts);
}

// ---------------------------------------------------------------------------------------------
// MP3

/** MPEG 2.5 layer III, 8 kbps, 8 kHz mono: 72-byte frames of 72 ms whose side info says "silence". */
export function mp3Bomb(seconds: number): Uint8Array {
  const frameBytes = 72;
  const frames = Math.ceil(seconds / 0.072);
  const out = new Uint8Array(frames * frameBytes);
  for (let i = 0; i < frames; i++) out.set([0xff, 0xe3, 0x18, 0xc0], i * frameBytes);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Ogg

/** Ogg pages of one logical stream (serial 1), with up to 255 packets a page and real CRCs. */
export function oggStream(packets: Uint8Array[], samplesPerPacket: (index: number) => number, headerPackets: number): Uint8Array {
  const pages: Uint8Array[] = [];
  let sequence = 0;
  let granule = 0;
  const page = (group: Uint8Array[], flags: number) => {
    const lacing: number[] = [];
    for (const p of group) {
      let left = p.length;
      while (left >= 255) {
        lacing.push(255);
        left -= 255;
      }
      lacing.push(left);
    }
    const body = Buffer.concat(group);
    const out = new Uint8Array(27 + lacing.length + body.length);
    const view = new DataView(out.buffer);
    out.set(Buffer.from('OggS'), 0);
    out[5] = flags;
    view.setUint32(6, granule % 2 ** 32, true);
    view.setUint32(10, Math.floor(granule / 2 ** 32), true);
    view.setUint32(14, 1, true);
    view.setUint32(18, sequence++, true);
    out[26] = lacing.length;
    out.set(lacing, 27);
    out.set(body, 27 + lacing.length);
    view.setUint32(22, oggCrc(out), true);
    pages.push(out);
  };
  for (let i = 0; i < headerPackets; i++) page([packets[i]], i === 0 ? 2 : 0);
  for (let i = headerPackets; i < packets.length; ) {
    const group: Uint8Array[] = [];
    let laces = 0;
    while (i < packets.length && laces + Math.floor(packets[i].length / 255) + 1 <= 255) {
      laces += Math.floor(packets[i].length / 255) + 1;
      granule += samplesPerPacket(i);
      group.push(packets[i++]);
    }
    page(group, i >= packets.length ? 4 : 0);
  }
  return Buffer.concat(pages);
}

function opusHead(channels = 1): Uint8Array {
  const head = new Uint8Array(19);
  head.set(Buffer.from('OpusHead'), 0);
  head[8] = 1;
  head[9] = channels;
  new DataView(head.buffer).setUint16(10, 312, true);
  new DataView(head.buffer).setUint32(12, 48_000, true);
  return head;
}

/** 120 ms of Opus in 2 bytes: CELT 20 ms (config 31), code 3, six frames of zero bytes (decoded as loss: silence). */
const SILENT_OPUS_PACKET = Uint8Array.from([(31 << 3) | 3, 6]);

export function oggOpusBomb(seconds: number): Uint8Array {
  const count = Math.ceil(seconds / 0.12);
  const tags = Uint8Array.from([...Buffer.from('OpusTags'), 4, 0, 0, 0, ...Buffer.from('fuzz'), 0, 0, 0, 0]);
  const packets = [opusHead(), tags, ...new Array<Uint8Array>(count).fill(SILENT_OPUS_PACKET)];
  return oggStream(packets, () => 5_760, 2);
}

// ---------------------------------------------------------------------------------------------
// WebM

function element(id: number[], body: number[] | Uint8Array): number[] {
  return [...id, ...ebml4(body.length), ...body];
}

/** An EBML size in 4 bytes (room for 256 MB), simpler than the shortest form. */
function ebml4(n: number): number[] {
  return [0x10 | ((n >> 24) & 0x0f), (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff];
}

/** A WebM with one Opus track of `seconds` of silence: clusters of 250 two-byte SimpleBlocks (30 s). */
export function webmOpusBomb(seconds: number): Uint8Array {
  const count = Math.ceil(seconds / 0.12);
  const header = element([0x1a, 0x45, 0xdf, 0xa3], [...element([0x42, 0x82], [...Buffer.from('webm')])]);
  const track = element(
    [0xae],
    [...element([0xd7], [1]), ...element([0x83], [2]), ...element([0x86], [...Buffer.from('A_OPUS')]), ...element([0x63, 0xa2], opusHead())],
  );
  const parts: number[][] = [header, [0x18, 0x53, 0x80, 0x67, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff], element([0x16, 0x54, 0xae, 0x6b], track)];
  for (let i = 0; i < count; i += 250) {
    const blocks: number[] = [...element([0xe7], [0, 0, 0, 0])];
    for (let j = i; j < Math.min(count, i + 250); j++) {
      const time = (j - i) * 120;
      blocks.push(0xa3, 0x80 | (4 + SILENT_OPUS_PACKET.length), 0x81, time >> 8, time & 0xff, 0x80, ...SILENT_OPUS_PACKET);
    }
    parts.push(element([0x1f, 0x43, 0xb6, 0x75], blocks));
  }
  return Uint8Array.from(parts.flat());
}

// ---------------------------------------------------------------------------------------------
// Through ffmpeg: Vorbis and ADTS AAC

function ffmpegSilence(args: string[]): Uint8Array {
  return new Uint8Array(
    execFileSync(FFMPEG, ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'anullsrc=r=8000:cl=mono', '-t', '3', ...args, 'pipe:1'], {
      maxBuffer: 16 * 1024 * 1024,
    }),
  );
}

/** Packets of the first stream of an Ogg file (whole packets only). */
function oggPacketsOf(bytes: Uint8Array): Uint8Array[] {
  const packets: Uint8Array[] = [];
  let pending: Buffer[] = [];
  for (let at = 0; at + 27 <= bytes.length; ) {
    const segments = bytes[at + 26];
    let body = at + 27 + segments;
    for (let i = 0; i < segments; i++) {
      const lace = bytes[at + 27 + i];
      pending.push(Buffer.from(bytes.subarray(body, body + lace)));
      body += lace;
      if (lace < 255) {
        packets.push(new Uint8Array(Buffer.concat(pending)));
        pending = [];
      }
    }
    at = body;
  }
  return packets;
}

let vorbisParts: { headers: Uint8Array[]; silent: Uint8Array } | undefined;

/**
 * Ogg Vorbis, 8 kHz mono: ffmpeg's three header packets, then one silent packet again and again.
 * `honestGranules` false leaves every page's granule position at 0, so the length is only known
 * by decoding.
 */
export function vorbisBomb(seconds: number, honestGranules = true): Uint8Array {
  vorbisParts ??= (() => {
    const packets = oggPacketsOf(ffmpegSilence(['-c:a', 'libvorbis', '-f', 'ogg']));
    return { headers: packets.slice(0, 3), silent: packets[Math.floor(packets.length / 2)] };
  })();
  // libvorbis codes silence at 8 kHz in short blocks: 256 new samples per packet.
  const count = Math.ceil((seconds * 8_000) / 256);
  return oggStream([...vorbisParts.headers, ...new Array<Uint8Array>(count).fill(vorbisParts.silent)], () => (honestGranules ? 256 : 0), 3);
}

let silentAdts: Uint8Array | undefined;

/** ADTS AAC (no container, left to ffmpeg): one silent 1024-sample frame at 8 kHz, repeated. */
export function adtsBomb(seconds: number): Uint8Array {
  silentAdts ??= (() => {
    const bytes = ffmpegSilence(['-c:a', 'aac', '-b:a', '8k', '-f', 'adts']);
    const frames: Uint8Array[] = [];
    for (let at = 0; at + 7 <= bytes.length; ) {
      const length = ((bytes[at + 3] & 3) << 11) | (bytes[at + 4] << 3) | (bytes[at + 5] >> 5);
      if (length < 7) break;
      frames.push(bytes.subarray(at, at + length));
      at += length;
    }
    return frames[Math.floor(frames.length / 2)];
  })();
  const count = Math.ceil((seconds * 8_000) / 1_024);
  const out = new Uint8Array(count * silentAdts.length);
  for (let i = 0; i < count; i++) out.set(silentAdts, i * silentAdts.length);
  return out;
}

/** Every bomb, by codec name, at `seconds` (the FLAC twice: declared length, and "unknown"). */
export function allBombs(seconds: number): Record<string, { bytes: Uint8Array; contentType: string }> {
  return {
    'flac (length declared)': { bytes: flacBomb(seconds, true), contentType: 'audio/flac' },
    'flac (length unknown)': { bytes: flacBomb(seconds, false), contentType: 'audio/flac' },
    mp3: { bytes: mp3Bomb(seconds), contentType: 'audio/mpeg' },
    'ogg opus': { bytes: oggOpusBomb(seconds), contentType: 'audio/ogg' },
    'webm opus': { bytes: webmOpusBomb(seconds), contentType: 'audio/webm' },
    'ogg vorbis (granules declared)': { bytes: vorbisBomb(seconds, true), contentType: 'audio/ogg' },
    'ogg vorbis (granules lie)': { bytes: vorbisBomb(seconds, false), contentType: 'audio/ogg' },
    'adts aac (ffmpeg)': { bytes: adtsBomb(seconds), contentType: 'audio/aac' },
  };
}
