/**
 * Mono PCM as it is produced → the bytes of one of the formats of OpenAI's speech API, as they
 * are produced. mp3, wav and pcm use Parley's own stream encoders; opus (Ogg) and flac come
 * from WebAssembly builds of libopus and libFLAC; aac only from ffmpeg (no npm library encodes it).
 */
import { createEncoder, type AudioEncoder } from './encode.js';
import type { FfmpegEncoder } from './ffmpeg-encode.js';
import { FlacEncoder } from './flac-encode.js';
import { OggOpusEncoder } from './ogg-opus-encode.js';

export const streamFormats = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] as const;
export type StreamFormat = (typeof streamFormats)[number];

export const streamContentTypes: Record<StreamFormat, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/ogg',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};

/** The encoder of every stream format but aac (which only ffmpeg makes). */
export async function streamEncoder(format: Exclude<StreamFormat, 'aac'>, sampleRate: number): Promise<AudioEncoder> {
  switch (format) {
    case 'opus':
      return new OggOpusEncoder(sampleRate);
    case 'flac':
      return FlacEncoder.create(sampleRate);
    default:
      // wav: the streaming header (sizes 0xFFFFFFFF), as a stream cannot know its length.
      return createEncoder(format, sampleRate, 'stream');
  }
}

/**
 * The encoded stream. The encoder is set up before the first sample is asked for, so a format
 * this server cannot make fails before the synthesis starts. Empty pieces are not yielded.
 */
export async function* encodeStream(
  format: StreamFormat,
  sampleRate: number,
  pcm: AsyncIterable<Float32Array>,
  options: { ffmpeg: FfmpegEncoder; signal: AbortSignal },
): AsyncGenerator<Uint8Array> {
  if (format === 'aac') {
    yield* options.ffmpeg.aac(pcm, sampleRate, options.signal);
    return;
  }
  yield* encodeWith(await streamEncoder(format, sampleRate), pcm);
}

/** Runs `pcm` through `encoder`: its bytes as they come (empty pieces skipped), then the end; abandoned if left early. */
export async function* encodeWith(encoder: AudioEncoder, pcm: AsyncIterable<Float32Array>): AsyncGenerator<Uint8Array> {
  let ended = false;
  try {
    for await (const samples of pcm) {
      const bytes = encoder.push(samples);
      if (bytes.length) yield bytes;
    }
    const last = encoder.end();
    ended = true;
    if (last.length) yield last;
  } finally {
    if (!ended) encoder.abandon();
  }
}
