/**
 * MP3, FLAC, Ogg Vorbis and Ogg Opus through the wasm-audio-decoders family. Each call makes its
 * own decoder instance and frees it in `finally`: an instance holds per-stream state, so sharing
 * one across concurrent requests would mix them, while the compiled WASM module itself is cached
 * by the library, so a new instance costs well under a millisecond.
 *
 * Input is fed in slices with a turn of the event loop between them: the decoders are synchronous
 * WASM underneath, and a 25 MB upload in one call would hold the loop for seconds.
 */
import { FLACDecoder } from '@wasm-audio-decoders/flac';
import { OggVorbisDecoder } from '@wasm-audio-decoders/ogg-vorbis';
import { MPEGDecoder } from 'mpg123-decoder';
import { OggOpusDecoder } from 'ogg-opus-decoder';
import { UnsupportedAudioError } from '../errors.js';
import { concatFloat32, mixToMono } from './channel-mix.js';
import type { PcmAudio } from './pcm.js';
import { yieldToEventLoop } from './event-loop.js';

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

/** Input bytes per slice. 64 KB is ~4 s of 128 kbps MP3, tens of milliseconds of decoding. */
const SLICE_BYTES = 64 * 1024;

async function decodeInSlices(decoder: StreamDecoder, bytes: Uint8Array, codec: string): Promise<PcmAudio> {
  const parts: Float32Array[] = [];
  let sampleRate = 0;
  const collect = (decoded: DecodedAudio) => {
    if (decoded.samplesDecoded <= 0) return;
    sampleRate ||= decoded.sampleRate;
    parts.push(mixToMono(decoded.channelData, decoded.samplesDecoded));
  };
  try {
    await decoder.ready;
    for (let offset = 0; offset < bytes.length; offset += SLICE_BYTES) {
      collect(await decoder.decode(bytes.subarray(offset, offset + SLICE_BYTES)));
      await yieldToEventLoop();
    }
    if (decoder.flush) collect(await decoder.flush());
  } catch (error) {
    throw new UnsupportedAudioError(`Corrupt ${codec} data: ${(error as Error).message}`);
  } finally {
    decoder.free();
  }
  const samples = concatFloat32(parts);
  if (samples.length === 0 || !(sampleRate > 0)) throw new UnsupportedAudioError(`No ${codec} audio could be decoded`);
  return { samples, sampleRate };
}

export function decodeMp3(bytes: Uint8Array): Promise<PcmAudio> {
  return decodeInSlices(new MPEGDecoder(), bytes, 'MP3');
}

export function decodeFlac(bytes: Uint8Array): Promise<PcmAudio> {
  return decodeInSlices(new FLACDecoder(), bytes, 'FLAC');
}

export function decodeOggVorbis(bytes: Uint8Array): Promise<PcmAudio> {
  return decodeInSlices(new OggVorbisDecoder(), bytes, 'Ogg Vorbis');
}

export function decodeOggOpus(bytes: Uint8Array): Promise<PcmAudio> {
  return decodeInSlices(new OggOpusDecoder(), bytes, 'Ogg Opus');
}
