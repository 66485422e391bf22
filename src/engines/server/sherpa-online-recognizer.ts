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
 * Hotwords (keywords a request boosts): sherpa-onnx-node's OnlineRecognizer takes them only from
 * a file named in its config, decoded with modified beam search, so a request with hotwords runs
 * on a second model keyed by its hotwords file (named by content: the same list is the same
 * model). At most `maxBoostedModels` (default 4) such models stay loaded; the least recently used
 * one that no request holds is unloaded and its file removed.
 */
import { randomUUID } from 'node:crypto';
import { requireCapability, type EnginePack } from '../capabilities.js';
import { dropHotwordsFile, dropHotwordsFiles, hotwordLines, hotwordsFile, tokensAreUpperCase } from './sherpa-hotwords.js';
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
  /** Models with a request's hotwords kept loaded at once (each as large as the plain one); default 4. */
  maxBoostedModels?: number;
}

/** Paths kept by modified beam search when boosting: sherpa's examples use 4. */
const BOOSTED_ACTIVE_PATHS = 4;

const SAMPLE_RATE = 16_000;

/** The config of the model that decodes with these hotwords. */
export function boostedConfig(config: SherpaOnlineRecognizerConfig, file: string): SherpaOnlineRecognizerConfig {
  return { ...config, decodingMethod: 'modified_beam_search', maxActivePaths: BOOSTED_ACTIVE_PATHS, hotwordsFile: file };
}

interface BoostedModel {
  key: string;
  config: SherpaOnlineRecognizerConfig;
  file: string;
  users: number;
}

/** The loaded models with hotwords, least recently used first, bounded; each held while a request uses it. */
class BoostedModels {
  private readonly models = new Map<string, BoostedModel>();
  /** Names this recogniser's folder of hotwords files. */
  private readonly owner = randomUUID();

  constructor(
    private readonly pool: TaskRunner<PoolTask>,
    private readonly pack: EnginePack<'online-asr'>,
    private readonly base: SherpaOnlineRecognizerConfig,
    private readonly upperCase: boolean,
    private readonly max: number,
  ) {}

  take(hotwords: Hotword[]): BoostedModel {
    const file = hotwordsFile(hotwordLines(hotwords, this.upperCase), this.owner);
    let model = this.models.get(file);
    if (model) {
      this.models.delete(file);
    } else {
      const config = boostedConfig(this.base, file);
      model = { key: modelKey([this.pack], 'online-asr', config), config, file, users: 0 };
    }
    this.models.set(file, model);
    model.users++;
    this.evict();
    return model;
  }

  give(model: BoostedModel): void {
    model.users--;
    this.evict();
  }

  private evict(): void {
    for (const [file, model] of this.models) {
      if (this.models.size <= this.max) return;
      if (model.users > 0) continue;
      this.models.delete(file);
      this.pool.unload?.(model.key);
      dropHotwordsFile(file);
    }
  }

  closeAll(): void {
    for (const model of this.models.values()) this.pool.unload?.(model.key);
    this.models.clear();
    dropHotwordsFiles(this.owner);
  }
}

export function createOnlineRecognizer(pool: TaskRunner<PoolTask>, pack: EnginePack<'online-asr'>, options: OnlineRecognizerOptions = {}): Recognizer {
  requireCapability(pack, 'online-asr', 'a streaming recogniser');
  const { config } = pack;
  const key = modelKey([pack], 'online-asr', config);
  const supportsHotwords = pack.traits.hotwords;
  const boosted = new BoostedModels(pool, pack, config, supportsHotwords && tokensAreUpperCase(config.modelConfig.tokens), options.maxBoostedModels ?? 4);
  /** The model key and config a request decodes with, and what to call when it is done with them. */
  const modelFor = (hotwords: Hotword[] | undefined) => {
    if (!supportsHotwords || !hotwords || hotwords.length === 0) return { key, config, done: () => undefined };
    const model = boosted.take(hotwords);
    let held = true;
    return {
      key: model.key,
      config: model.config,
      done: () => {
        if (held) boosted.give(model);
        held = false;
      },
    };
  };
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
      try {
        const result = await pool.submit(
          { kind: 'online-asr', key: model.key, config: model.config, samples, sampleRate: SAMPLE_RATE, tailPaddingSeconds: request.tailPaddingSeconds ?? tailPaddingSeconds },
          { signal: request.signal },
        );
        return segmentOf(result);
      } finally {
        model.done();
      }
    },
    async openStream({ signal, hotwords } = {}): Promise<RecognizerStream> {
      const model = modelFor(hotwords);
      const base = { kind: 'online-stream', key: model.key, config: model.config, stream: randomUUID(), sampleRate: SAMPLE_RATE, tailPaddingSeconds } as const;
      const run = (op: OnlineStreamTask['op'], samples: Float32Array, opts: { signal?: AbortSignal }) => pool.submit({ ...base, op, samples }, opts);
      try {
        await run('open', none, { signal });
      } catch (error) {
        model.done();
        throw error;
      }
      let open = true;
      return {
        accept: async (samples, opts = {}) => segmentOf(await run('accept', samples, opts)),
        finish: async (opts = {}) => {
          open = false; // the process drops it, whatever the outcome
          try {
            return segmentOf(await run('finish', none, opts));
          } finally {
            model.done();
          }
        },
        close() {
          if (!open) return;
          open = false;
          model.done();
          void run('close', none, {}).catch(() => undefined);
        },
      };
    },
    async close() {
      pool.unload?.(key);
      boosted.closeAll();
    },
  };
}
