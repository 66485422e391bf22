/**
 * A whole recording resampled in blocks with a turn of the event loop between them, so a long
 * one never stalls the thread it runs on (the main thread, or a decode worker that must still see
 * an abort), and the work stops between blocks once `signal` fires.
 */
import { yieldToEventLoop } from '../concurrency/event-loop.js';
import { AbortedError } from '../errors.js';
import { concatFloat32 } from './channel-mix.js';
import { createStreamingResampler } from './resample.js';

/** Input samples between yields: 5 s at 48 kHz. */
const BLOCK = 5 * 48_000;

export async function resampleYielding(samples: Float32Array, fromRate: number, toRate: number, signal?: AbortSignal): Promise<Float32Array> {
  if (fromRate === toRate) return samples;
  const resampler = await createStreamingResampler(fromRate, toRate);
  try {
    const parts: Float32Array[] = [];
    for (let at = 0; at < samples.length; at += BLOCK) {
      if (signal?.aborted) throw new AbortedError();
      parts.push(resampler.process(samples.subarray(at, at + BLOCK)));
      if (at + BLOCK < samples.length) await yieldToEventLoop();
    }
    parts.push(resampler.flush());
    return concatFloat32(parts);
  } finally {
    resampler.dispose();
  }
}
