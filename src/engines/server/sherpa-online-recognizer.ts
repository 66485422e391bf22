/**
 * A streaming (online) recogniser pack as a Recognizer: each call's
 * audio goes to the task runner as one stream (samples, tail padding, inputFinished, decode until
 * no frames are left). It says `streaming`, so the pipeline hands it the whole recording in long
 * windows rather than VAD segments. sherpa's OnlineRecognizer is synchronous, hence a worker
 * thread. Token timestamps come back as seconds from the start of the samples.
 *
 * openStream() keeps one sherpa OnlineStream alive in a worker thread of the runner's process
 * (online-stream tasks): streaming transcription feeds it each piece of audio once and reads the
 * hypothesis after each, instead of decoding the utterance again for every partial.
 *
 * Hotwords (keywords a request boosts): a request with hotwords decodes on a second model of the
 * pack, decoding with modified beam search, loaded once; each request's list goes to its own stream
 * (sherpa's per-stream hotwords), so a new list costs no model load. The process falls back to a
 * model per list where it cannot give hotwords per stream (sherpa-stream-hotwords.ts).
 */
import { randomUUID } from 'node:crypto';
import { requireCapability, type EnginePack } from '../capabilities.js';
import { hotwordLines, tokensAreUpperCase } from '../sherpa-hotwords.js';
import { modelKey } from './sherpa-pack-files.js';
import type { SherpaOnlineRecognizerConfig } from '../sherpa-onnx.js';
import type { OnlineAsrResult, OnlineStreamTask, PoolTask, TaskRunner } from '../sherpa-tasks.js';
import type { Hotword, RecognizedSegment, Recognizer, RecognizerStream } from '../types.js';

export interface OnlineRecognizerOptions {
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
  /**
   * false: give hotwords through a file, one model per keyword list (a new list costs a model
   * load), as where the inference process cannot give them per stream. Default true.
   */
  hotwordsPerStream?: boolean;
}

/** Paths kept by modified beam search when boosting: sherpa's examples use 4. */
const BOOSTED_ACTIVE_PATHS = 4;

const SAMPLE_RATE = 16_000;

/** The config of the model that decodes requests with hotwords (given per stream). */
export function boostedConfig(config: SherpaOnlineRecognizerConfig): SherpaOnlineRecognizerConfig {
  return { ...config, decodingMethod: 'modified_beam_search', maxActivePaths: BOOSTED_ACTIVE_PATHS };
}

export function createOnlineRecognizer(pool: TaskRunner<PoolTask>, pack: EnginePack<'online-asr'>, options: OnlineRecognizerOptions = {}): Recognizer {
  requireCapability(pack, 'online-asr', 'a streaming recogniser');
  const { config } = pack;
  const key = modelKey([pack], 'online-asr', config);
  const supportsHotwords = pack.traits.hotwords;
  const upperCase = supportsHotwords && tokensAreUpperCase(config.modelConfig.tokens);
  const boosted = boostedConfig(config);
  const boostedKey = modelKey([pack], 'online-asr', boosted);
  /** The model a request decodes with, and its hotwords as sherpa takes them per stream. */
  const modelFor = (hotwords: Hotword[] | undefined) =>
    supportsHotwords && hotwords && hotwords.length > 0
      ? { key: boostedKey, config: boosted, hotwords: hotwordLines(hotwords, upperCase).join('/'), ...(options.hotwordsPerStream === false ? { hotwordsFromFile: true } : {}) }
      : { key, config };
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
    supportsHotwords,
    async recognize(samples, request): Promise<RecognizedSegment> {
      const model = modelFor(request.hotwords);
      const result = await pool.submit(
        { kind: 'online-asr', ...model, samples, sampleRate: SAMPLE_RATE, tailPaddingSeconds: request.tailPaddingSeconds ?? tailPaddingSeconds },
        { signal: request.signal },
      );
      return segmentOf(result);
    },
    async openStream({ signal, hotwords } = {}): Promise<RecognizerStream> {
      const base = { kind: 'online-stream', ...modelFor(hotwords), stream: randomUUID(), sampleRate: SAMPLE_RATE, tailPaddingSeconds } as const;
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
      pool.unload?.(boostedKey);
    },
  };
}
