/**
 * MP3, FLAC and Ogg Vorbis through the wasm-audio-decoders family, and Ogg Opus through our own
 * Ogg reader and libopus. Each call makes its own decoder instance and frees it in `finally`: an
 * instance holds per-stream state, so sharing one across concurrent requests would mix them, while
 * the compiled WASM module itself is cached by the library (a new instance costs well under a ms).
 *
 * Before decoding, whatever the header says about the length is checked against the cap (FLAC
 * STREAMINFO, the MP3 frames counted from their headers). Then input is fed in slices, with a turn
 * of the event loop between them, and every slice's output goes through the PcmCollector, which
 * stops the decoder the moment the cap is passed. The slice size adapts to the expansion seen so
 * far: a FLAC frame of silence can be 20 bytes for 65,535 samples on 8 channels, so a fixed 64 KB
 * slice could make gigabytes in one call, inside the WASM heap, before anything could count them.
 */
import { FLACDecoder } from '@wasm-audio-decoders/flac';
import { OggVorbisDecoder } from '@wasm-audio-decoders/ogg-vorbis';
import { MPEGDecoder } from 'mpg123-decoder';
import { AudioTooLongError, UnsupportedAudioError } from '../errors.js';
import { yieldToEventLoop } from '../concurrency/event-loop.js';
import { oggGranuleSpan, oggPackets } from './ogg.js';
import { decodeOpusPackets, parseOpusHead } from './opus.js';
import { asDecodeError, checkDeclaredFormat, RefusedAudioHeaderError, type PcmCollector } from './pcm-collector.js';
import { id3Length, mpegFrameLength, mpegFrameSeconds } from './sniff.js';

/** What every decoder in the family returns. */
interface DecodedAudio {
  channelData: Float32Array[];
  samplesDecoded: number;
  sampleRate: number;
}

interface StreamDecoder {
  ready: Promise<void>;
  free(): void;
  decode(data: Uint8Array): DecodedAudio | Promise<DecodedAudio>;
  flush?(): Promise<DecodedAudio>;
}

/** First slice: small enough that even the densest FLAC frames stay within ~50 MB of output. */
const FIRST_SLICE_BYTES = 512;
/** Largest slice: 64 KB is ~4 s of 128 kbps MP3, tens of milliseconds of decoding. */
const MAX_SLICE_BYTES = 64 * 1024;
/** Output samples (all channels) aimed at per decoder call: 8 MB of floats. */
const SAMPLES_PER_CALL = 2 * 1024 * 1024;

async function decodeInSlices(decoder: StreamDecoder, bytes: Uint8Array, codec: string, collector: PcmCollector): Promise<void> {
  let outputSamples = 0;
  const take = async (decoded: DecodedAudio) => {
    if (decoded.samplesDecoded <= 0) return;
    if (!collector.started) await collector.begin(decoded.sampleRate);
    outputSamples += decoded.samplesDecoded * decoded.channelData.length;
    collector.pushChannels(decoded.channelData, decoded.samplesDecoded);
  };
  try {
    await decoder.ready;
    let slice = FIRST_SLICE_BYTES;
    for (let offset = 0; offset < bytes.length; ) {
      const end = Math.min(bytes.length, offset + slice);
      await take(await decoder.decode(bytes.subarray(offset, end)));
      offset = end;
      const samplesPerByte = outputSamples / offset;
      slice = Math.max(FIRST_SLICE_BYTES, Math.min(MAX_SLICE_BYTES, Math.floor(SAMPLES_PER_CALL / Math.max(samplesPerByte, 1))));
      await yieldToEventLoop();
    }
    if (decoder.flush) await take(await decoder.flush());
  } catch (error) {
    throw asDecodeError(error, codec);
  } finally {
    decoder.free();
  }
  if (!collector.started) throw new UnsupportedAudioError(`No ${codec} audio could be decoded`);
}

/**
 * Seconds of audio in the MPEG frames found by walking their headers (the sync is looked for
 * again after bytes that are no frame). Refuses a file past the cap before anything is decoded.
 */
function checkMp3Length(bytes: Uint8Array, collector: PcmCollector): void {
  let seconds = 0;
  for (let at = id3Length(bytes); at + 4 <= bytes.length; ) {
    const length = mpegFrameLength(bytes, at);
    if (length === 0) {
      at++;
      continue;
    }
    seconds += mpegFrameSeconds(bytes, at);
    if (seconds > collector.maxSeconds) throw new AudioTooLongError(collector.maxSeconds);
    at += length;
  }
}

export function decodeMp3(bytes: Uint8Array, collector: PcmCollector): Promise<void> {
  checkMp3Length(bytes, collector);
  return decodeInSlices(new MPEGDecoder(), bytes, 'MP3', collector);
}

/**
 * STREAMINFO (always the first metadata block) gives rate, channels, bit depth and, when the
 * encoder knew it, the total length: all are checked before decoding.
 */
async function checkFlacHeader(bytes: Uint8Array, collector: PcmCollector): Promise<void> {
  const at = id3Length(bytes) + 4; // after "fLaC"
  if (at + 4 + 34 > bytes.length || (bytes[at] & 0x7f) !== 0) throw new UnsupportedAudioError('FLAC file lacks its STREAMINFO block');
  const info = at + 4;
  const sampleRate = (bytes[info + 10] << 12) | (bytes[info + 11] << 4) | (bytes[info + 12] >> 4);
  const channels = ((bytes[info + 12] >> 1) & 7) + 1;
  const bitsPerSample = (((bytes[info + 12] & 1) << 4) | (bytes[info + 13] >> 4)) + 1;
  const totalSamples = (bytes[info + 13] & 0x0f) * 2 ** 32 + ((bytes[info + 14] << 24) >>> 0) + (bytes[info + 15] << 16) + (bytes[info + 16] << 8) + bytes[info + 17];
  checkDeclaredFormat('FLAC file', sampleRate, channels);
  if (bitsPerSample < 4) throw new RefusedAudioHeaderError(`FLAC file declares ${bitsPerSample}-bit samples`);
  await collector.begin(sampleRate);
  // 0 means "unknown": the frames are counted as they are decoded instead.
  if (totalSamples > 0) collector.checkLength(totalSamples);
}

export async function decodeFlac(bytes: Uint8Array, collector: PcmCollector): Promise<void> {
  await checkFlacHeader(bytes, collector);
  return decodeInSlices(new FLACDecoder(), bytes, 'FLAC', collector);
}

/**
 * The Vorbis identification header declares rate and channels, and the pages' granule positions
 * the length: checked before decoding (the decoder's output is counted all the same, for pages
 * that lie).
 */
function checkVorbisHeader(bytes: Uint8Array, collector: PcmCollector): void {
  const packet = 27 + bytes[26];
  if (packet + 16 > bytes.length) throw new UnsupportedAudioError('Truncated Vorbis header');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const sampleRate = view.getUint32(packet + 12, true);
  checkDeclaredFormat('Vorbis stream', sampleRate, bytes[packet + 11]);
  if (oggGranuleSpan(bytes) / sampleRate > collector.maxSeconds) throw new AudioTooLongError(collector.maxSeconds);
}

export function decodeOggVorbis(bytes: Uint8Array, collector: PcmCollector): Promise<void> {
  checkVorbisHeader(bytes, collector);
  return decodeInSlices(new OggVorbisDecoder(), bytes, 'Ogg Vorbis', collector);
}

/** Ogg Opus: the OpusHead packet, OpusTags, then audio packets. */
export async function decodeOggOpus(bytes: Uint8Array, collector: PcmCollector, targetRate: number | undefined): Promise<void> {
  const first = oggPackets(bytes).next();
  const head = parseOpusHead(first.done ? undefined : first.value, true);
  function* audioPackets(): Generator<Uint8Array> {
    let index = 0;
    for (const packet of oggPackets(bytes)) if (index++ >= 2) yield packet;
  }
  await decodeOpusPackets(audioPackets, head, collector, targetRate);
}
