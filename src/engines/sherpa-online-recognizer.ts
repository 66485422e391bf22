/**
 * A streaming (online) transducer pack (`asr-online-transducer`) as a Recognizer: each call's
 * audio goes to the task runner as one stream (samples, tail padding, inputFinished, decode until
 * no frames are left). It says `streaming`, so the pipeline hands it the whole recording in long
 * windows rather than VAD segments. sherpa's OnlineRecognizer is synchronous, hence a worker
 * thread. Token timestamps come back as seconds from the start of the samples.
 *
 * openStream() keeps one sherpa OnlineStream alive in a worker thread of the runner's process
 * (online-stream tasks): streaming transcription feeds it each piece of audio once and reads the
 * hypothesis after each, instead of decoding the utterance again for every partial.
 */
import { randomUUID } from 'node:crypto';
import type { ModelPack } from './model-pack.js';
import { modelKey, requirePackFiles, requirePackKind } from './sherpa-pack-files.js';
import type { SherpaOnlineRecognizerConfig } from './sherpa-onnx.js';
import type { OnlineAsrResult, OnlineStreamTask, PoolTask, TaskRunner } from './sherpa-tasks.js';
import type { RecognizedSegment, Recognizer, RecognizerStream } from './types.js';

export interface OnlineRecognizerOptions {
  numThreads?: number;
  decodingMethod?: 'greedy_search' | 'modified_beam_search';
  /**
   * Silence appended after the audio so the encoder's last chunk is flushed, seconds, when a call
   * does not say. sherpa-onnx's examples use 0.4 (Node) to 0.66 (Python); default 0.66.
   */
  tailPaddingSeconds?: number;
  /**
   * Subtracted from every token time. A streaming transducer emits a token only after it has
   * heard it, so its times run late: the GigaSpeech 3.3M model's word starts were 0.14-0.37 s
   * (mean ≈ 0.2 s) after the corpus's forced alignments on the three LibriVox files. Default 0.2.
   */
  emissionDelaySeconds?: number;
}

const SAMPLE_RATE = 16_000;

export function buildOnlineRecognizerConfig(pack: ModelPack, options: OnlineRecognizerOptions = {}): SherpaOnlineRecognizerConfig {
  requirePackKind(pack, ['asr-online-transducer'], 'a streaming transducer');
  const files = requirePackFiles(pack, ['encoder', 'decoder', 'joiner', 'tokens']);
  const decodingMethod = options.decodingMethod ?? 'greedy_search';
  return {
    featConfig: { sampleRate: SAMPLE_RATE, featureDim: 80 },
    modelConfig: {
      transducer: { encoder: files.encoder, decoder: files.decoder, joiner: files.joiner },
      tokens: files.tokens,
      numThreads: options.numThreads ?? 1,
      provider: 'cpu',
      debug: 0,
      // Only needed for hotwords written as words; harmless otherwise.
      ...(pack.files.bpeVocab ? { modelingUnit: 'bpe', bpeVocab: pack.files.bpeVocab } : {}),
    },
    decodingMethod,
    ...(decodingMethod === 'modified_beam_search' ? { maxActivePaths: 4 } : {}),
    // The pipeline hands over VAD segments; endpointing inside one would only split it.
    enableEndpoint: 0,
  };
}

export function createOnlineRecognizer(pool: TaskRunner<PoolTask>, pack: ModelPack, options: OnlineRecognizerOptions = {}): Recognizer {
  const config = buildOnlineRecognizerConfig(pack, options);
  const key = modelKey([pack], 'online-asr', config);
  const tailPaddingSeconds = options.tailPaddingSeconds ?? 0.66;
  const delay = options.emissionDelaySeconds ?? 0.2;
  const segmentOf = (result: OnlineAsrResult): RecognizedSegment => {
    const timed = result.timestamps.length === result.tokens.length;
    return {
      text: result.text.trim(),
      tokens: result.tokens,
      timestamps: timed ? result.timestamps.map((t) => Math.max(0, t - delay)) : [],
      durations: [],
      ...(result.logProbs.length === result.tokens.length && result.tokens.length > 0 ? { tokenLogProbs: result.logProbs } : {}),
    };
  };
  const none = new Float32Array(0);
  return {
    id: pack.id,
    languages: pack.languages.length > 0 ? [...pack.languages] : ['en'],
    sampleRate: SAMPLE_RATE,
    hasTokenTimestamps: true,
    streaming: true,
    async recognize(samples, request): Promise<RecognizedSegment> {
      const result = await pool.submit(
        { kind: 'online-asr', key, config, samples, sampleRate: SAMPLE_RATE, tailPaddingSeconds: request.tailPaddingSeconds ?? tailPaddingSeconds },
        { signal: request.signal },
      );
      return segmentOf(result);
    },
    async openStream({ signal } = {}): Promise<RecognizerStream> {
      const base = { kind: 'online-stream', key, config, stream: randomUUID(), sampleRate: SAMPLE_RATE, tailPaddingSeconds } as const;
      const run = (op: OnlineStreamTask['op'], samples: Float32Array, opts: { signal?: AbortSignal }) => pool.submit({ ...base, op, samples }, opts);
      await run('open', none, { signal });
      let open = true;
      return {
        accept: async (samples, opts = {}) => segmentOf(await run('accept', samples, opts)),
        finish: async (opts = {}) => {
          open = false; // the process drops it, whatever the outcome
          return segmentOf(await run('finish', none, opts));
        },
        close() {
          if (!open) return;
          open = false;
          void run('close', none, {}).catch(() => undefined);
        },
      };
    },
    async close() {
      pool.unload?.(key);
    },
  };
}
