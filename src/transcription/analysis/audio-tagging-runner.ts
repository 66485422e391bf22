/**
 * Runs an audio-tagging model pack in a worker thread of its own (audio-tagging-worker.ts) and
 * exposes it as an AudioTaggingRunner. One worker per pack; requests are answered in order.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { EngineError, ModelPackError } from '../../errors.js';
import type { ModelPack } from '../../models/pack.js';
import type { AudioEvent, AudioTaggingRunner } from './audio-tagging.js';

export interface AudioTaggingFiles {
  /** CED (sherpa-onnx-ced-*) or Zipformer (sherpa-onnx-zipformer-audio-tagging-*) model file. */
  model: string;
  /** class_labels_indices.csv of the pack. */
  labels: string;
  family: 'ced' | 'zipformer';
  numThreads?: number;
}

export type AudioTaggingRequest = { id: number; samples: Float32Array; sampleRate: number };
export type AudioTaggingReply =
  | { type: 'ready' }
  | { type: 'failed'; message: string }
  | { type: 'result'; id: number; events: AudioEvent[] }
  | { type: 'error'; id: number; message: string };

/**
 * Files of an `audio-tagging` pack. The family comes from the folder name, as the upstream release
 * archives are named (sherpa-onnx-zipformer-audio-tagging-2024-04-09, sherpa-onnx-ced-mini-...).
 */
export function audioTaggingFilesFromPack(pack: ModelPack, numThreads = 1): AudioTaggingFiles {
  const model = pack.files.model;
  const labels = pack.files.labels;
  if (pack.kind !== 'audio-tagging' || !model || !labels) {
    throw new ModelPackError(`model pack ${pack.id} is not an audio tagging pack with a model and class labels`);
  }
  return { model, labels, family: /zipformer/i.test(pack.id) ? 'zipformer' : 'ced', numThreads };
}

export interface AudioTaggingWorker {
  run: AudioTaggingRunner;
  close(): Promise<void>;
}

/** Starts the worker; resolves once the model is loaded, rejects with ModelPackError if it cannot be. */
export async function startAudioTaggingWorker(files: AudioTaggingFiles): Promise<AudioTaggingWorker> {
  const worker = spawnWorker(files);
  const pending = new Map<number, { resolve: (events: AudioEvent[]) => void; reject: (error: Error) => void }>();
  let nextId = 0;
  let closed = false;
  const failAll = (error: Error) => {
    for (const p of pending.values()) p.reject(error);
    pending.clear();
  };

  await new Promise<void>((resolve, reject) => {
    const onStartup = (reply: AudioTaggingReply) => {
      if (reply.type === 'ready') resolve();
      else if (reply.type === 'failed') reject(new ModelPackError(reply.message));
    };
    worker.once('message', onStartup);
    worker.once('error', (error) => reject(new ModelPackError(`audio tagging worker failed to start: ${error.message}`)));
  }).catch(async (error: unknown) => {
    await worker.terminate();
    throw error;
  });

  worker.on('message', (reply: AudioTaggingReply) => {
    if (reply.type !== 'result' && reply.type !== 'error') return;
    const p = pending.get(reply.id);
    if (!p) return;
    pending.delete(reply.id);
    if (reply.type === 'result') p.resolve(reply.events);
    else p.reject(new EngineError(`audio tagging failed: ${reply.message}`));
  });
  worker.on('error', (error) => failAll(new EngineError(`audio tagging worker crashed: ${error.message}`)));
  worker.on('exit', () => failAll(new EngineError('audio tagging worker exited')));

  return {
    run: (samples, sampleRate) => {
      if (closed) return Promise.reject(new EngineError('audio tagging worker is closed'));
      const id = nextId++;
      return new Promise<AudioEvent[]>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        // A copy of the chunk is moved (not cloned) to the worker; the caller keeps its samples.
        const copy = new Float32Array(samples);
        const request: AudioTaggingRequest = { id, samples: copy, sampleRate };
        worker.postMessage(request, [copy.buffer]);
      });
    },
    close: async () => {
      closed = true;
      await worker.terminate();
    },
  };
}

/**
 * The worker script next to this module: .js once built. Under tsx (tests, benches) only the .ts
 * exists, and Node 20 does not carry tsx's loader into workers (`--import tsx` in the worker's
 * execArgv still fails with "Unknown file extension .ts"), so a small bootstrap registers tsx in the
 * worker first.
 */
function spawnWorker(files: AudioTaggingFiles): Worker {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const built = path.join(here, 'audio-tagging-worker.js');
  if (existsSync(built)) return new Worker(built, { workerData: files });
  const source = pathToFileURL(path.join(here, 'audio-tagging-worker.ts')).href;
  const tsxApi = import.meta.resolve('tsx/esm/api');
  const bootstrap = `import(${JSON.stringify(tsxApi)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(source)}); });`;
  return new Worker(bootstrap, { eval: true, workerData: files });
}
