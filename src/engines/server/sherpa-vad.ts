/**
 * A voice activity detector pack through sherpa-onnx's Vad, run by a TaskRunner (a supervised
 * inference process in the server). The worker
 * feeds the audio one 512-sample window at a time and pops each segment as soon as it closes, so
 * sherpa's buffer never holds more than one segment (≤ maxSpeechDuration) whatever the audio
 * length, and spans stream back while the rest of the file is still being scanned.
 */
import { AbortedError } from '../../errors.js';
import { requireCapability, type EnginePack } from '../capabilities.js';
import { modelKey } from './sherpa-pack-files.js';
import { VARIANT_SEPARATOR, type PoolTask, type TaskRunner } from '../sherpa-tasks.js';
import type { StreamingVoiceActivityDetector, TimeSpan, VadOptions } from '../types.js';

const SAMPLE_RATE = 16_000;
/** The thresholds sherpa's Silero VAD takes: above 0.01, below 1. */
const MIN_THRESHOLD = 0.02;
const MAX_THRESHOLD = 0.99;

export function createSherpaVad(pool: TaskRunner<PoolTask>, pack: EnginePack<'vad'>): StreamingVoiceActivityDetector {
  requireCapability(pack, 'vad', 'a VAD');
  const { config } = pack;
  const key = modelKey([pack], 'vad', config);
  const bufferSeconds = 2 * config.sileroVad.maxSpeechDuration + 10;
  const toSpan = ([start, end]: [number, number]): TimeSpan => ({ start: start / SAMPLE_RATE, end: end / SAMPLE_RATE });

  /**
   * The task's model: the pack's, or for another threshold a variant of it (sherpa fixes the
   * threshold when it builds a VAD). Thresholds are rounded to hundredths within what sherpa
   * accepts (it builds no VAD at all for 0.01 or 1), and the inference threads keep only a few
   * variants each (VAD_THRESHOLD_VARIANTS), so clients cannot make the server hold a model per value.
   */
  function taskModel(threshold: number | undefined): { key: string; config: typeof config } {
    if (threshold === undefined || !Number.isFinite(threshold)) return { key, config };
    const rounded = Math.round(Math.min(MAX_THRESHOLD, Math.max(MIN_THRESHOLD, threshold)) * 100) / 100;
    if (rounded === config.sileroVad.threshold) return { key, config };
    return { key: `${key}${VARIANT_SEPARATOR}threshold=${rounded}`, config: { ...config, sileroVad: { ...config.sileroVad, threshold: rounded } } };
  }

  async function* detectStream(samples: Float32Array, opts: VadOptions = {}): AsyncGenerator<TimeSpan> {
    const controller = new AbortController();
    const forward = () => controller.abort();
    opts.signal?.addEventListener('abort', forward, { once: true });
    if (opts.signal?.aborted) controller.abort();
    const ready: TimeSpan[] = [];
    let wake: (() => void) | undefined;
    let finished = false;
    let failure: Error | undefined;
    const done = pool
      .submit(
        { kind: 'vad', ...taskModel(opts.threshold), bufferSeconds, samples },
        {
          signal: controller.signal,
          onProgress: ({ spans }) => {
            ready.push(...spans.map(toSpan));
            wake?.();
          },
        },
      )
      .then(
        () => {
          finished = true;
          wake?.();
        },
        (error: Error) => {
          failure = error;
          finished = true;
          wake?.();
        },
      );
    try {
      for (;;) {
        while (ready.length > 0) yield ready.shift()!;
        if (finished) break;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
      if (failure) throw failure;
      if (opts.signal?.aborted) throw new AbortedError();
    } finally {
      // The consumer stopped early (or failed): stop the scan instead of letting it run on.
      if (!finished) controller.abort();
      opts.signal?.removeEventListener('abort', forward);
      await done;
    }
  }

  return {
    sampleRate: SAMPLE_RATE,
    detectStream,
    async detect(samples, opts) {
      const spans: TimeSpan[] = [];
      for await (const span of detectStream(samples, opts)) spans.push(span);
      return spans;
    },
    async close() {
      pool.unload?.(key);
    },
  };
}
