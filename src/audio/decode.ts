/**
 * Bytes in any accepted format → mono float samples at the file's own rate (decisions.md 22).
 * The container is sniffed from the bytes; the Content-Type only matters for headerless PCM.
 * Every failure surfaces as UnsupportedAudioError, whatever the decoder underneath threw.
 */
import { UnsupportedAudioError } from '../errors.js';
import { parseAiff } from './aiff.js';
import { decodeFlac, decodeMp3, decodeOggOpus, decodeOggVorbis } from './codec-decoders.js';
import { decodeWithFfmpeg, findFfmpeg } from './ffmpeg.js';
import { decodeMatroskaOpus } from './matroska-opus.js';
import type { PcmAudio } from './pcm.js';
import { parseRawPcm, rawFormatFromHint } from './raw-pcm.js';
import { type AudioContainer, sniffContainer } from './sniff.js';
import { parseWav } from './wav.js';

export interface DecodeHint {
  contentType?: string;
  filename?: string;
}

export interface DecodeOptions {
  /** Path of the ffmpeg binary, or false to never use it. Default: `ffmpeg` on the PATH, if any. */
  ffmpeg?: string | false;
  /** Kill an ffmpeg decode after this long (default 120 s). */
  ffmpegTimeoutMs?: number;
}

type NativeDecoder = (bytes: Uint8Array) => PcmAudio | Promise<PcmAudio>;

const nativeDecoders: Partial<Record<AudioContainer, NativeDecoder>> = {
  wav: parseWav,
  aiff: parseAiff,
  mp3: decodeMp3,
  flac: decodeFlac,
  'ogg-vorbis': decodeOggVorbis,
  'ogg-opus': decodeOggOpus,
  matroska: decodeMatroskaOpus,
};

export async function decodeAudio(bytes: Uint8Array, hint: DecodeHint = {}, options: DecodeOptions = {}): Promise<PcmAudio> {
  if (bytes.length === 0) throw new UnsupportedAudioError('The audio is empty');
  const container = sniffContainer(bytes);

  let native = nativeDecoders[container];
  if (!native && container === 'unknown') {
    const raw = rawFormatFromHint(hint.contentType, hint.filename);
    if (raw) native = (b) => parseRawPcm(b, raw);
  }

  let nativeError: UnsupportedAudioError | undefined;
  if (native) {
    try {
      const audio = await native(bytes);
      // Only float PCM can carry NaN/Infinity; codec output is always finite.
      return container === 'wav' || container === 'aiff' ? sanitize(audio) : checkNotEmpty(audio);
    } catch (error) {
      nativeError = asUnsupported(error);
    }
  }

  // Formats we do not decode ourselves, and files our decoders refused (ADPCM WAV, WebM with
  // Vorbis, RIFX...), get a second chance through ffmpeg when it is installed.
  const ffmpeg = options.ffmpeg === false ? null : (options.ffmpeg ?? (await findFfmpeg()));
  if (!ffmpeg) {
    throw nativeError ?? new UnsupportedAudioError(`Unsupported audio format (${describe(container)}); installing ffmpeg adds support for more formats`);
  }
  try {
    return sanitize(
      await decodeWithFfmpeg(bytes, ffmpeg, { seekable: container === 'mp4', timeoutMs: options.ffmpegTimeoutMs }),
    );
  } catch (error) {
    // The native decoder's reason is more specific than ffmpeg's for formats we know.
    throw nativeError ?? asUnsupported(error);
  }
}

function describe(container: AudioContainer): string {
  return container === 'unknown' ? 'unrecognised data' : container;
}

function asUnsupported(error: unknown): UnsupportedAudioError {
  if (error instanceof UnsupportedAudioError) return error;
  return new UnsupportedAudioError(`The audio could not be decoded: ${(error as Error)?.message ?? String(error)}`);
}

function checkNotEmpty(audio: PcmAudio): PcmAudio {
  if (audio.samples.length === 0) throw new UnsupportedAudioError('The audio holds no samples');
  if (!(audio.sampleRate > 0)) throw new UnsupportedAudioError('The audio has no valid sample rate');
  return audio;
}

/** Engines choke on NaN/Infinity (a float WAV may hold them): they become silence. */
function sanitize(audio: PcmAudio): PcmAudio {
  const { samples } = checkNotEmpty(audio);
  for (let i = 0; i < samples.length; i++) if (!Number.isFinite(samples[i])) samples[i] = 0;
  return audio;
}
