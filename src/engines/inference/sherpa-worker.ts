/**
 * Worker-thread body of the sherpa worker pool (worker-pool.ts), for sherpa-onnx's synchronous
 * calls (VAD, streaming ASR, diarization, audio tagging). Runs one task at a time; builds
 * each model the first time a task names its key and keeps it for the life of the thread, so a
 * warm worker pays only for inference. Live recognition streams (online-stream tasks) stay here
 * between tasks: the pool sends every task of a stream to the thread that opened it.
 */
import { existsSync } from 'node:fs';
import { parentPort, threadId } from 'node:worker_threads';
import { dropDeadProcessesFiles, dropHotwordsFile, hotwordsFile, processOwner } from '../sherpa-hotwords.js';
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
import { NO_RECOGNITION, VARIANT_SEPARATOR } from '../sherpa-tasks.js';
import { speakerConfidences } from '../speaker-confidence.js';
import {
  loadSherpaOnnx,
  type SherpaOfflinePunctuationConfig,
  type SherpaOnlinePunctuationConfig,
  type SherpaOnlineRecognizer,
  type SherpaOnlineStream,
  type SherpaOnnx,
} from '../sherpa-onnx.js';
import { createStreamHotwordsRecognizer, streamHotwordsUnavailable, type StreamHotwordsRecognizer } from './sherpa-stream-hotwords.js';

class TaskAborted extends Error {}
class ModelLoadFailed extends Error {}

/** VAD windows between two looks at the cancel flag: 32 × 512 samples ≈ 1 s of audio, a few ms of work. */
const WINDOWS_PER_CANCEL_CHECK = 32;

/** compute() clamps top_k to the number of classes (527 for AudioSet), so this returns them all. */
const ALL_CLASSES = 10_000;

const port = parentPort!;
const models = new Map<string, unknown>();

/** What decodes a stream: sherpa-onnx-node's recogniser, or the C-bound one that takes hotwords per stream. */
type OnlineDecoder = Pick<SherpaOnlineRecognizer, 'isReady' | 'decode' | 'getResult'>;
interface OpenStream {
  recognizer: OnlineDecoder;
  stream: SherpaOnlineStream;
  /** Releases the stream's native memory now (sherpa-onnx-node's streams are left to the collector). */
  free(): void;
}

/** Open recognition streams of this thread, by stream id (each keeps its recogniser alive). */
const streams = new Map<string, OpenStream>();

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

/**
 * VADs built with another threshold than their pack's (keys holding VARIANT_SEPARATOR), newest
 * last: a Silero VAD is small, but a client choosing the threshold must not make a thread hold
 * one per value.
 */
const vadVariants: string[] = [];
const VAD_THRESHOLD_VARIANTS = 4;

function runVad(task: VadTask, cancelled: () => boolean, report: (data: VadResult) => void): VadResult {
  if (task.key.includes(VARIANT_SEPARATOR)) {
    if (vadVariants.includes(task.key)) vadVariants.splice(vadVariants.indexOf(task.key), 1);
    vadVariants.push(task.key);
    for (const old of vadVariants.splice(0, Math.max(0, vadVariants.length - VAD_THRESHOLD_VARIANTS))) models.delete(old);
  }
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

/** The files a streaming config reads; beam search spells hotwords with the BPE vocabulary. */
function modelFiles(config: OnlineAsrTask['config']): string[] {
  const { transducer, tokens, bpeVocab } = config.modelConfig;
  const vocab = bpeVocab && config.decodingMethod === 'modified_beam_search' ? [bpeVocab] : [];
  return [transducer.encoder, transducer.decoder, transducer.joiner, tokens, ...vocab, ...(config.hotwordsFile ? [config.hotwordsFile] : [])];
}

function onlineRecognizer(task: OnlineAsrTask | OnlineStreamTask, key = task.key, config = task.config): SherpaOnlineRecognizer {
  return loadModel(key, modelFiles(config), (s) => new s.OnlineRecognizer(config));
}

/**
 * Recognisers loaded with one keyword list each (the fallback below), newest last: at most
 * FILE_HOTWORDS_MODELS per thread, each under its task's key + VARIANT_SEPARATOR + its list.
 */
const fileHotwordsModels: Array<{ key: string; file: string }> = [];
const FILE_HOTWORDS_MODELS = 2;
let fallbackLogged = false;

/**
 * The recogniser and stream for a task with hotwords: one recogniser per model, the hotwords given
 * to the stream (sherpa's C call; no model load for a new list). Where that call cannot be bound
 * (see sherpa-stream-hotwords.ts), the list goes into a hotwords file and a recogniser is loaded
 * with it, as sherpa-onnx-node alone allows: a new list then costs a model load.
 */
function openWithHotwords(task: OnlineAsrTask | OnlineStreamTask, hotwords: string): OpenStream {
  const unavailable = task.hotwordsFromFile ? undefined : streamHotwordsUnavailable();
  if (!task.hotwordsFromFile && !unavailable) {
    const recognizer = loadModel<StreamHotwordsRecognizer>(task.key, modelFiles(task.config), () => createStreamHotwordsRecognizer(task.config));
    const stream = recognizer.createStream(hotwords);
    return { recognizer, stream, free: () => stream.free() };
  }
  if (unavailable && !fallbackLogged) {
    fallbackLogged = true;
    console.warn(`parley: per-stream hotwords unavailable (${unavailable}); each new keyword list loads its own streaming model`);
  }
  const key = `${task.key}${VARIANT_SEPARATOR}${hotwords}`;
  let entry = fileHotwordsModels.find((m) => m.key === key);
  if (entry) fileHotwordsModels.splice(fileHotwordsModels.indexOf(entry), 1);
  else entry = { key, file: hotwordsFile(hotwords.split('/'), hotwordsOwner()) };
  fileHotwordsModels.push(entry);
  for (const old of fileHotwordsModels.splice(0, Math.max(0, fileHotwordsModels.length - FILE_HOTWORDS_MODELS))) {
    models.delete(old.key);
    dropHotwordsFile(old.file);
  }
  const recognizer = onlineRecognizer(task, key, { ...task.config, hotwordsFile: entry.file });
  return { recognizer, stream: recognizer.createStream(), free: () => undefined };
}

let sweptDeadFolders = false;

/** This thread's owner name for hotwords files (the pool removes its folder when the thread ends); the first call clears dead processes' folders. */
function hotwordsOwner(): string {
  if (!sweptDeadFolders) {
    sweptDeadFolders = true;
    dropDeadProcessesFiles();
  }
  return processOwner(threadId);
}

function openStream(task: OnlineAsrTask | OnlineStreamTask): OpenStream {
  if (task.hotwords) return openWithHotwords(task, task.hotwords);
  const recognizer = onlineRecognizer(task);
  return { recognizer, stream: recognizer.createStream(), free: () => undefined };
}

function decodeReady(recognizer: OnlineDecoder, stream: SherpaOnlineStream, cancelled: () => boolean): void {
  while (recognizer.isReady(stream)) {
    if (cancelled()) throw new TaskAborted();
    recognizer.decode(stream);
  }
}

function finishStream(recognizer: OnlineDecoder, stream: SherpaOnlineStream, task: OnlineAsrTask | OnlineStreamTask, cancelled: () => boolean): OnlineAsrResult {
  const tail = new Float32Array(Math.round(task.tailPaddingSeconds * task.sampleRate));
  stream.acceptWaveform({ samples: tail, sampleRate: task.sampleRate });
  stream.inputFinished();
  decodeReady(recognizer, stream, cancelled);
  return resultOf(recognizer, stream);
}

function resultOf(recognizer: OnlineDecoder, stream: SherpaOnlineStream): OnlineAsrResult {
  const result = recognizer.getResult(stream);
  const logProbs = result.ys_probs?.length === result.tokens.length ? result.ys_probs : [];
  return { text: result.text, tokens: result.tokens, timestamps: result.timestamps, logProbs };
}

function runOnlineAsr(task: OnlineAsrTask, cancelled: () => boolean): OnlineAsrResult {
  const { recognizer, stream, free } = openStream(task);
  try {
    stream.acceptWaveform({ samples: task.samples, sampleRate: task.sampleRate });
    return finishStream(recognizer, stream, task, cancelled);
  } finally {
    free();
  }
}

function runOnlineStream(task: OnlineStreamTask, cancelled: () => boolean): OnlineAsrResult {
  if (task.op === 'open') {
    streams.set(task.stream, openStream(task));
    return NO_RECOGNITION;
  }
  if (task.op === 'close') {
    streams.get(task.stream)?.free();
    streams.delete(task.stream);
    return NO_RECOGNITION;
  }
  const open = streams.get(task.stream);
  if (!open) throw new Error(`recognition stream ${task.stream} is not open in this thread`);
  const { recognizer, stream } = open;
  if (task.op === 'finish') {
    // Gone whatever happens: a finished stream takes no more audio.
    streams.delete(task.stream);
    try {
      return finishStream(recognizer, stream, task, cancelled);
    } finally {
      open.free();
    }
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
  if (!task.withConfidence) return { segments: segments.map((s) => ({ start: s.start, end: s.end, speaker: s.speaker })) };
  // sherpa gives no score with its clusters: each segment is embedded again with the same model
  // to say how surely it is its speaker's (speaker-confidence.ts).
  const { model, numThreads, provider } = config.embedding;
  const extractor = loadModel(embeddingKey(task.key), [model], (s) => new s.SpeakerEmbeddingExtractor({ model, numThreads, provider, debug: 0 }));
  const rate = diarizer.sampleRate;
  const embedded = segments.map((s) => {
    if (cancelled()) throw new TaskAborted();
    const stream = extractor.createStream();
    stream.acceptWaveform({ samples: task.samples.subarray(Math.round(s.start * rate), Math.round(s.end * rate)), sampleRate: rate });
    stream.inputFinished();
    return { start: s.start, end: s.end, speaker: s.speaker, ...(extractor.isReady(stream) ? { embedding: extractor.compute(stream) } : {}) };
  });
  const confidences = speakerConfidences(embedded);
  return {
    segments: segments.map((s, i) => ({ start: s.start, end: s.end, speaker: s.speaker, ...(confidences[i] !== undefined && { confidence: confidences[i] }) })),
  };
}

/** The key of a diarization model's own embedding extractor, unloaded with it. */
function embeddingKey(key: string): string {
  return `${key}${VARIANT_SEPARATOR}segment-embeddings`;
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
    // sherpa frees the native model when the wrapper is collected (the C-bound one likewise).
    models.delete(request.key);
    models.delete(embeddingKey(request.key));
    const variant = `${request.key}${VARIANT_SEPARATOR}`;
    for (const entry of fileHotwordsModels.filter((m) => m.key.startsWith(variant))) {
      fileHotwordsModels.splice(fileHotwordsModels.indexOf(entry), 1);
      models.delete(entry.key);
      dropHotwordsFile(entry.file);
    }
    for (const key of vadVariants.filter((k) => k.startsWith(variant))) {
      vadVariants.splice(vadVariants.indexOf(key), 1);
      models.delete(key);
    }
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
