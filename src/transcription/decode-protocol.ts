/**
 * The messages between the decode worker pool (decode-workers.ts, main thread) and its threads
 * (decode-worker.ts), and the errors that cross between them: a thread's error arrives as the same
 * domain error, so the routes answer exactly as for a decode on the event loop.
 *
 * Main → thread: warm (the decoders, on samples the encoders made), decode (the upload, copied), resample
 * (samples, copied), abort (stop call `call`), slot (an answer to a thread's ffmpeg slot request).
 * Thread → main: the reply to a call (samples transferred), or acquire / release of an ffmpeg
 * slot: ffmpeg processes are bounded across the whole server, so the main thread holds the slots.
 */
import type { DecodeHint } from '../audio/decode.js';
import type { PcmAudio } from '../audio/pcm.js';
import type { WarmUpUploads } from '../audio/warm-up.js';
import { AbortedError, AudioTooLongError, EngineError, OverloadedError, UnsupportedAudioError } from '../errors.js';

export type DecodeRequest =
  /** Warms the thread's decoders on these samples; later calls wait for it. */
  | { call: number; op: 'warm'; uploads: WarmUpUploads }
  | {
      call: number;
      op: 'decode';
      bytes: Uint8Array;
      hint: DecodeHint;
      sampleRate?: number;
      maxSeconds?: number;
      /** ffmpeg's binary and time limit; false: never run it. */
      ffmpeg: { path: string | null; timeoutMs: number } | false;
    }
  | { call: number; op: 'resample'; samples: Float32Array; fromRate: number; toRate: number }
  | { call: number; op: 'abort' }
  | { call: 0; op: 'slot'; slot: number; error?: WireError };

export type DecodeReply =
  | { call: number; op: 'done'; warmed?: string[]; audio?: PcmAudio; samples?: Float32Array }
  | { call: number; op: 'failed'; error: WireError }
  /** An ffmpeg slot for call `call`'s decode (answered with a `slot` request). */
  | { call: number; op: 'acquire'; slot: number }
  | { call: 0; op: 'release'; slot: number };

export type WireError =
  | { kind: 'unsupported'; message: string }
  | { kind: 'too-long'; limitSeconds: number }
  | { kind: 'aborted' }
  | { kind: 'overloaded'; message: string; retryAfterSeconds: number }
  | { kind: 'failed'; message: string };

export function errorToWire(error: unknown): WireError {
  if (error instanceof AudioTooLongError) return { kind: 'too-long', limitSeconds: error.limitSeconds };
  if (error instanceof UnsupportedAudioError) return { kind: 'unsupported', message: error.message };
  if (error instanceof AbortedError) return { kind: 'aborted' };
  if (error instanceof OverloadedError) return { kind: 'overloaded', message: error.message, retryAfterSeconds: error.retryAfterSeconds ?? 1 };
  return { kind: 'failed', message: (error as Error)?.message ?? String(error) };
}

export function errorFromWire(error: WireError): Error {
  switch (error.kind) {
    case 'unsupported':
      return new UnsupportedAudioError(error.message);
    case 'too-long':
      return new AudioTooLongError(error.limitSeconds);
    case 'aborted':
      return new AbortedError();
    case 'overloaded':
      return new OverloadedError(error.retryAfterSeconds, error.message);
    case 'failed':
      return new EngineError(`decoding the audio failed: ${error.message}`);
  }
}
