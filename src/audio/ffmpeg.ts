/**
 * The optional ffmpeg fallback for containers and codecs Parley does not decode itself (m4a/AAC,
 * AMR, WMA, Ogg Speex...). ffmpeg is never required: it is looked up on the PATH, and without it
 * those formats are refused as unsupported.
 *
 * ffmpeg parses hostile bytes in a process of its own, so it is fenced in: it may open only its
 * pipe (or, for MP4, the one temporary file), only audio demuxers, on one thread, for a limited
 * time, and a limited number of ffmpeg processes run at once. Its output is counted as it streams
 * in and the process is killed the moment the duration cap is passed or the client goes away.
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { AbortedError, UnsupportedAudioError } from '../errors.js';
import { ConcurrencyLimit } from '../concurrency/concurrency-limit.js';
import { asDecodeError, type PcmCollector } from './pcm-collector.js';
import { checkedFloat } from './wav.js';

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

/**
 * Demuxers ffmpeg may use: audio containers only. No playlists (hls, concat), no images or
 * subtitles, nothing that can name another file or URL.
 */
export const FFMPEG_DEMUXERS = [
  'aac', 'ac3', 'aiff', 'amr', 'amrnb', 'amrwb', 'ape', 'asf', 'au', 'caf', 'dts', 'eac3', 'flac', 'g722', 'g723_1',
  'g729', 'gsm', 'matroska', 'webm', 'mov', 'mp4', 'm4a', '3gp', '3g2', 'mj2', 'mp3', 'mpc', 'mpc8', 'ogg', 'oma',
  'shorten', 'tak', 'tta', 'voc', 'w64', 'wav', 'wv', 'xwma',
].join(',');

export interface FfmpegLimits {
  /** ffmpeg processes running at once. */
  maxConcurrent: number;
  /** Decodes allowed to wait for a free slot; beyond that 503. */
  queueSize: number;
  /** Longest wait for a slot before 503. */
  queueTimeoutMs: number;
  /** Wall-clock time one ffmpeg run may take before it is killed. */
  timeoutMs: number;
}

export const defaultFfmpegLimits: FfmpegLimits = { maxConcurrent: 2, queueSize: 8, queueTimeoutMs: 10_000, timeoutMs: 120_000 };

export interface FfmpegDecodeOptions {
  /**
   * Give ffmpeg a temporary file instead of stdin. Needed for MP4/M4A, whose index (`moov`)
   * is often at the end of the file and cannot be read from a pipe.
   */
  seekable?: boolean;
  signal?: AbortSignal;
}

/** ffmpeg behind its limits; one per process (the config's `ffmpeg` section). */
export interface FfmpegRunner {
  decode(bytes: Uint8Array, collector: PcmCollector, options?: FfmpegDecodeOptions): Promise<void>;
  /** What a runner in a worker thread needs to run ffmpeg under this one's process limit. */
  readonly shared: FfmpegShared;
}

/** The binary, the time limit, and the slots that bound ffmpeg processes across every thread. */
export interface FfmpegShared {
  /** null: `ffmpeg` on the PATH. */
  path: string | null;
  timeoutMs: number;
  /** Waits for a free slot (OverloadedError when the queue is full or the wait too long); call the result to free it. */
  acquire(signal?: AbortSignal): Promise<() => void>;
}

/** `path` null looks ffmpeg up on the PATH at first use. */
export function createFfmpegRunner(path: string | null = null, limits: FfmpegLimits = defaultFfmpegLimits): FfmpegRunner {
  const slots = new ConcurrencyLimit({ ...limits, busyMessage: 'Server is busy decoding other audio. Please try again later.' });
  return ffmpegRunnerOver({ path, timeoutMs: limits.timeoutMs, acquire: (signal) => slots.acquire(signal) });
}

/** A runner over slots held elsewhere (a worker thread's, over the main thread's). */
export function ffmpegRunnerOver(shared: FfmpegShared): FfmpegRunner {
  return {
    shared,
    async decode(bytes, collector, options = {}) {
      const command = shared.path ?? (await findFfmpeg());
      if (!command) throw new UnsupportedAudioError('ffmpeg is not installed');
      const release = await shared.acquire(options.signal);
      try {
        await decodeWithFfmpeg(command, bytes, collector, { ...options, timeoutMs: shared.timeoutMs });
      } finally {
        release();
      }
    },
  };
}

/**
 * Decodes with ffmpeg to mono float samples at the input's own rate. ffmpeg writes a float WAV to
 * stdout: its header gives the rate, and the samples after it are counted into the collector as
 * they arrive.
 */
async function decodeWithFfmpeg(
  command: string,
  bytes: Uint8Array,
  collector: PcmCollector,
  options: FfmpegDecodeOptions & { timeoutMs: number },
): Promise<void> {
  let tempDir: string | undefined;
  try {
    let input = 'pipe:0';
    if (options.seekable) {
      tempDir = await mkdtemp(join(tmpdir(), 'parley-ffmpeg-'));
      input = join(tempDir, 'input');
      await writeFile(input, bytes);
    }
    const args = [
      '-hide_banner', '-loglevel', 'error', '-nostats', ...(options.seekable ? ['-nostdin'] : []),
      '-threads', '1', '-filter_threads', '1',
      '-protocol_whitelist', options.seekable ? 'file' : 'pipe',
      '-format_whitelist', FFMPEG_DEMUXERS,
      '-i', input,
      '-map', '0:a:0', '-vn', '-sn', '-dn', '-map_metadata', '-1', '-fflags', '+bitexact',
      // The input's own rate: the collector resamples (and stores low-rate audio at its own rate).
      '-ac', '1',
      // ffmpeg stops by itself a little past the cap; the collector decides, by counting.
      '-t', String(collector.maxSeconds + 1),
      '-c:a', 'pcm_f32le', '-f', 'wav', 'pipe:1',
    ];
    await run(command, args, options.seekable ? undefined : bytes, collector, options);
  } catch (error) {
    throw asDecodeError(error, 'ffmpeg');
  } finally {
    if (tempDir) await rm(tempDir, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** Reads the streaming WAV header ffmpeg writes: its rate and where the samples start, or null until it is all there. */
function wavStreamHeader(bytes: Buffer): { sampleRate: number; dataStart: number } | null {
  if (bytes.length < 12) return null;
  if (bytes.toString('latin1', 0, 4) !== 'RIFF' || bytes.toString('latin1', 8, 12) !== 'WAVE') throw new Error('ffmpeg wrote no WAV header');
  let sampleRate = 0;
  for (let at = 12; at + 8 <= bytes.length; ) {
    const id = bytes.toString('latin1', at, at + 4);
    const size = bytes.readUInt32LE(at + 4);
    if (id === 'data') return sampleRate ? { sampleRate, dataStart: at + 8 } : null;
    if (id === 'fmt ') {
      if (at + 16 > bytes.length) return null;
      sampleRate = bytes.readUInt32LE(at + 12);
    }
    at += 8 + size + (size & 1);
  }
  if (bytes.length > 64 * 1024) throw new Error('ffmpeg wrote no data chunk');
  return null;
}

function run(
  command: string,
  args: string[],
  stdin: Uint8Array | undefined,
  collector: PcmCollector,
  options: { timeoutMs: number; signal?: AbortSignal },
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let header = Buffer.alloc(0);
    let started = false;
    let pending = Buffer.alloc(0);
    let stderr = '';
    let failure: unknown;
    let beginning = Promise.resolve();
    const fail = (error: unknown) => {
      failure ??= error;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => fail(new UnsupportedAudioError(`ffmpeg took longer than ${options.timeoutMs} ms`)), options.timeoutMs);
    const onAbort = () => fail(new AbortedError());
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.signal?.aborted) onAbort();

    /** Whole float samples of `chunk` into the collector; a split sample waits for the next chunk. */
    let scratch = new Float32Array(0);
    const take = (chunk: Buffer) => {
      const bytes = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      const usable = bytes.length - (bytes.length % 4);
      pending = Buffer.from(bytes.subarray(usable));
      if (usable === 0) return;
      // One scratch array for every chunk: the collector copies what it keeps.
      if (scratch.length < usable / 4) scratch = new Float32Array(usable / 4);
      const samples = scratch.subarray(0, usable / 4);
      new Uint8Array(samples.buffer, 0, usable).set(bytes.subarray(0, usable));
      for (let i = 0; i < samples.length; i++) samples[i] = checkedFloat(samples[i]);
      collector.push(samples);
    };

    child.stdout.on('data', (chunk: Buffer) => {
      if (failure) return;
      try {
        if (started) return take(chunk);
        header = Buffer.concat([header, chunk]);
        const found = wavStreamHeader(header);
        if (!found) return;
        started = true;
        const rest = header.subarray(found.dataStart);
        // begin() is async (it may load the resampler): ffmpeg waits, its pipe full, meanwhile.
        child.stdout.pause();
        beginning = collector
          .begin(found.sampleRate)
          .then(() => take(rest))
          .catch(fail)
          .finally(() => child.stdout.resume());
      } catch (error) {
        fail(error);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 4096) stderr += chunk.toString('utf8');
    });
    child.on('error', (error) => fail(error));
    child.on('close', (code) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      void beginning.then(() => {
        if (failure) return reject(failure);
        if (code !== 0) {
          const reason = stderr.trim().split('\n').pop() || `exit code ${code}`;
          return reject(new UnsupportedAudioError(`ffmpeg could not decode the audio: ${reason}`));
        }
        if (!started) return reject(new UnsupportedAudioError('ffmpeg produced no audio'));
        resolve();
      });
    });
    // ffmpeg stops reading as soon as it gives up on the input: that EPIPE is not our error.
    child.stdin.on('error', () => undefined);
    child.stdin.end(stdin);
  });
}
