/**
 * Silero VAD (a `vad-silero` pack) through sherpa-onnx's Vad, run by a TaskRunner (a supervised
 * inference process in the server). The worker
 * feeds the audio one 512-sample window at a time and pops each segment as soon as it closes, so
 * sherpa's buffer never holds more than one segment (≤ maxSpeechDuration) whatever the audio
 * length, and spans stream back while the rest of the file is still being scanned.
 */
import type { ModelPack } from './model-pack.js';
import { AbortedError } from '../errors.js';
import { modelKey, requirePackFiles, requirePackKind } from './sherpa-pack-files.js';
import type { SherpaVadConfig } from './sherpa-onnx.js';
import type { PoolTask, TaskRunner } from './sherpa-tasks.js';
import type { StreamingVoiceActivityDetector, TimeSpan } from './types.js';

export interface SherpaVadOptions {
  /** Speech probability above which a window counts as speech; 0.5 is Silero's default. */
  threshold?: number;
  /** Silence that closes a segment, seconds. */
  minSilenceDuration?: number;
  /** Shorter detections are dropped, seconds. */
  minSpeechDuration?: number;
  /** Longer speech is cut here, seconds; bounds the worker's buffer. */
  maxSpeechDuration?: number;
  numThreads?: number;
}

/** Silero v5 at 16 kHz takes 512-sample windows (the model README and sherpa's examples). */
const SAMPLE_RATE = 16_000;
const WINDOW_SIZE = 512;

export function buildSherpaVadConfig(pack: ModelPack, options: SherpaVadOptions = {}): SherpaVadConfig {
  requirePackKind(pack, ['vad-silero'], 'a VAD');
  const { model } = requirePackFiles(pack, ['model']);
  return {
    sileroVad: {
      model,
      threshold: options.threshold ?? 0.5,
      minSilenceDuration: options.minSilenceDuration ?? 0.25,
      minSpeechDuration: options.minSpeechDuration ?? 0.25,
      windowSize: WINDOW_SIZE,
      maxSpeechDuration: options.maxSpeechDuration ?? 30,
    },
    sampleRate: SAMPLE_RATE,
    numThreads: options.numThreads ?? 1,
    provider: 'cpu',
    debug: 0,
  };
}

export function createSherpaVad(pool: TaskRunner<PoolTask>, pack: ModelPack, options: SherpaVadOptions = {}): StreamingVoiceActivityDetector {
  const config = buildSherpaVadConfig(pack, options);
  const key = modelKey([pack], 'vad', config);
  const bufferSeconds = 2 * config.sileroVad.maxSpeechDuration + 10;
  const toSpan = ([start, end]: [number, number]): TimeSpan => ({ start: start / SAMPLE_RATE, end: end / SAMPLE_RATE });

  async function* detectStream(samples: Float32Array, opts: { signal?: AbortSignal } = {}): AsyncGenerator<TimeSpan> {
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
        { kind: 'vad', key, config, bufferSeconds, samples },
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
