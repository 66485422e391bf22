/**
 * Worker-thread body for sherpa-onnx AudioTagging, whose compute() is synchronous and would stall
 * the event loop for the length of a forward pass. Started by audio-tagging-runner.ts with the pack's
 * files as workerData; answers {id, samples, sampleRate} messages with that chunk's events.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';
import type { AudioEvent } from './audio-tagging.js';
import type { AudioTaggingFiles, AudioTaggingReply, AudioTaggingRequest } from './audio-tagging-runner.js';

/** The slice of sherpa-onnx-node this worker uses (lib/audio-tagg.js, lib/types.js). */
interface SherpaAudioTaggingModule {
  AudioTagging: new (config: {
    model: { ced?: string; zipformer?: { model: string }; numThreads?: number; debug?: number; provider?: string };
    labels: string;
    topK?: number;
  }) => {
    createStream(): { acceptWaveform(w: { samples: Float32Array; sampleRate: number }): void };
    compute(stream: unknown, topK?: number): AudioEvent[];
  };
}

/** compute() clamps top_k to the number of classes (527 for AudioSet), so this returns them all. */
const ALL_CLASSES = 10_000;

const port = parentPort!;
const files = workerData as AudioTaggingFiles;
const post = (reply: AudioTaggingReply) => port.postMessage(reply);

const missing = [files.model, files.labels].filter((file) => !existsSync(file));
if (missing.length > 0) {
  // Checked here because sherpa-onnx ends the whole process, not just this thread, on a bad path.
  post({ type: 'failed', message: `audio tagging pack files are missing: ${missing.join(', ')}` });
} else {
  try {
    const require = createRequire(import.meta.url);
    const sherpa = require('sherpa-onnx-node') as SherpaAudioTaggingModule;
    const model =
      files.family === 'ced'
        ? { ced: files.model, numThreads: files.numThreads ?? 1, debug: 0 }
        : { zipformer: { model: files.model }, numThreads: files.numThreads ?? 1, debug: 0 };
    const tagger = new sherpa.AudioTagging({ model, labels: files.labels, topK: ALL_CLASSES });
    post({ type: 'ready' });
    port.on('message', (request: AudioTaggingRequest) => {
      try {
        const stream = tagger.createStream();
        stream.acceptWaveform({ samples: request.samples, sampleRate: request.sampleRate });
        const events = tagger.compute(stream, ALL_CLASSES).map((e) => ({ name: e.name, prob: e.prob, index: e.index }));
        post({ type: 'result', id: request.id, events });
      } catch (error) {
        post({ type: 'error', id: request.id, message: error instanceof Error ? error.message : String(error) });
      }
    });
  } catch (error) {
    post({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
  }
}
