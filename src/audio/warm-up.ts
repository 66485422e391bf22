/**
 * Compiles and runs once every encoder and decoder the server offers, so that no client pays for
 * it: WebAssembly modules (LAME, libopus, libFLAC, mpg123, Vorbis, the Speex resampler) compile on
 * first use, and the first Ogg Opus response took 2.4 s where later ones took 110 ms. A quarter
 * second of tone goes through each encoder, and the encoded files back through the decoders.
 * Returns the names of what it ran. WebAssembly is compiled per thread: each thread that encodes
 * or decodes runs this itself.
 */
import { OggVorbisDecoder } from '@wasm-audio-decoders/ogg-vorbis';
import { decodeAudio } from './decode.js';
import { concatBytes, createEncoder, type AudioEncoder } from './encode.js';
import type { FfmpegEncoder } from './ffmpeg-encode.js';
import { FlacEncoder } from './flac-encode.js';
import { OggOpusEncoder } from './ogg-opus-encode.js';
import { outputFormats } from './pcm.js';
import { PIPELINE_SLICE } from './pipeline.js';
import { createStreamingResampler } from './resample.js';
import { createStreamDecoder } from './stream-decoder.js';

const RATE = 24_000;

function tone(rate: number, seconds: number): Float32Array {
  const out = new Float32Array(Math.round(rate * seconds));
  for (let i = 0; i < out.length; i++) out[i] = 0.3 * Math.sin((2 * Math.PI * 440 * i) / rate);
  return out;
}

/**
 * Seconds of a voice-like sound (a gliding pitch with harmonics and a little noise) each output
 * encoder and the resampler run on, in the slices synthesis pushes. libFLAC (asm.js) and the
 * resampler's glue are JavaScript that V8 optimises only as it runs: measured, after a quarter
 * second of tone a first FLAC response still cost 174 ms of its thread's CPU against 92 ms later.
 */
const LONG_SECONDS = 3;

function voiceLike(rate: number, seconds: number): Float32Array {
  const out = new Float32Array(Math.round(rate * seconds));
  let phase = 0;
  let noise = 1;
  for (let i = 0; i < out.length; i++) {
    phase += (2 * Math.PI * (120 + 60 * Math.sin((2 * Math.PI * i) / rate))) / rate;
    noise = (noise * 16807) % 2147483647;
    out[i] = 0.2 * Math.sin(phase) + 0.1 * Math.sin(2 * phase) + 0.05 * Math.sin(5 * phase) + 0.01 * (noise / 2147483647 - 0.5);
  }
  return out;
}

/** `samples` through `process` in PIPELINE_SLICE pieces, as synthesis hands them over. */
function inSlices<T>(samples: Float32Array, process: (slice: Float32Array) => T): T[] {
  const out: T[] = [];
  for (let at = 0; at < samples.length; at += PIPELINE_SLICE) out.push(process(samples.subarray(at, at + PIPELINE_SLICE)));
  return out;
}

async function runResampler(from: number, to: number, seconds = 0.25): Promise<void> {
  const resampler = await createStreamingResampler(from, to);
  inSlices(voiceLike(from, seconds), (slice) => resampler.process(slice));
  resampler.flush();
}

function run(encoder: AudioEncoder, samples: Float32Array): Uint8Array {
  return concatBytes([...inSlices(samples, (slice) => encoder.push(slice)), encoder.end()]);
}

/** The encoders of synthesis output and the resampler (what an output worker thread runs). */
export async function warmUpEncoders(): Promise<{ warmed: string[]; files: Record<string, Uint8Array> }> {
  const warmed: string[] = [];
  const files: Record<string, Uint8Array> = {};
  // eSpeak's rate to the default output rate.
  await runResampler(22050, RATE, LONG_SECONDS);
  warmed.push('resampler');
  // Streams (what responses use) run long; the short files are what the decoders warm on.
  const long = voiceLike(RATE, LONG_SECONDS);
  const samples = tone(RATE, 0.25);
  for (const format of outputFormats) {
    run(await createEncoder(format, RATE, 'stream'), long);
    files[`${format}-file`] = run(await createEncoder(format, RATE, 'file'), samples);
    warmed.push(format);
  }
  run(new OggOpusEncoder(RATE), long);
  files.opus = run(new OggOpusEncoder(RATE), samples);
  warmed.push('opus');
  run(await FlacEncoder.create(RATE), long);
  files.flac = run(await FlacEncoder.create(RATE), samples);
  warmed.push('flac');
  return { warmed, files };
}

/** Encoded samples of the upload formats, made by the encoders at warm-up, for warming the decoders. */
export type WarmUpUploads = Partial<Record<'wav' | 'mp3' | 'flac' | 'opus', Uint8Array>>;

/**
 * Every encoder, every decoder of uploads and of streaming input, and aac through ffmpeg when
 * given. `uploads` are the encoded samples a decoding thread warms its own decoders with.
 */
export async function warmUpCodecs(options: { ffmpeg?: FfmpegEncoder } = {}): Promise<{ warmed: string[]; uploads: WarmUpUploads }> {
  const { warmed, files } = await warmUpEncoders();
  const uploads: WarmUpUploads = { wav: files['wav-file'], mp3: files['mp3-file'], flac: files.flac, opus: files.opus };
  warmed.push(...(await warmUpDecoders(uploads)));
  const opus = await createStreamDecoder('opus', 48000);
  opus.free();
  warmed.push('stream decode opus');
  if (options.ffmpeg) {
    const pcm = (async function* () {
      yield tone(RATE, 0.25);
    })();
    try {
      for await (const bytes of options.ffmpeg.aac(pcm, RATE, new AbortController().signal)) void bytes;
      warmed.push('aac');
    } catch {
      // No ffmpeg on this machine: aac requests are refused with a 400 that says so.
    }
  }
  return { warmed, uploads };
}

/** The decoders of uploads and the resampler to transcription's rate (what a decode worker thread runs). */
export async function warmUpDecoders(uploads: WarmUpUploads): Promise<string[]> {
  const warmed: string[] = [];
  for (const from of [RATE, 44100, 48000]) await runResampler(from, 16000);
  warmed.push('resampler');
  for (const [name, bytes] of Object.entries(uploads)) {
    if (!bytes) continue;
    await decodeAudio(bytes, {}, { sampleRate: 16000, ffmpeg: false });
    warmed.push(`decode ${name}`);
  }
  // No encoder here makes Vorbis: compiling its decoder is the part worth doing ahead.
  const vorbis = new OggVorbisDecoder();
  await vorbis.ready;
  vorbis.free();
  warmed.push('decode vorbis');
  return warmed;
}
