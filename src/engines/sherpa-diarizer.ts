/**
 * Speaker diarization with sherpa-onnx's OfflineSpeakerDiarization: a pyannote segmentation pack
 * (`diarization-segmentation`) finds local speakers per window, a `speaker-embedding` pack embeds
 * them and fast clustering joins the embeddings into speakers. Synchronous in sherpa, so it runs
 * on a worker thread of the task runner.
 *
 * The speaker count is never known for an API request, so clustering stops merging at a cosine
 * distance threshold (config `transcription.diarizationThreshold`, default 0.5, the value of
 * sherpa's examples): raise it to get fewer speakers, lower it to get more. `numClusters` fixes
 * the count instead when a caller does know it.
 */
import type { ModelPack } from './model-pack.js';
import { modelKey, requirePackFiles, requirePackKind } from './sherpa-pack-files.js';
import type { SherpaClusteringConfig, SherpaDiarizationConfig } from './sherpa-onnx.js';
import type { PoolTask, TaskRunner } from './sherpa-tasks.js';
import type { Diarizer, SpeakerTurn } from './types.js';

export interface DiarizerOptions {
  /** Cosine-distance threshold of clustering when the speaker count is unknown; default 0.5. */
  threshold?: number;
  /** Known number of speakers; overrides `threshold`. */
  numClusters?: number;
  /** Turns shorter than this are dropped, seconds (sherpa example: 0.2). */
  minDurationOn?: number;
  /** Gaps shorter than this between turns of one speaker are closed, seconds (sherpa example: 0.5). */
  minDurationOff?: number;
  numThreads?: number;
}

/** pyannote segmentation 3.0 and the sherpa speaker-embedding models all take 16 kHz. */
const SAMPLE_RATE = 16_000;

export function buildDiarizationConfig(
  segmentationPack: ModelPack,
  embeddingPack: ModelPack,
  options: DiarizerOptions = {},
): SherpaDiarizationConfig {
  requirePackKind(segmentationPack, ['diarization-segmentation'], 'a speaker segmentation model');
  requirePackKind(embeddingPack, ['speaker-embedding'], 'a speaker embedding model');
  const segmentation = requirePackFiles(segmentationPack, ['model']).model;
  const embedding = requirePackFiles(embeddingPack, ['model']).model;
  const numThreads = options.numThreads ?? 1;
  return {
    segmentation: { pyannote: { model: segmentation }, numThreads, provider: 'cpu', debug: 0 },
    embedding: { model: embedding, numThreads, provider: 'cpu', debug: 0 },
    clustering: clusteringOf(options),
    minDurationOn: options.minDurationOn ?? 0.2,
    minDurationOff: options.minDurationOff ?? 0.5,
  };
}

function clusteringOf(options: DiarizerOptions): SherpaClusteringConfig {
  const numClusters = options.numClusters && options.numClusters > 0 ? Math.floor(options.numClusters) : -1;
  return { numClusters, threshold: options.threshold ?? 0.5 };
}

export function createDiarizer(
  pool: TaskRunner<PoolTask>,
  segmentationPack: ModelPack,
  embeddingPack: ModelPack,
  options: DiarizerOptions = {},
): Diarizer {
  const config = buildDiarizationConfig(segmentationPack, embeddingPack, options);
  // Clustering is set per task, so it stays out of the key: one loaded model serves every setting.
  const { clustering, ...modelConfig } = config;
  const key = modelKey([segmentationPack, embeddingPack], 'diarize', modelConfig);
  return {
    sampleRate: SAMPLE_RATE,
    async diarize(samples, opts = {}): Promise<SpeakerTurn[]> {
      const { segments } = await pool.submit({ kind: 'diarize', key, config, clustering, samples }, { signal: opts.signal });
      return segments
        .filter((s) => s.end > s.start)
        .sort((a, b) => a.start - b.start || a.end - b.end)
        .map((s) => ({ start: s.start, end: s.end, speaker: s.speaker }));
    },
    async close() {
      pool.unload?.(key);
    },
  };
}
