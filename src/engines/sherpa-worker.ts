/**
 * Worker-thread body of the sherpa worker pool (worker-pool.ts). Runs one task at a time; builds
 * each model the first time a task names its key and keeps it for the life of the thread, so a
 * warm worker pays only for inference.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { parentPort } from 'node:worker_threads';
import type {
  DiarizeResult,
  DiarizeTask,
  OnlineAsrResult,
  OnlineAsrTask,
  PoolTask,
  SherpaClusteringConfig,
  SherpaDiarizationConfig,
  SherpaOnlineRecognizerConfig,
  SherpaVadConfig,
  VadResult,
  VadTask,
  WorkerReply,
  WorkerRequest,
} from './sherpa-tasks.js';

/** The slice of sherpa-onnx-node used here (lib/vad.js, lib/streaming-asr.js, lib/non-streaming-speaker-diarization.js). */
interface SherpaVad {
  acceptWaveform(samples: Float32Array): void;
  isEmpty(): boolean;
  front(enableExternalBuffer?: boolean): { start: number; samples: Float32Array };
  pop(): void;
  clear(): void;
  reset(): void;
  flush(): void;
}
interface SherpaOnlineStream {
  acceptWaveform(wave: { samples: Float32Array; sampleRate: number }): void;
  inputFinished(): void;
}
interface SherpaOnlineRecognizer {
  createStream(): SherpaOnlineStream;
  isReady(stream: SherpaOnlineStream): boolean;
  decode(stream: SherpaOnlineStream): void;
  getResult(stream: SherpaOnlineStream): { text: string; tokens: string[]; timestamps: number[] };
}
interface SherpaDiarization {
  readonly sampleRate: number;
  process(samples: Float32Array): Array<{ start: number; end: number; speaker: number }>;
  setConfig(config: { clustering: SherpaClusteringConfig }): void;
}
interface SherpaModule {
  Vad: new (config: SherpaVadConfig, bufferSizeInSeconds: number) => SherpaVad;
  OnlineRecognizer: new (config: SherpaOnlineRecognizerConfig) => SherpaOnlineRecognizer;
  OfflineSpeakerDiarization: new (config: SherpaDiarizationConfig) => SherpaDiarization;
}

class TaskAborted extends Error {}
class ModelLoadFailed extends Error {}

/** VAD windows between two looks at the cancel flag: 32 × 512 samples ≈ 1 s of audio, a few ms of work. */
const WINDOWS_PER_CANCEL_CHECK = 32;

const port = parentPort!;
const require = createRequire(import.meta.url);
let sherpa: SherpaModule | undefined;
const models = new Map<string, unknown>();

function loadModel<M>(key: string, files: string[], build: (s: SherpaModule) => M): M {
  const cached = models.get(key);
  if (cached) return cached as M;
  // Checked here too because sherpa-onnx ends the whole process, not just this thread, on a bad path.
  const missing = files.filter((file) => !existsSync(file));
  if (missing.length > 0) throw new ModelLoadFailed(`missing files: ${missing.join(', ')}`);
  try {
    sherpa ??= require('sherpa-onnx-node') as SherpaModule;
    const model = build(sherpa);
    models.set(key, model);
    return model;
  } catch (error) {
    throw new ModelLoadFailed(error instanceof Error ? error.message : String(error));
  }
}

function runVad(task: VadTask, cancelled: () => boolean, report: (data: VadResult) => void): VadResult {
  const vad = loadModel(task.key, [task.config.sileroVad.model], (s) => new s.Vad(task.config, task.bufferSeconds));
  vad.clear();
  vad.reset();
  const window = task.config.sileroVad.windowSize;
  const spans: Array<[number, number]> = [];
  const collect = () => {
    const found: Array<[number, number]> = [];
    while (!vad.isEmpty()) {
      const segment = vad.front(false);
      found.push([segment.start, segment.start + segment.samples.length]);
      vad.pop();
    }
    if (found.length > 0) {
      spans.push(...found);
      report({ spans: found });
    }
  };
  const { samples } = task;
  for (let offset = 0, n = 0; offset < samples.length; offset += window, n++) {
    if (n % WINDOWS_PER_CANCEL_CHECK === 0 && cancelled()) throw new TaskAborted();
    vad.acceptWaveform(samples.subarray(offset, Math.min(samples.length, offset + window)));
    collect();
  }
  vad.flush();
  collect();
  vad.reset();
  return { spans };
}

function runOnlineAsr(task: OnlineAsrTask, cancelled: () => boolean): OnlineAsrResult {
  const { transducer, tokens } = task.config.modelConfig;
  const recognizer = loadModel(
    task.key,
    [transducer.encoder, transducer.decoder, transducer.joiner, tokens],
    (s) => new s.OnlineRecognizer(task.config),
  );
  const stream = recognizer.createStream();
  stream.acceptWaveform({ samples: task.samples, sampleRate: task.sampleRate });
  const tail = new Float32Array(Math.round(task.tailPaddingSeconds * task.sampleRate));
  stream.acceptWaveform({ samples: tail, sampleRate: task.sampleRate });
  stream.inputFinished();
  while (recognizer.isReady(stream)) {
    if (cancelled()) throw new TaskAborted();
    recognizer.decode(stream);
  }
  const result = recognizer.getResult(stream);
  return { text: result.text, tokens: result.tokens, timestamps: result.timestamps };
}

function runDiarize(task: DiarizeTask, cancelled: () => boolean): DiarizeResult {
  const { config } = task;
  const diarizer = loadModel(
    task.key,
    [config.segmentation.pyannote.model, config.embedding.model],
    (s) => new s.OfflineSpeakerDiarization(config),
  );
  if (cancelled()) throw new TaskAborted();
  diarizer.setConfig({ clustering: task.clustering });
  // One native call over the whole recording; it cannot be interrupted once started.
  const segments = diarizer.process(task.samples);
  return { segments: segments.map((s) => ({ start: s.start, end: s.end, speaker: s.speaker })) };
}

function run(task: PoolTask, cancelled: () => boolean, report: (data: unknown) => void): unknown {
  switch (task.kind) {
    case 'vad':
      return runVad(task, cancelled, report);
    case 'online-asr':
      return runOnlineAsr(task, cancelled);
    case 'diarize':
      return runDiarize(task, cancelled);
  }
}

port.on('message', (request: WorkerRequest) => {
  const flag = new Int32Array(request.cancel);
  const cancelled = () => Atomics.load(flag, 0) === 1;
  const post = (reply: WorkerReply) => port.postMessage(reply);
  try {
    const result = run(request.task, cancelled, (data) => post({ type: 'progress', id: request.id, data }));
    post({ type: 'done', id: request.id, result });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const reason = error instanceof TaskAborted ? 'aborted' : error instanceof ModelLoadFailed ? 'load' : 'run';
    post({ type: 'error', id: request.id, reason, message });
  }
});

port.postMessage({ type: 'ready' } satisfies WorkerReply);
