/**
 * Encoding through ffmpeg, for the output formats no npm library encodes (AAC). The input is our
 * own raw s16le PCM, so ffmpeg parses nothing a client sent; it is still fenced like the decoder:
 * one thread, a bounded number of processes (the ffmpeg section's slots), a time limit, and it
 * is killed when the client goes away or the consumer stops reading.
 */
import { spawn } from 'node:child_process';
import { AbortedError, EngineError, InvalidRequestError } from '../errors.js';
import { ConcurrencyLimit } from '../concurrency/concurrency-limit.js';
import { encodeInt16 } from './encode.js';
import { findFfmpeg, type FfmpegLimits } from './ffmpeg.js';

export interface FfmpegEncoder {
  /** ADTS AAC-LC of mono PCM at `sampleRate`, as ffmpeg writes it. */
  aac(pcm: AsyncIterable<Float32Array>, sampleRate: number, signal: AbortSignal): AsyncGenerator<Uint8Array>;
}

/** `path` null looks ffmpeg up on the PATH at first use; `enabled` false refuses every format needing it. */
export function createFfmpegEncoder(options: { enabled: boolean; path: string | null; limits: FfmpegLimits }): FfmpegEncoder {
  const slots = new ConcurrencyLimit({ ...options.limits, busyMessage: 'Server is busy encoding other audio. Please try again later.' });
  return {
    async *aac(pcm, sampleRate, signal) {
      const command = options.enabled ? (options.path ?? (await findFfmpeg())) : null;
      if (!command) throw new InvalidRequestError('response_format aac needs ffmpeg, which this server does not have; use mp3, opus, flac, wav or pcm');
      const release = await slots.acquire(signal);
      try {
        const args = [
          '-hide_banner', '-loglevel', 'error', '-nostats', '-threads', '1',
          '-protocol_whitelist', 'pipe', '-f', 's16le', '-ar', String(sampleRate), '-ac', '1', '-i', 'pipe:0',
          '-map_metadata', '-1', '-c:a', 'aac', '-b:a', '64k', '-f', 'adts', 'pipe:1',
        ];
        yield* pipeThrough(command, args, pcm, { signal, timeoutMs: options.limits.timeoutMs });
      } finally {
        release();
      }
    },
  };
}

/**
 * Runs `command`, writing the PCM to its stdin (waiting when the pipe is full) and yielding its
 * stdout as it comes. The process is killed when the generator is left early, on abort, or on timeout.
 */
async function* pipeThrough(
  command: string,
  args: string[],
  pcm: AsyncIterable<Float32Array>,
  options: { signal: AbortSignal; timeoutMs: number },
): AsyncGenerator<Uint8Array> {
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const output: Uint8Array[] = [];
  let failure: unknown;
  let exited: number | null | undefined;
  let stderr = '';
  let wake: (() => void) | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  const fail = (error: unknown) => {
    failure ??= error;
    child.kill('SIGKILL');
    notify();
  };
  const timer = setTimeout(() => fail(new EngineError(`ffmpeg took longer than ${options.timeoutMs} ms to encode`)), options.timeoutMs);
  const onAbort = () => fail(new AbortedError());
  options.signal.addEventListener('abort', onAbort, { once: true });
  child.stdout.on('data', (chunk: Buffer) => {
    output.push(chunk);
    notify();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    if (stderr.length < 4096) stderr += chunk.toString('utf8');
  });
  child.on('error', fail);
  child.on('close', (code) => {
    exited = code;
    notify();
  });
  child.stdin.on('error', () => undefined); // EPIPE when ffmpeg has died: its exit code tells why

  const feeding = (async () => {
    for await (const samples of pcm) {
      if (failure !== undefined) return;
      if (!child.stdin.write(encodeInt16(samples))) {
        await new Promise<void>((resolve) => {
          const done = () => {
            child.stdin.off('drain', done);
            child.stdin.off('close', done);
            resolve();
          };
          child.stdin.on('drain', done);
          child.stdin.on('close', done);
        });
      }
    }
    child.stdin.end();
  })().catch(fail);

  try {
    for (;;) {
      while (output.length) yield output.shift()!;
      if (failure !== undefined) throw failure;
      if (exited !== undefined) break;
      await new Promise<void>((resolve) => (wake = resolve));
    }
    await feeding;
    if (failure !== undefined) throw failure;
    if (exited !== 0) throw new EngineError(`ffmpeg could not encode: ${stderr.trim().split('\n').pop() || `exit code ${exited}`}`);
  } finally {
    clearTimeout(timer);
    options.signal.removeEventListener('abort', onAbort);
    if (exited === undefined) {
      // Left early (the client went away, or an error): stop the producer and ffmpeg.
      failure ??= new AbortedError();
      child.kill('SIGKILL');
    }
    await feeding;
  }
}
