/**
 * Opus packets, from Ogg or WebM/Matroska, into a PcmCollector. Every packet's length in samples
 * is in its first byte (the TOC, RFC 6716 section 3.1), so the whole stream is measured and its
 * packets checked before a single one is decoded: an Opus file longer than the cap is refused
 * without decoding, and libopus only ever sees well-formed packets. Decoding runs at the target
 * rate when libopus offers it (8, 12, 16, 24 or 48 kHz), which skips a resampling step.
 */
import { OpusDecoder } from 'opus-decoder';
import { AudioTooLongError, UnsupportedAudioError } from '../errors.js';
import { yieldToEventLoop } from '../concurrency/event-loop.js';
import { asDecodeError, MAX_CHANNELS, RefusedAudioHeaderError, type PcmCollector } from './pcm-collector.js';

/** Opus track header (RFC 7845 section 5.1): the Ogg ID packet, or Matroska's CodecPrivate. */
export interface OpusHead {
  channels: number;
  preSkip: number;
  streamCount?: number;
  coupledStreamCount?: number;
  channelMappingTable?: number[];
}

const OPUS_RATE = 48_000;
const LIBOPUS_RATES = [8_000, 12_000, 16_000, 24_000, 48_000];
/** Samples (at 48 kHz) of one frame, by TOC configuration number (RFC 6716 table 2). */
const FRAME_SAMPLES = [
  ...[480, 960, 1920, 2880, 480, 960, 1920, 2880, 480, 960, 1920, 2880], // SILK NB/MB/WB: 10, 20, 40, 60 ms
  ...[480, 960, 480, 960], // hybrid SWB/FB: 10, 20 ms
  ...[120, 240, 480, 960, 120, 240, 480, 960, 120, 240, 480, 960, 120, 240, 480, 960], // CELT: 2.5, 5, 10, 20 ms
];
const MAX_PACKET_SAMPLES = 5_760; // 120 ms
const MAX_FRAME_BYTES = 1_275;

/** Reads an OpusHead; a missing or short one (some muxers omit CodecPrivate) means plain stereo. */
export function parseOpusHead(bytes: Uint8Array | undefined, required: boolean): OpusHead {
  const magic = bytes && bytes.length >= 8 ? String.fromCharCode(...bytes.subarray(0, 8)) : '';
  if (!bytes || magic !== 'OpusHead' || bytes.length < 19) {
    if (required) throw new UnsupportedAudioError('Invalid OpusHead');
    return { channels: 2, preSkip: 0 };
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const channels = bytes[9];
  const preSkip = view.getUint16(10, true);
  const family = bytes[18];
  if (channels < 1 || channels > MAX_CHANNELS) throw new RefusedAudioHeaderError(`Opus stream declares ${channels} channels (1 to ${MAX_CHANNELS} are accepted)`);
  if (family === 0) {
    if (channels > 2) throw new UnsupportedAudioError('Opus mapping family 0 allows at most 2 channels');
    return { channels, preSkip };
  }
  if (bytes.length < 21 + channels) throw new UnsupportedAudioError('Truncated Opus channel mapping');
  const streamCount = bytes[19];
  const coupledStreamCount = bytes[20];
  const channelMappingTable = Array.from(bytes.subarray(21, 21 + channels));
  const coded = streamCount + coupledStreamCount;
  if (streamCount < 1 || coupledStreamCount > streamCount || coded > 255 || channelMappingTable.some((c) => c !== 255 && c >= coded)) {
    throw new UnsupportedAudioError('Invalid Opus channel mapping');
  }
  return { channels, preSkip, streamCount, coupledStreamCount, channelMappingTable };
}

/**
 * Samples (at 48 kHz) the packet decodes to, after checking its framing the way libopus's
 * opus_packet_parse does; UnsupportedAudioError for a malformed packet.
 */
export function opusPacketSamples(packet: Uint8Array): number {
  if (packet.length === 0) throw new UnsupportedAudioError('Empty Opus packet');
  const toc = packet[0];
  const frameSamples = FRAME_SAMPLES[toc >> 3];
  const code = toc & 3;
  let frames: number;
  if (code === 0) {
    frames = 1;
    if (packet.length - 1 > MAX_FRAME_BYTES) throw corrupt();
  } else if (code === 1) {
    frames = 2;
    if ((packet.length - 1) % 2 !== 0 || (packet.length - 1) / 2 > MAX_FRAME_BYTES) throw corrupt();
  } else if (code === 2) {
    frames = 2;
    const { value, length } = frameLength(packet, 1);
    if (value > packet.length - 1 - length || packet.length - 1 - length - value > MAX_FRAME_BYTES) throw corrupt();
  } else {
    if (packet.length < 2) throw corrupt();
    frames = packet[1] & 0x3f;
    if (frames === 0) throw corrupt();
    const vbr = packet[1] & 0x80;
    let at = 2;
    let padding = 0;
    if (packet[1] & 0x40) {
      let byte: number;
      do {
        if (at >= packet.length) throw corrupt();
        byte = packet[at++];
        padding += byte === 255 ? 254 : byte;
      } while (byte === 255);
    }
    let left = packet.length - at - padding;
    if (left < 0) throw corrupt();
    if (vbr) {
      for (let i = 0; i < frames - 1; i++) {
        const { value, length } = frameLength(packet, at);
        at += length;
        left -= length + value;
        if (value > MAX_FRAME_BYTES || left < 0) throw corrupt();
      }
      if (left > MAX_FRAME_BYTES) throw corrupt();
    } else if (left % frames !== 0 || left / frames > MAX_FRAME_BYTES) {
      throw corrupt();
    }
  }
  const samples = frames * frameSamples;
  if (samples > MAX_PACKET_SAMPLES) throw corrupt();
  return samples;
}

function frameLength(packet: Uint8Array, at: number): { value: number; length: number } {
  if (at >= packet.length) throw corrupt();
  const first = packet[at];
  if (first < 252) return { value: first, length: 1 };
  if (at + 1 >= packet.length) throw corrupt();
  return { value: first + 4 * packet[at + 1], length: 2 };
}

function corrupt(): UnsupportedAudioError {
  return new UnsupportedAudioError('Malformed Opus packet');
}

/** Packets handed to libopus per call before the event loop gets a turn: ~2 s at the longest packets. */
const SAMPLES_PER_BATCH = 100_000;

/**
 * Measures and checks every packet (`packets` is iterated twice), refuses a stream longer than the
 * cap, then decodes into `collector` at its target rate where libopus can.
 */
export async function decodeOpusPackets(
  packets: () => Iterable<Uint8Array>,
  head: OpusHead,
  collector: PcmCollector,
  targetRate: number | undefined,
): Promise<void> {
  const rate = targetRate !== undefined && LIBOPUS_RATES.includes(targetRate) ? targetRate : OPUS_RATE;
  let total = 0;
  for (const packet of packets()) {
    total += opusPacketSamples(packet);
    // Checked as it grows: a bomb of millions of tiny packets stops here after the cap, not at the end.
    if (total > collector.maxSeconds * OPUS_RATE + MAX_PACKET_SAMPLES) throw new AudioTooLongError(collector.maxSeconds);
  }
  const frames = Math.max(0, Math.round(((total - head.preSkip) * rate) / OPUS_RATE));
  if (frames === 0) throw new UnsupportedAudioError('The Opus stream holds no audio');
  if (!collector.started) await collector.begin(rate, frames);

  const decoder = new OpusDecoder({ ...head, sampleRate: rate as 48000 });
  try {
    await decoder.ready;
    let batch: Uint8Array[] = [];
    let batchSamples = 0;
    const flush = async () => {
      const decoded = decoder.decodeFrames(batch);
      if (decoded.errors.length > 0) throw new UnsupportedAudioError(`Corrupt Opus data: ${decoded.errors[0].message}`);
      collector.pushChannels(decoded.channelData, decoded.samplesDecoded);
      batch = [];
      batchSamples = 0;
      await yieldToEventLoop();
    };
    for (const packet of packets()) {
      batch.push(packet);
      batchSamples += opusPacketSamples(packet);
      if (batchSamples >= SAMPLES_PER_BATCH) await flush();
    }
    if (batch.length > 0) await flush();
  } catch (error) {
    throw asDecodeError(error, 'Opus');
  } finally {
    decoder.free();
  }
}
