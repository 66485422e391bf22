/**
 * Runs inference tasks of every kind inside one process: the synchronous sherpa calls (VAD,
 * streaming ASR, diarization, tagging) on its worker threads, TTS and offline recognition with
 * sherpa's async calls on libuv's pool, so this process's own event loop stays free to take
 * messages (new tasks, cancellations) while inference runs.
 *
 * Each model is built the first time a task names its key and kept until unload(key). Tasks on
 * one TTS or offline model run one after another: the espeak-ng phonemiser inside sherpa is
 * process-global state, a recogniser's language may be part of its config, and on a small
 * machine parallel runs of one model only split the same cores.
 */
import { existsSync } from 'node:fs';
import { AbortedError, EngineError, ModelPackError } from '../../errors.js';
import {
  VARIANT_SEPARATOR,
  isPoolTask,
  type InferenceTask,
  type OfflineAsrTask,
  type SubmitOptions,
  type TaskProgress,
  type TaskResults,
  type TaskRunner,
  type TtsTask,
} from '../sherpa-tasks.js';
import { loadSherpaOnnx, type SherpaOfflineRecognizer, type SherpaOfflineRecognizerConfig, type SherpaOfflineTts, type SherpaOfflineTtsConfig } from '../sherpa-onnx.js';
import { WorkerPool, type WorkerPoolOptions } from './worker-pool.js';

interface Serialised<M> {
  model: Promise<M>;
  /** Tail of this model's task queue. */
  tail: Promise<void>;
}

export class InferenceCore implements TaskRunner {
  private readonly pool: WorkerPool;
  private readonly tts = new Map<string, Serialised<SherpaOfflineTts>>();
  private readonly offline = new Map<string, Serialised<SherpaOfflineRecognizer>>();
  /** Every key a task has named since it was last unloaded: what this process holds. */
  private readonly keys = new Set<string>();
  private closed = false;

  constructor(options: WorkerPoolOptions = {}) {
    this.pool = new WorkerPool(options);
  }

  get models(): string[] {
    return [...this.keys];
  }

  submit<K extends InferenceTask>(task: K, options: SubmitOptions<TaskProgress[K['kind']]> = {}): Promise<TaskResults[K['kind']]> {
    if (this.closed) return Promise.reject(new EngineError('inference is shutting down'));
    // A variant (another VAD threshold) is held under its model's key: health lists models, not settings.
    this.keys.add(task.key.split(VARIANT_SEPARATOR)[0]!);
    if (isPoolTask(task)) return (this.pool.submit.bind(this.pool) as TaskRunner['submit'])(task, options);
    let run: Promise<unknown>;
    switch (task.kind) {
      case 'tts-load':
        run = this.ttsModel(task.key, task.config).then((tts) => ({ numSpeakers: tts.numSpeakers, sampleRate: tts.sampleRate }));
        break;
      case 'tts':
        run = this.synthesize(task, options.signal, options.onProgress as ((samples: Float32Array) => void) | undefined);
        break;
      case 'offline-asr-load':
        run = this.offlineModel(task.key, task.config).model.then(() => ({}));
        break;
      case 'offline-asr':
        run = this.recognize(task, options.signal);
        break;
    }
    return run as Promise<TaskResults[K['kind']]>;
  }

  /** Forgets a model: sherpa frees it when its wrapper is collected. Tasks already queued on it finish. */
  unload(key: string): void {
    this.keys.delete(key);
    this.tts.delete(key);
    this.offline.delete(key);
    this.pool.unload(key);
  }

  /** Waits for running tasks (at most `graceMs` for the threads' ones), then stops the threads. */
  async close(graceMs?: number): Promise<void> {
    this.closed = true;
    await this.pool.close(graceMs);
    await Promise.allSettled([...this.tts.values(), ...this.offline.values()].map((s) => s.tail));
  }

  private ttsModel(key: string, config: SherpaOfflineTtsConfig): Promise<SherpaOfflineTts> {
    let entry = this.tts.get(key);
    if (!entry) {
      const model = (async () => {
        // Every path of the model part (its numbers, e.g. a flow-matching featScale, are not paths).
        requireFiles(Object.values(config.model).flatMap((m) => (m && typeof m === 'object' ? Object.values(m).filter((v): v is string => typeof v === 'string') : [])));
        try {
          return await loadSherpaOnnx().OfflineTts.createAsync(config);
        } catch (error) {
          throw new ModelPackError(`could not load TTS model ${key}: ${(error as Error).message}`);
        }
      })();
      entry = { model, tail: model.then(() => undefined, () => undefined) };
      this.tts.set(key, entry);
      model.catch(() => this.tts.get(key) === entry && this.tts.delete(key));
    }
    return entry.model;
  }

  private offlineModel(key: string, config: SherpaOfflineRecognizerConfig): Serialised<SherpaOfflineRecognizer> {
    let entry = this.offline.get(key);
    if (!entry) {
      const model = (async () => {
        const m = config.modelConfig;
        // Every model part of the config (one per architecture sherpa knows), whichever it is.
        requireFiles([m.tokens, ...Object.values(m).flatMap((part) => (part && typeof part === 'object' ? modelFiles(part) : []))]);
        try {
          return await loadSherpaOnnx().OfflineRecognizer.createAsync(config);
        } catch (error) {
          throw new ModelPackError(`could not load recogniser ${key}: ${(error as Error).message}`);
        }
      })();
      entry = { model, tail: model.then(() => undefined, () => undefined) };
      this.offline.set(key, entry);
      model.catch(() => this.offline.get(key) === entry && this.offline.delete(key));
    }
    return entry;
  }

  /** Queues `work` behind the model's earlier tasks. */
  private serialise<M, R>(entry: Serialised<M>, work: (model: M) => Promise<R>): Promise<R> {
    const run = entry.tail.then(() => entry.model).then(work);
    entry.tail = run.then(() => undefined, () => undefined);
    return run;
  }

  private synthesize(task: TtsTask, signal: AbortSignal | undefined, onPiece?: (samples: Float32Array) => void): Promise<{ samples: number }> {
    void this.ttsModel(task.key, task.config).catch(() => undefined);
    const entry = this.tts.get(task.key)!;
    return this.serialise(entry, async (tts) => {
      if (signal?.aborted) throw new AbortedError();
      let samples = 0;
      try {
        const { reference } = task;
        await tts.generateAsync({
          text: task.text,
          sid: task.sid,
          speed: task.speed,
          ...(reference && {
            generationConfig: {
              speed: task.speed,
              referenceAudio: reference.samples,
              referenceSampleRate: reference.sampleRate,
              ...(reference.text !== undefined ? { referenceText: reference.text } : {}),
            },
          }),
          onProgress: (info) => {
            if (signal?.aborted) return 0;
            // Copied: the array may be a view of native memory that sherpa reuses after we return.
            if (info.samples.length > 0) {
              samples += info.samples.length;
              onPiece?.(info.samples.slice());
            }
            return 1;
          },
        });
      } catch (error) {
        throw new EngineError(`TTS model ${task.key} failed: ${(error as Error).message}`);
      }
      if (signal?.aborted) throw new AbortedError();
      return { samples };
    });
  }

  private recognize(task: OfflineAsrTask, signal: AbortSignal | undefined) {
    const entry = this.offlineModel(task.key, task.config);
    const wanted = JSON.stringify(task.config);
    return this.serialise(entry, async (recognizer) => {
      if (signal?.aborted) throw new AbortedError();
      // Only a language kept in the config changes between tasks on one key; setConfig is cheap.
      if (lastConfig.get(recognizer) !== wanted) {
        recognizer.setConfig(task.config);
        lastConfig.set(recognizer, wanted);
      }
      const stream = task.hotwords ? recognizer.createStream(task.hotwords) : recognizer.createStream();
      stream.acceptWaveform({ samples: task.samples, sampleRate: task.sampleRate });
      try {
        return await recognizer.decodeAsync(stream);
      } catch (error) {
        throw new EngineError(`recogniser ${task.key} failed: ${(error as Error).message}`);
      }
    });
  }
}

/** The config each loaded offline recogniser was last given. */
const lastConfig = new WeakMap<SherpaOfflineRecognizer, string>();

function modelFiles(part: object): string[] {
  return Object.entries(part).flatMap(([name, value]) => (typeof value === 'string' && /model|coder|joiner|preprocessor/i.test(name) ? [value] : []));
}

/**
 * Checked before sherpa sees a path: it ends the whole process on a missing file instead of
 * throwing. A lexicon may be several files joined by commas, each checked.
 */
export function requireFiles(files: string[]): void {
  const missing = files.flatMap((f) => f.split(',')).map((f) => f.trim()).filter((f) => f && !existsSync(f));
  if (missing.length > 0) throw new ModelPackError(`model files are missing: ${missing.join(', ')}`);
}
