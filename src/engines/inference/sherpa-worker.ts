/**
 * Worker-thread body of the sherpa worker pool (worker-pool.ts), for sherpa-onnx's synchronous
 * calls (VAD, streaming ASR, diarization, audio tagging). Runs one task at a time; builds
 * each model the first time a task names its key and keeps it for the life of the thread, so a
 * warm worker pays only for inference. Live recognition streams (online-stream tasks) stay here
 * between tasks: the pool sends every task of a stream to the thread that opened it.
 */
import { existsSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import type {
  DiarizeResult,
  DiarizeTask,
  OnlineAsrResult,
  OnlineAsrTask,
  OnlineStreamTask,
  PoolTask,
  PunctuateTask,
  TaggingResult,
  TaggingTask,
  VadResult,
  VadTask,
  WorkerReply,
  WorkerRequest,
} from '../sherpa-tasks.js';
import { NO_RECOGNITION } from '../sherpa-tasks.js';
import {
  loadSherpaOnnx,
  type SherpaOfflinePunctuationConfig,
  type SherpaOnlinePunctuationConfig,
  type SherpaOnlineRecognizer,
  type SherpaOnlineStream,
  type SherpaOnnx,
} from '../sherpa-onnx.js';

class TaskAborted extends Error {}
class ModelLoadFailed extends Error {}

/** VAD windows between two looks at the cancel flag: 32 × 512 samples ≈ 1 s of audio, a few ms of work. */
const WINDOWS_PER_CANCEL_CHECK = 32;

/** compute() clamps top_k to the number of classes (527 for AudioSet), so this returns them all. */
const ALL_CLASSES = 10_000;

const port = parentPort!;
const models = new Map<string, unknown>();
/** Open recognition streams of this thread, by stream id (each keeps its recogniser alive). */
const streams = new Map<string, { recognizer: SherpaOnlineRecognizer; stream: SherpaOnlineStream }>();

function loadModel<M>(key: string, files: string[], build: (s: SherpaOnnx) => M): M {
  const cached = models.get(key);
  if (cached) return cached as M;
  // Checked here too because sherpa-onnx ends the whole process, not just this thread, on a bad path.
  const missing = files.filter((file) => !existsSync(file));
  if (missing.length > 0) throw new ModelLoadFailed(`missing files: ${missing.join(', ')}`);
  try {
    const model = build(loadSherpaOnnx());
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

function onlineRecognizer(task: OnlineAsrTask | OnlineStreamTask): SherpaOnlineRecognizer {
  const { transducer, tokens } = task.config.modelConfig;
  const hotwords = task.config.hotwordsFile ? [task.config.hotwordsFile] : [];
  return loadModel(task.key, [transducer.encoder, transducer.decoder, transducer.joiner, tokens, ...hotwords], (s) => new s.OnlineRecognizer(task.config));
}

function decodeReady(recognizer: SherpaOnlineRecognizer, stream: SherpaOnlineStream, cancelled: () => boolean): void {
  while (recognizer.isReady(stream)) {
    if (cancelled()) throw new TaskAborted();
    recognizer.decode(stream);
  }
}

function finishStream(recognizer: SherpaOnlineRecognizer, stream: SherpaOnlineStream, task: OnlineAsrTask | OnlineStreamTask, cancelled: () => boolean): OnlineAsrResult {
  const tail = new Float32Array(Math.round(task.tailPaddingSeconds * task.sampleRate));
  stream.acceptWaveform({ samples: tail, sampleRate: task.sampleRate });
  stream.inputFinished();
  decodeReady(recognizer, stream, cancelled);
  return resultOf(recognizer, stream);
}

function resultOf(recognizer: SherpaOnlineRecognizer, stream: SherpaOnlineStream): OnlineAsrResult {
  const result = recognizer.getResult(stream);
  const logProbs = result.ys_probs?.length === result.tokens.length ? result.ys_probs : [];
  return { text: result.text, tokens: result.tokens, timestamps: result.timestamps, logProbs };
}

function runOnlineAsr(task: OnlineAsrTask, cancelled: () => boolean): OnlineAsrResult {
  const recognizer = onlineRecognizer(task);
  const stream = recognizer.createStream();
  stream.acceptWaveform({ samples: task.samples, sampleRate: task.sampleRate });
  return finishStream(recognizer, stream, task, cancelled);
}

function runOnlineStream(task: OnlineStreamTask, cancelled: () => boolean): OnlineAsrResult {
  if (task.op === 'open') {
    const recognizer = onlineRecognizer(task);
    streams.set(task.stream, { recognizer, stream: recognizer.createStream() });
    return NO_RECOGNITION;
  }
  if (task.op === 'close') {
    streams.delete(task.stream);
    return NO_RECOGNITION;
  }
  const open = streams.get(task.stream);
  if (!open) throw new Error(`recognition stream ${task.stream} is not open in this thread`);
  const { recognizer, stream } = open;
  if (task.op === 'finish') {
    // Gone whatever happens: a finished stream takes no more audio.
    streams.delete(task.stream);
    return finishStream(recognizer, stream, task, cancelled);
  }
  if (task.samples.length > 0) stream.acceptWaveform({ samples: task.samples, sampleRate: task.sampleRate });
  // Cancelled midway, the stream stays whole: what is not decoded yet is decoded by the next accept.
  decodeReady(recognizer, stream, cancelled);
  return resultOf(recognizer, stream);
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

function runTagging(task: TaggingTask, cancelled: () => boolean): TaggingResult {
  const { config } = task;
  const tagger = loadModel(task.key, [config.model.ced ?? config.model.zipformer?.model ?? '', config.labels], (s) => new s.AudioTagging(config));
  if (cancelled()) throw new TaskAborted();
  const stream = tagger.createStream();
  stream.acceptWaveform({ samples: task.samples, sampleRate: task.sampleRate });
  const events = tagger.compute(stream, ALL_CLASSES).map((e) => ({ name: e.name, prob: e.prob, index: e.index }));
  return { events };
}

function runPunctuate(task: PunctuateTask): { text: string } {
  const { config } = task;
  const punctuation =
    'ctTransformer' in config.model
      ? loadModel(task.key, [config.model.ctTransformer], (s) => new s.OfflinePunctuation(config as SherpaOfflinePunctuationConfig))
      : loadModel(task.key, [config.model.cnnBilstm, config.model.bpeVocab], (s) => new s.OnlinePunctuation(config as SherpaOnlinePunctuationConfig));
  return { text: punctuation.addPunct(task.text) };
}

function run(task: PoolTask, cancelled: () => boolean, report: (data: unknown) => void): unknown {
  switch (task.kind) {
    case 'vad':
      return runVad(task, cancelled, report);
    case 'online-asr':
      return runOnlineAsr(task, cancelled);
    case 'online-stream':
      return runOnlineStream(task, cancelled);
    case 'diarize':
      return runDiarize(task, cancelled);
    case 'tagging':
      return runTagging(task, cancelled);
    case 'punctuate':
      return runPunctuate(task);
  }
}

port.on('message', (request: WorkerRequest) => {
  if (request.type === 'unload') {
    // sherpa frees the native model when the wrapper is collected.
    models.delete(request.key);
    return;
  }
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
