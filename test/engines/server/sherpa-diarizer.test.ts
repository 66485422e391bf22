/**
 * Runs sherpa's real OfflineSpeakerDiarization with two hand-made, non-pretrained fixtures (the
 * real pyannote and embedding models could not be obtained): speech is found for real, but which
 * speaker a turn gets is arbitrary, so these tests check shape and clustering controls only.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AbortedError, ModelPackError } from '../../../src/errors.js';
import { diarizationConfig } from '../../../src/engines/capabilities.js';
import { createDiarizer } from '../../../src/engines/server/sherpa-diarizer.js';
import { createWorkerPool, type WorkerPool } from '../../../src/engines/inference/worker-pool.js';
import { embeddingEngine, embeddingPack, loadCorpusAudio, rttmTurns, segmentationEngine, segmentationPack } from '../stt-fixtures.js';
import { needs, REAL_TEST_MODELS } from '../../helpers/models.js';

const NEEDS = needs({ corpus: true });

const speakersOf = (turns: { speaker: number }[]) => new Set(turns.map((t) => t.speaker)).size;

describe('sherpa speaker diarization (worker pool)', { skip: NEEDS }, () => {
  let pool: WorkerPool;
  before(() => (pool = createWorkerPool({ workers: 1 })));
  after(() => pool.close());

  it('builds the config with the default threshold and an unknown speaker count', () => {
    const config = diarizationConfig(segmentationEngine().config, embeddingEngine().config);
    assert.deepEqual(config.clustering, { numClusters: -1, threshold: 0.5 });
    assert.equal(config.segmentation.pyannote.model, segmentationPack().files.model);
    assert.equal(config.embedding.model, embeddingPack().files.model);
    assert.deepEqual(diarizationConfig(segmentationEngine().config, embeddingEngine().config, { numClusters: 3 }).clustering.numClusters, 3);
    const swapped = () => createDiarizer(pool, embeddingEngine() as never, segmentationEngine() as never);
    assert.throws(swapped, ModelPackError);
  });

  it('returns ordered turns inside the audio that fall on labelled speech', async () => {
    const diarizer = createDiarizer(pool, segmentationEngine(), embeddingEngine());
    for (const name of ['picovoice-falcon-3spk', 'ami-debug-dev00-30s']) {
      const audio = loadCorpusAudio(`diarization/${name}.wav`);
      const duration = audio.samples.length / audio.sampleRate;
      const turns = await diarizer.diarize(audio.samples);
      assert.ok(turns.length > 0, name);
      const reference = rttmTurns(`diarization/${name}.rttm`);
      turns.forEach((t, i) => {
        assert.ok(t.start >= 0 && t.end <= duration + 0.01 && t.end > t.start, `${name} turn ${i} inside the audio`);
        assert.ok(Number.isInteger(t.speaker) && t.speaker >= 0);
        if (i > 0) assert.ok(t.start >= turns[i - 1]!.start, `${name} turns sorted`);
        assert.ok(reference.some((r) => t.start < r.end + 0.5 && t.end > r.start - 0.5), `${name} turn ${t.start}-${t.end} on labelled speech`);
      });
    }
  });

  it('honours a known speaker count, and a lower threshold never gives fewer speakers', async () => {
    const audio = loadCorpusAudio('diarization/ami-meeting-mixture-60s.wav');
    const two = await createDiarizer(pool, segmentationEngine(), embeddingEngine(), { numClusters: 2 }).diarize(audio.samples);
    assert.equal(speakersOf(two), 2);
    const strict = await createDiarizer(pool, segmentationEngine(), embeddingEngine(), { threshold: 0.1 }).diarize(audio.samples);
    const loose = await createDiarizer(pool, segmentationEngine(), embeddingEngine(), { threshold: 0.9 }).diarize(audio.samples);
    assert.ok(speakersOf(strict) >= speakersOf(loose), `${speakersOf(strict)} speakers at 0.1, ${speakersOf(loose)} at 0.9`);
    assert.ok(speakersOf(strict) > 1, 'the fixture embedding separates something at a tight threshold');
  });

  it('stops on abort', async () => {
    const diarizer = createDiarizer(pool, segmentationEngine(), embeddingEngine());
    await assert.rejects(diarizer.diarize(new Float32Array(16000), { signal: AbortSignal.abort() }), AbortedError);
  });
});
