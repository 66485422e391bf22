import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AbortedError, ModelPackError } from '../../../src/errors.js';
import type { EnginePack } from '../../../src/engines/capabilities.js';
import { createSherpaVad } from '../../../src/engines/server/sherpa-vad.js';
import { enginePackAs, enginePackOf } from '../../../src/models/families/index.js';
import type { StreamingVoiceActivityDetector } from '../../../src/engines/types.js';
import type { TimeSpan } from '../../../src/engines/types.js';
import { createWorkerPool, type WorkerPool } from '../../../src/engines/inference/worker-pool.js';
import { corpusEntries, loadCorpusAudio, rttmTurns, sileroEngine, sileroPack } from '../stt-fixtures.js';
import { needs, REAL_TEST_MODELS } from '../../helpers/models.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD], corpus: true });

function covered(region: TimeSpan, spans: TimeSpan[]): number {
  let seconds = 0;
  for (const s of spans) seconds += Math.max(0, Math.min(region.end, s.end) - Math.max(region.start, s.start));
  return seconds / (region.end - region.start);
}

function assertOrdered(spans: TimeSpan[], duration: number): void {
  spans.forEach((s, i) => {
    assert.ok(s.start >= 0 && s.end <= duration + 1e-6 && s.end > s.start, `span ${i} inside the audio`);
    if (i > 0) assert.ok(s.start >= spans[i - 1]!.end, `span ${i} after span ${i - 1}`);
  });
}

describe('Silero VAD (sherpa, worker pool)', { skip: NEEDS }, () => {
  let pool: WorkerPool;
  let vad: StreamingVoiceActivityDetector;
  before(() => {
    pool = createWorkerPool({ workers: 1 });
    vad = createSherpaVad(pool, sileroEngine());
  });
  after(() => pool.close());

  it('finds the speech of each word-labelled corpus file inside its labelled region', async () => {
    const labelled = corpusEntries().filter((e) => e.words && e.language === 'en' && e.sample_rate === 16000);
    assert.ok(labelled.length >= 3);
    for (const entry of labelled) {
      const audio = loadCorpusAudio(entry.file);
      const spans = await vad.detect(audio.samples);
      assertOrdered(spans, entry.duration_s);
      const region = { start: entry.words![0]!.start, end: entry.words!.at(-1)!.end };
      assert.ok(covered(region, spans) > 0.9, `${entry.file}: speech between the first and last word is found`);
      for (const s of spans) {
        assert.ok(s.start > region.start - 0.5 && s.end < region.end + 0.5, `${entry.file}: span ${s.start}-${s.end} near the words`);
      }
    }
  });

  it('finds each labelled turn of a three-speaker recording, and nothing outside them', async () => {
    const audio = loadCorpusAudio('diarization/picovoice-falcon-3spk.wav');
    const spans = await vad.detect(audio.samples);
    assertOrdered(spans, audio.samples.length / audio.sampleRate);
    const turns = rttmTurns('diarization/picovoice-falcon-3spk.rttm');
    for (const turn of turns) assert.ok(covered(turn, spans) > 0.8, `turn ${turn.start}-${turn.end} found`);
    for (const s of spans) assert.ok(turns.some((t) => s.start < t.end && s.end > t.start), `span ${s.start}-${s.end} overlaps a turn`);
  });

  it("a caller's threshold: the pack's own gives the same spans as none, a higher one less speech; values sherpa refuses are brought within its range", async () => {
    const audio = loadCorpusAudio('diarization/ami-meeting-mixture-60s.wav');
    const speech = (spans: TimeSpan[]) => spans.reduce((sum, s) => sum + s.end - s.start, 0);
    const own = await vad.detect(audio.samples);
    assert.deepEqual(await vad.detect(audio.samples, { threshold: 0.5 }), own, "0.5 is the pack's own threshold");
    const strict = await vad.detect(audio.samples, { threshold: 0.95 });
    assertOrdered(strict, audio.samples.length / audio.sampleRate);
    assert.ok(speech(strict) > 0 && speech(strict) < speech(own), `speech at 0.95: ${speech(strict).toFixed(2)} s, at 0.5: ${speech(own).toFixed(2)} s`);
    // Thresholds are rounded to hundredths (one model per value).
    assert.deepEqual(await vad.detect(audio.samples, { threshold: 0.951 }), strict);
    // sherpa builds no VAD for 1 or 0.01 (it would find nothing, silently): they become 0.99 and 0.02.
    const strictest = await vad.detect(audio.samples, { threshold: 0.99 });
    assert.ok(speech(strictest) > 0, 'the loudest speech passes 0.99');
    assert.deepEqual(await vad.detect(audio.samples, { threshold: 1 }), strictest);
    const loosest = await vad.detect(audio.samples, { threshold: 0.02 });
    assert.ok(speech(loosest) >= speech(own));
    assert.deepEqual(await vad.detect(audio.samples, { threshold: 0 }), loosest);
  });

  it('finds nothing in silence', async () => {
    assert.deepEqual(await vad.detect(new Float32Array(16000 * 5)), []);
  });

  it('streams the same spans as detect() returns', async () => {
    const audio = loadCorpusAudio('en/jfk-inaugural-1961.wav');
    const whole = await vad.detect(audio.samples);
    const streamed: TimeSpan[] = [];
    for await (const span of vad.detectStream(audio.samples)) streamed.push(span);
    assert.ok(whole.length >= 3, 'JFK sample has several phrases');
    assert.deepEqual(streamed, whole);
  });

  it('stops on abort', async () => {
    const audio = loadCorpusAudio('diarization/ami-meeting-mixture-60s.wav');
    await assert.rejects(vad.detect(audio.samples, { signal: AbortSignal.abort() }), AbortedError);
    const controller = new AbortController();
    const pending = vad.detect(audio.samples, { signal: controller.signal });
    controller.abort();
    await assert.rejects(pending, AbortedError);
  });

  it('refuses a pack of the wrong kind or with a missing file before sherpa sees it', () => {
    assert.throws(() => createSherpaVad(pool, enginePackOf({ ...sileroPack(), kind: 'speaker-embedding' }) as EnginePack<'vad'>), ModelPackError);
    assert.throws(() => createSherpaVad(pool, enginePackAs('vad', { ...sileroPack(), files: { model: '/nonexistent.onnx' } })), ModelPackError);
  });
});
