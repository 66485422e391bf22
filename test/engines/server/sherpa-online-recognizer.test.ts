import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { resample } from '../../../src/audio/resample.js';
import { AbortedError, EngineError, InferenceUnavailableError, ModelPackError, OverloadedError } from '../../../src/errors.js';
import { createOnlineRecognizer } from '../../../src/engines/server/sherpa-online-recognizer.js';
import type { ModelPack } from '../../../src/models/model-pack.js';
import { enginePackAs } from '../../../src/models/families/index.js';
import type { Recognizer, RecognizerStream } from '../../../src/engines/types.js';
import { createWorkerPool, type WorkerPool } from '../../../src/engines/inference/worker-pool.js';
import { englishEntries, loadCorpusAudio, streamingEnglishEngine, streamingEnglishPack } from '../stt-fixtures.js';
import { testInferenceProcess } from '../../helpers/inference.js';
import { needs, REAL_TEST_MODELS } from '../../helpers/models.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.STREAMING_ENGLISH], corpus: true });

describe('streaming transducer recogniser (sherpa, worker pool)', { skip: NEEDS }, () => {
  let pool: WorkerPool;
  let recognizer: Recognizer;
  before(() => {
    pool = createWorkerPool({ workers: 2 });
    recognizer = createOnlineRecognizer(pool, streamingEnglishEngine());
  });
  after(() => pool.close());

  it('builds the transducer config from the pack files', () => {
    const buildOnlineRecognizerConfig = (p: ModelPack) => enginePackAs('online-asr', p).config;
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

/** Feeds `samples` to a live stream in 100 ms pieces; returns every hypothesis text and the finished result. */
async function streamThrough(stream: RecognizerStream, samples: Float32Array) {
  const texts: string[] = [];
  for (let at = 0; at < samples.length; at += 1600) texts.push((await stream.accept(samples.subarray(at, at + 1600))).text);
  return { texts, final: await stream.finish() };
}

describe('live recognition streams (openStream)', { skip: NEEDS }, () => {
  const JFK = 'en/jfk-inaugural-1961.wav';

  it('decode each piece once: hypotheses grow by prefix, and the finished result is the whole-file result, with a log-probability per token', async () => {
    const pool = createWorkerPool({ workers: 2 });
    try {
      const recognizer = createOnlineRecognizer(pool, streamingEnglishEngine());
      const { samples } = loadCorpusAudio(JFK);
      const whole = await recognizer.recognize(samples, { language: 'en' });
      // Two streams at once on two threads: each task of a stream must reach the thread holding it.
      const [a, b] = await Promise.all([0, 1].map(async () => streamThrough(await recognizer.openStream!(), samples)));
      for (const { texts, final } of [a!, b!]) {
        assert.equal(final.text, whole.text);
        assert.deepEqual(final.tokens, whole.tokens);
        assert.deepEqual(final.timestamps, whole.timestamps);
        assert.ok(texts.filter(Boolean).length >= 10, 'a hypothesis while the audio comes');
        texts.reduce((previous, text) => {
          assert.ok(text.startsWith(previous), `"${text}" extends "${previous}"`);
          return text;
        }, '');
        assert.equal(final.tokenLogProbs?.length, final.tokens.length);
        for (const lp of final.tokenLogProbs!) assert.ok(lp <= 0 && Number.isFinite(lp));
      }
      assert.equal(pool.openStreams, 0, 'finished streams are gone');
    } finally {
      await pool.close();
    }
  });

  it('bounds the streams open at once, and frees a slot on close', async () => {
    const pool = createWorkerPool({ workers: 2, maxStreams: 2 });
    try {
      const recognizer = createOnlineRecognizer(pool, streamingEnglishEngine());
      const first = await recognizer.openStream!();
      const second = await recognizer.openStream!();
      await assert.rejects(recognizer.openStream!(), (error: unknown) => error instanceof OverloadedError && /2 recognition streams are open/.test(error.message));
      first.close();
      const third = await recognizer.openStream!();
      assert.ok((await third.accept(loadCorpusAudio(JFK).samples)).text.length > 0);
      second.close();
      third.close();
      await assert.rejects(recognizer.openStream!({ signal: AbortSignal.abort() }), AbortedError);
    } finally {
      await pool.close();
    }
  });

  it('closes a stream left without a task for streamIdleMs; its next task says so', async () => {
    const pool = createWorkerPool({ workers: 1, streamIdleMs: 300 });
    try {
      const stream = await createOnlineRecognizer(pool, streamingEnglishEngine()).openStream!();
      await stream.accept(new Float32Array(1600));
      await new Promise((r) => setTimeout(r, 800));
      assert.equal(pool.openStreams, 0);
      await assert.rejects(stream.accept(new Float32Array(1600)), (error: unknown) => error instanceof EngineError && /not open/.test(error.message));
    } finally {
      await pool.close();
    }
  });

  it('in a supervised process: a stream whose process is killed fails with InferenceUnavailableError; a new stream works', async () => {
    const process_ = testInferenceProcess({ threads: 2 });
    try {
      const recognizer = createOnlineRecognizer(process_, streamingEnglishEngine());
      const { samples } = loadCorpusAudio(JFK);
      const stream = await recognizer.openStream!();
      await stream.accept(samples.subarray(0, 32_000));
      process.kill(process_.pid!, 'SIGKILL');
      await assert.rejects(stream.accept(samples.subarray(32_000, 48_000)), (error: unknown) => error instanceof InferenceUnavailableError && /stream is lost|was killed/.test(error.message));
      await assert.rejects(stream.finish(), InferenceUnavailableError);
      const { final } = await streamThrough(await recognizer.openStream!(), samples);
      assert.ok(final.text.includes('COUNTRY'), final.text);
      assert.equal(process_.status().tasks.running, 0);
    } finally {
      await process_.close();
    }
  });
});
