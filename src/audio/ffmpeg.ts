/**
 * The optional ffmpeg fallback for containers and codecs Parley does not decode itself (m4a/AAC,
 * AMR, WMA, Ogg Speex...). ffmpeg is never required: it is looked up on the PATH, and without it
 * those formats are refused as unsupported.
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { UnsupportedAudioError } from '../errors.js';
import type { PcmAudio } from './pcm.js';
import { parseWav } from './wav.js';

let ffmpegLookup: Promise<string | null> | undefined;

/** Absolute path of `ffmpeg` on the PATH, or null. Looked up once per process. */
export function findFfmpeg(): Promise<string | null> {
  ffmpegLookup ??= (async () => {
    const names = process.platform === 'win32' ? ['ffmpeg.exe'] : ['ffmpeg'];
    for (const dir of (process.env.PATH ?? '').split(delimiter)) {
      if (!dir) continue;
      for (const name of names) {
        const candidate = join(dir, name);
        try {
          await access(candidate, constants.X_OK);
          return candidate;
        } catch {
          // not here; keep looking
        }
      }
    }
    return null;
  })();
  return ffmpegLookup;
}

export interface FfmpegDecodeOptions {
  /** Kill ffmpeg after this long. */
  timeoutMs?: number;
  /**
   * Give ffmpeg a temporary file instead of stdin. Needed for MP4/M4A, whose index (`moov`)
   * is often at the end of the file and cannot be read from a pipe.
   */
  seekable?: boolean;
  /** Refuse output larger than this many bytes of float samples (guards memory). */
  maxOutputBytes?: number;
}

const DEFAULT_TIMEOUT_MS = 120_000;
/** 1 GiB of float32 is about 4.6 hours at 16 kHz or 1.5 hours at 48 kHz. */
const DEFAULT_MAX_OUTPUT_BYTES = 1024 ** 3;

/**
 * Decodes any input ffmpeg understands to mono float samples at the input's own rate. ffmpeg
 * writes a float WAV to stdout: the WAV header tells us the native rate, which raw f32le would not.
 */
export async function decodeWithFfmpeg(
  bytes: Uint8Array,
  ffmpegPath: string,
  options: FfmpegDecodeOptions = {},
): Promise<PcmAudio> {
  const { timeoutMs = DEFAULT_TIMEOUT_MS, seekable = false, maxOutputBytes = DEFAULT_MAX_OUTPUT_BYTES } = options;
  let tempDir: string | undefined;
  try {
    let input = 'pipe:0';
    if (seekable) {
      tempDir = await mkdtemp(join(tmpdir(), 'parley-ffmpeg-'));
      input = join(tempDir, 'input');
      await writeFile(input, bytes);
    }
    const args = ['-hide_banner', '-loglevel', 'error', '-nostats', ...(seekable ? ['-nostdin'] : []), '-i', input];
    args.push('-map', '0:a:0', '-vn', '-sn', '-dn', '-ac', '1', '-c:a', 'pcm_f32le', '-f', 'wav', 'pipe:1');
    const wav = await run(ffmpegPath, args, seekable ? undefined : bytes, timeoutMs, maxOutputBytes);
    return parseWav(wav);
  } catch (error) {
    if (error instanceof UnsupportedAudioError) throw error;
    throw new UnsupportedAudioError(`ffmpeg could not decode the audio: ${(error as Error).message}`);
  } finally {
    if (tempDir) await rm(tempDir, { recursive: true, force: true }).catch(() => undefined);
  }
}

function run(
  command: string,
  args: string[],
  stdin: Uint8Array | undefined,
  timeoutMs: number,
  maxOutputBytes: number,
): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let outputBytes = 0;
    let stderr = '';
    let failure: Error | undefined;
    const fail = (error: Error) => {
      failure ??= error;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => fail(new UnsupportedAudioError(`ffmpeg took longer than ${timeoutMs} ms`)), timeoutMs);

    child.stdout.on('data', (chunk: Buffer) => {
      outputBytes += chunk.length;
      if (outputBytes > maxOutputBytes) fail(new UnsupportedAudioError('Decoded audio is too long'));
      else chunks.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 4096) stderr += chunk.toString('utf8');
    });
    child.on('error', (error) => fail(error));
    child.on('close', (code) => {
      clearTimeout(timer);
      if (failure) return reject(failure);
      if (code !== 0) {
        const reason = stderr.trim().split('\n').pop() || `exit code ${code}`;
        return reject(new UnsupportedAudioError(`ffmpeg could not decode the audio: ${reason}`));
      }
      resolve(Buffer.concat(chunks));
    });
    // ffmpeg stops reading as soon as it gives up on the input: that EPIPE is not our error.
    child.stdin.on('error', () => undefined);
    child.stdin.end(stdin);
  });
}
