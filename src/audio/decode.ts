/**
 * Bytes in any accepted format → mono float samples, at the rate the caller
 * needs (`sampleRate`; the file's own rate when not given), never more than `maxSeconds` of them.
 * The container is sniffed from the bytes; the Content-Type only matters for headerless PCM.
 *
 * The cap is checked against what the header declares before anything is allocated, and again
 * against what the decoder produces, chunk by chunk, so a decompression bomb stops at the cap.
 * Every failure surfaces as UnsupportedAudioError (or AudioTooLongError, AbortedError,
 * OverloadedError when ffmpeg's slots are full), whatever the decoder underneath threw.
 */
import { UnsupportedAudioError } from '../errors.js';
import { openAiff } from './aiff.js';
import { decodeFlac, decodeMp3, decodeOggOpus, decodeOggVorbis } from './codec-decoders.js';
import { yieldToEventLoop } from '../concurrency/event-loop.js';
import type { ConcurrencyLimit } from '../concurrency/concurrency-limit.js';
import { createFfmpegRunner, type FfmpegRunner } from './ffmpeg.js';
import { decodeMatroskaOpus } from './matroska-opus.js';
import { collect, DEFAULT_MAX_AUDIO_SECONDS, RefusedAudioHeaderError, type PcmCollector } from './pcm-collector.js';
import type { PcmAudio, PcmSource } from './pcm.js';
import { openRawPcm, rawFormatFromHint } from './raw-pcm.js';
import { type AudioContainer, sniffContainer } from './sniff.js';
import { openWav } from './wav.js';

export interface DecodeHint {
  contentType?: string;
  filename?: string;
}

export interface DecodeOptions {
  /** Rate of the samples returned; default the file's own rate. */
  sampleRate?: number;
  /** Longest audio accepted (seconds, default 2 hours); longer input is AudioTooLongError. */
  maxSeconds?: number;
  /** ffmpeg behind its limits, or false to never use it. Default: `ffmpeg` on the PATH with default limits. */
  ffmpeg?: FfmpegRunner | false;
  /** Stops decoding (and kills ffmpeg) when the client goes away. */
  signal?: AbortSignal;
  /**
   * Decodes running at once in this process. Each holds up to `maxSeconds` of audio, so this is
   * what bounds decoding memory across requests. Default: no limit.
   */
  concurrency?: ConcurrencyLimit;
}

type NativeDecoder = (bytes: Uint8Array, collector: PcmCollector, sampleRate: number | undefined) => Promise<void>;

/** Frames of uncompressed audio decoded between turns of the event loop (5 s at 48 kHz). */
const PCM_BLOCK_FRAMES = 240_000;

/** Uncompressed audio: the header proves the length, checked before a block is read. */
function pcmDecoder(open: (bytes: Uint8Array) => PcmSource): NativeDecoder {
  return async (bytes, collector) => {
    const source = open(bytes);
    await collector.begin(source.sampleRate, source.frames);
    for (let at = 0; at < source.frames; at += PCM_BLOCK_FRAMES) {
      collector.push(source.read(at, at + PCM_BLOCK_FRAMES));
      if (at + PCM_BLOCK_FRAMES < source.frames) await yieldToEventLoop();
    }
  };
}

const nativeDecoders: Partial<Record<AudioContainer, NativeDecoder>> = {
  wav: pcmDecoder(openWav),
  aiff: pcmDecoder(openAiff),
  mp3: decodeMp3,
  flac: decodeFlac,
  'ogg-vorbis': decodeOggVorbis,
  'ogg-opus': decodeOggOpus,
  matroska: decodeMatroskaOpus,
};

let defaultFfmpeg: FfmpegRunner | undefined;

export async function decodeAudio(bytes: Uint8Array, hint: DecodeHint = {}, options: DecodeOptions = {}): Promise<PcmAudio> {
  return boundedDecode(bytes, options, () => decodeNow(bytes, hint, options));
}

/** The check and the concurrency bound every decode goes through, around `decode` (run here, or in a worker thread). */
export async function boundedDecode(bytes: Uint8Array, options: Pick<DecodeOptions, 'concurrency' | 'signal'>, decode: () => Promise<PcmAudio>): Promise<PcmAudio> {
  if (bytes.length === 0) throw new UnsupportedAudioError('The audio is empty');
  return options.concurrency ? options.concurrency.run(decode, options.signal) : decode();
}

/** The ffmpeg runner the options name: unset, one for `ffmpeg` on the PATH with default limits; false, none. */
export function ffmpegOf(options: Pick<DecodeOptions, 'ffmpeg'>): FfmpegRunner | null {
  return options.ffmpeg === false ? null : (options.ffmpeg ?? (defaultFfmpeg ??= createFfmpegRunner()));
}

async function decodeNow(bytes: Uint8Array, hint: DecodeHint, options: DecodeOptions): Promise<PcmAudio> {
  const { sampleRate, signal } = options;
  const limits = { sampleRate, signal, maxSeconds: options.maxSeconds ?? DEFAULT_MAX_AUDIO_SECONDS };
  const container = sniffContainer(bytes);

  let native = nativeDecoders[container];
  if (!native && container === 'unknown') {
    const raw = rawFormatFromHint(hint.contentType, hint.filename);
    if (raw) native = pcmDecoder((b) => openRawPcm(b, raw));
  }

  let nativeError: UnsupportedAudioError | undefined;
  if (native) {
    const decode = native;
    try {
      return await collect(limits, (collector) => decode(bytes, collector, sampleRate));
    } catch (error) {
      // Only a plain "cannot decode" gets a second chance; the cap, a bad header's limits and an abort are final.
      if (!(error instanceof UnsupportedAudioError) || error instanceof RefusedAudioHeaderError || container === 'unknown') throw error;
      nativeError = error;
    }
  }

  // Formats we do not decode ourselves, and files our decoders refused (ADPCM WAV, WebM with
  // Vorbis, RIFX...), get a second chance through ffmpeg when it is installed.
  const ffmpeg = ffmpegOf(options);
  if (!ffmpeg) {
    throw nativeError ?? new UnsupportedAudioError(`Unsupported audio format (${describe(container)}); installing ffmpeg adds support for more formats`);
  }
  try {
    return await collect(limits, (collector) => ffmpeg.decode(bytes, collector, { signal, seekable: container === 'mp4' }));
  } catch (error) {
    // The native decoder's reason is more specific than ffmpeg's for formats we know.
    throw nativeError && error instanceof UnsupportedAudioError ? nativeError : error;
  }
}

function describe(container: AudioContainer): string {
  return container === 'unknown' ? 'unrecognised data' : container;
}
