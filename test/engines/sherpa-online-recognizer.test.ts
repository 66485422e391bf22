import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { resample } from '../../src/audio/resample.js';
import { AbortedError, ModelPackError } from '../../src/errors.js';
import { buildOnlineRecognizerConfig, createOnlineRecognizer } from '../../src/engines/sherpa-online-recognizer.js';
import type { Recognizer } from '../../src/engines/types.js';
import { createWorkerPool, type WorkerPool } from '../../src/engines/worker-pool.js';
import { englishEntries, loadCorpusAudio, streamingEnglishPack } from './stt-fixtures.js';
import { needs, REAL_TEST_MODELS } from '../helpers/models.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.STREAMING_ENGLISH], corpus: true });

describe('streaming transducer recogniser (sherpa, worker pool)', { skip: NEEDS }, () => {
  let pool: WorkerPool;
  let recognizer: Recognizer;
  before(() => {
    pool = createWorkerPool({ workers: 2 });
    recognizer = createOnlineRecognizer(pool, streamingEnglishPack());
  });
  after(() => pool.close());

  it('builds the transducer config from the pack files', () => {
    const pack = streamingEnglishPack();
    const config = buildOnlineRecognizerConfig(pack);
    assert.equal(config.modelConfig.transducer.encoder, pack.files.encoder);
    assert.equal(config.modelConfig.transducer.joiner, pack.files.joiner);
    assert.equal(config.modelConfig.tokens, pack.files.tokens);
    assert.equal(config.featConfig.sampleRate, 16000);
    assert.equal(config.enableEndpoint, 0);
    assert.throws(() => buildOnlineRecognizerConfig({ ...pack, kind: 'asr-whisper' }), ModelPackError);
    assert.throws(() => buildOnlineRecognizerConfig({ ...pack, files: { ...pack.files, joiner: '/missing.onnx' } }), ModelPackError);
  });

  it('transcribes every English corpus file to upper-case text with one ordered time per token', async () => {
    const entries = englishEntries();
    assert.ok(entries.length >= 10);
    for (const entry of entries) {
      const audio = loadCorpusAudio(entry.file);
      const samples = await resample(audio.samples, audio.sampleRate, recognizer.sampleRate);
      const result = await recognizer.recognize(samples, { language: 'en' });
      assert.ok(result.text.length > 0, `${entry.file}: text`);
      assert.equal(result.text, result.text.toUpperCase(), `${entry.file}: upper case`);
      assert.ok(result.tokens.length > 0);
      assert.equal(result.timestamps.length, result.tokens.length, `${entry.file}: a time per token`);
      result.timestamps.forEach((t, i) => {
        assert.ok(t >= 0 && t <= entry.duration_s + 1, `${entry.file}: token ${i} time ${t} inside the clip`);
        if (i > 0) assert.ok(t >= result.timestamps[i - 1]!, `${entry.file}: token ${i} not before token ${i - 1}`);
      });
      assert.equal(result.tokens.join('').replace(/▁/g, ' ').replace(/\s+/g, ' ').trim(), result.text, `${entry.file}: tokens spell the text`);
    }
  });

  it('recognises segments in parallel on both workers', async () => {
    const audio = loadCorpusAudio('en/jfk-inaugural-1961.wav');
    const half = audio.samples.length >> 1;
    const [first, second] = await Promise.all([
      recognizer.recognize(audio.samples.subarray(0, half), { language: 'en' }),
      recognizer.recognize(audio.samples.subarray(half), { language: 'en' }),
    ]);
    const alone = await recognizer.recognize(audio.samples.subarray(0, half), { language: 'en' });
    assert.deepEqual(first, alone);
    assert.ok(second.text.length > 0);
  });

  it('gives nothing for silence and stops on abort', async () => {
    const silent = await recognizer.recognize(new Float32Array(16000 * 2), { language: 'en' });
    assert.equal(silent.text, '');
    assert.deepEqual(silent.tokens, []);
    await assert.rejects(recognizer.recognize(new Float32Array(16000), { language: 'en', signal: AbortSignal.abort() }), AbortedError);
  });
});
