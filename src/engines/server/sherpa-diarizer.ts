/**
 * Speaker diarization with sherpa-onnx's OfflineSpeakerDiarization: a segmentation pack
 * finds local speakers per window, an embedding pack embeds
 * them and fast clustering joins the embeddings into speakers. Synchronous in sherpa, so it runs
 * on a worker thread of the task runner.
 *
 * The speaker count is never known for an API request, so clustering stops merging at a cosine
 * distance threshold (config `transcription.diarizationThreshold`, default 0.5, the value of
 * sherpa's examples): raise it to get fewer speakers, lower it to get more. `numClusters` fixes
 * the count instead when a caller does know it.
 */
import { diarizationConfig, requireCapability, type DiarizationOptions, type EnginePack } from '../capabilities.js';
import { modelKey } from './sherpa-pack-files.js';
import type { PoolTask, TaskRunner } from '../sherpa-tasks.js';
import type { Diarizer, SpeakerTurn } from '../types.js';

/** Segmentation and embedding models for diarization take 16 kHz. */
const SAMPLE_RATE = 16_000;

export function createDiarizer(
  pool: TaskRunner<PoolTask>,
  segmentationPack: EnginePack<'segmentation'>,
  embeddingPack: EnginePack<'embedding'>,
  options: DiarizationOptions = {},
): Diarizer {
  requireCapability(segmentationPack, 'segmentation', 'a speaker segmentation model');
  requireCapability(embeddingPack, 'embedding', 'a speaker embedding model');
  const config = diarizationConfig(segmentationPack.config, embeddingPack.config, options);
  // Clustering is set per task, so it stays out of the key: one loaded model serves every setting.
  const { clustering, ...modelConfig } = config;
  const key = modelKey([segmentationPack, embeddingPack], 'diarize', modelConfig);
  return {
    sampleRate: SAMPLE_RATE,
    async diarize(samples, opts = {}): Promise<SpeakerTurn[]> {
      const { segments } = await pool.submit({ kind: 'diarize', key, config, clustering, samples, withConfidence: opts.confidence === true }, { signal: opts.signal });
      return segments
        .filter((s) => s.end > s.start)
        .sort((a, b) => a.start - b.start || a.end - b.end)
        .map((s) => ({ start: s.start, end: s.end, speaker: s.speaker, ...(s.confidence !== undefined && { confidence: s.confidence }) }));
    },
    async close() {
      pool.unload?.(key);
    },
  };
}
