/**
 * One known speech recording in every upload format of decisions.md point 22, made with ffmpeg
 * into a temp dir (once per test file). Each variant says the Content-Type a client would send
 * and how close its decoded audio is to the 16-bit WAV reference:
 * - `exact`: the same samples (wider PCM of 16-bit samples, float, FLAC);
 * - `quantised`: PCM that loses resolution or is resampled (8-bit, G.711, stereo 44.1 kHz);
 * - `lossy`: a perceptual codec (mp3, vorbis, opus, aac).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const FFMPEG = process.env.PARLEY_TEST_FFMPEG ?? '/usr/bin/ffmpeg';

export type Fidelity = 'exact' | 'quantised' | 'lossy';

export interface FormatSpec {
  name: string;
  file: string;
  contentType: string;
  fidelity: Fidelity;
  /** ffmpeg output arguments (before the output path). */
  args: string[];
}

export interface AudioVariant {
  name: string;
  contentType: string;
  fidelity: Fidelity;
  bytes: Uint8Array;
}

export const formatSpecs: FormatSpec[] = [
  { name: 'wav pcm 16-bit', file: 's16.wav', contentType: 'audio/wav', fidelity: 'exact', args: ['-c:a', 'pcm_s16le'] },
  { name: 'wav pcm 24-bit', file: 's24.wav', contentType: 'audio/wav', fidelity: 'exact', args: ['-c:a', 'pcm_s24le'] },
  { name: 'wav pcm 32-bit int', file: 's32.wav', contentType: 'audio/x-wav', fidelity: 'exact', args: ['-c:a', 'pcm_s32le'] },
  { name: 'wav float32', file: 'f32.wav', contentType: 'audio/wave', fidelity: 'exact', args: ['-c:a', 'pcm_f32le'] },
  { name: 'flac', file: 'a.flac', contentType: 'audio/flac', fidelity: 'exact', args: ['-c:a', 'flac'] },
  { name: 'wav pcm 8-bit unsigned', file: 'u8.wav', contentType: 'audio/wav', fidelity: 'quantised', args: ['-c:a', 'pcm_u8'] },
  { name: 'wav mu-law', file: 'mulaw.wav', contentType: 'audio/wav', fidelity: 'quantised', args: ['-c:a', 'pcm_mulaw'] },
  { name: 'wav a-law', file: 'alaw.wav', contentType: 'audio/wav', fidelity: 'quantised', args: ['-c:a', 'pcm_alaw'] },
  {
    name: 'wav stereo 44.1 kHz',
    file: 'stereo44k.wav',
    contentType: 'audio/wav',
    fidelity: 'quantised',
    args: ['-ac', '2', '-ar', '44100', '-c:a', 'pcm_s16le'],
  },
  { name: 'mp3', file: 'a.mp3', contentType: 'audio/mpeg', fidelity: 'lossy', args: ['-c:a', 'libmp3lame', '-b:a', '64k'] },
  { name: 'ogg vorbis', file: 'vorbis.ogg', contentType: 'audio/ogg', fidelity: 'lossy', args: ['-c:a', 'libvorbis', '-q:a', '4'] },
  { name: 'ogg opus', file: 'opus.ogg', contentType: 'audio/ogg', fidelity: 'lossy', args: ['-c:a', 'libopus', '-b:a', '48k'] },
  { name: 'webm opus', file: 'a.webm', contentType: 'audio/webm', fidelity: 'lossy', args: ['-c:a', 'libopus', '-b:a', '48k', '-f', 'webm'] },
  { name: 'm4a aac (ffmpeg fallback)', file: 'a.m4a', contentType: 'audio/mp4', fidelity: 'lossy', args: ['-c:a', 'aac', '-b:a', '64k'] },
];

export interface FormatSet {
  dir: string;
  variants: AudioVariant[];
  /** The 16-bit WAV every other variant is compared with. */
  reference: AudioVariant;
  cleanup(): void;
}

/** Encode `source` (a mono WAV) into every format of `formatSpecs`, in parallel. */
export async function makeFormatSet(source: string, specs: FormatSpec[] = formatSpecs): Promise<FormatSet> {
  const dir = mkdtempSync(path.join(tmpdir(), 'parley-formats-'));
  const variants = await Promise.all(
    specs.map(async (spec) => {
      const out = path.join(dir, spec.file);
      try {
        await run(FFMPEG, ['-hide_banner', '-loglevel', 'error', '-nostdin', '-y', '-i', source, '-vn', '-map_metadata', '-1', ...spec.args, out]);
      } catch (err) {
        throw new Error(`ffmpeg could not make the ${spec.name} test file: ${(err as { stderr?: string }).stderr ?? (err as Error).message}`);
      }
      return { name: spec.name, contentType: spec.contentType, fidelity: spec.fidelity, bytes: new Uint8Array(readFileSync(out)) };
    }),
  );
  const reference = variants.find((v) => v.name === 'wav pcm 16-bit');
  if (!reference) throw new Error('the format set needs the 16-bit WAV reference');
  return { dir, variants, reference, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Duration in seconds of a PCM WAV (any format tag), from its fmt and data chunks. */
export function wavDuration(bytes: Uint8Array): number {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.toString('ascii', 0, 4) !== 'RIFF' || b.toString('ascii', 8, 12) !== 'WAVE') throw new Error('not a WAV file');
  let byteRate = 0;
  for (let at = 12; at + 8 <= b.length; ) {
    const id = b.toString('ascii', at, at + 4);
    const size = b.readUInt32LE(at + 4);
    if (id === 'fmt ') byteRate = b.readUInt32LE(at + 16);
    if (id === 'data') {
      if (!byteRate) throw new Error('WAV data before fmt');
      return Math.min(size, b.length - at - 8) / byteRate;
    }
    at += 8 + size + (size & 1);
  }
  throw new Error('WAV without data');
}

/** A real 16-bit WAV of `seconds` of a quiet tone (for size and timing tests that need no speech). */
export function toneWav(seconds: number, sampleRate = 16_000): Uint8Array {
  const n = Math.round(seconds * sampleRate);
  const b = Buffer.alloc(44 + n * 2);
  b.write('RIFF', 0, 'ascii');
  b.writeUInt32LE(36 + n * 2, 4);
  b.write('WAVEfmt ', 8, 'ascii');
  b.writeUInt32LE(16, 16);
  b.writeUInt16LE(1, 20);
  b.writeUInt16LE(1, 22);
  b.writeUInt32LE(sampleRate, 24);
  b.writeUInt32LE(sampleRate * 2, 28);
  b.writeUInt16LE(2, 32);
  b.writeUInt16LE(16, 34);
  b.write('data', 36, 'ascii');
  b.writeUInt32LE(n * 2, 40);
  for (let i = 0; i < n; i++) b.writeInt16LE(Math.round(3000 * Math.sin((2 * Math.PI * 220 * i) / sampleRate)), 44 + i * 2);
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

/** Lower-cased words of a text, punctuation dropped (apostrophes kept). */
export function wordsOf(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}' ]+/gu, ' ')
    .split(/\s+/)
    .filter(Boolean);
}

/** Share of `reference` words (with multiplicity) found in `candidate`. */
export function sharedWordRatio(reference: string, candidate: string): number {
  const ref = wordsOf(reference);
  if (ref.length === 0) return 1;
  const pool = new Map<string, number>();
  for (const w of wordsOf(candidate)) pool.set(w, (pool.get(w) ?? 0) + 1);
  let hits = 0;
  for (const w of ref) {
    const left = pool.get(w) ?? 0;
    if (left > 0) {
      hits++;
      pool.set(w, left - 1);
    }
  }
  return hits / ref.length;
}
