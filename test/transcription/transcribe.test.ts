/**
 * The transcription use case (createTranscriber): what it answers without a VAD, for bytes that
 * are not audio and for audio over the duration cap, and the engines it holds are released once
 * per request whatever happens. With the real VAD and recogniser it returns the result shape.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createOnlineRecognizer } from '../../src/engines/server/sherpa-online-recognizer.js';
import { createSherpaVad } from '../../src/engines/server/sherpa-vad.js';
import type { StreamingVoiceActivityDetector } from '../../src/engines/types.js';
import { createWorkerPool, type WorkerPool } from '../../src/engines/inference/worker-pool.js';
import { AudioTooLongError, PackNotInstalledError, UnsupportedAudioError } from '../../src/errors.js';
import { createSpeakerAnalysis } from '../../src/voice-analysis/speaker-analysis.js';
import { createTranscriber, type HeldEngines } from '../../src/transcription/transcribe.js';
import type { TranscriptionOptions } from '../../src/transcription/types.js';
import { sileroEngine, streamingEnglishEngine } from '../engines/stt-fixtures.js';
import { needs, REAL_TEST_MODELS } from '../helpers/models.js';
import { makeWav } from '../jobs/fixtures/wav-transcribe.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH] });
const options: TranscriptionOptions = {
  language: 'en',
  wordTimestamps: true,
  diarize: false,
  ageDetection: false,
  genderDetection: false,
  emotionDetection: false,
  filename: 'clip.wav',
};
const context = () => ({ requestId: 'req-1', signal: new AbortController().signal });

describe('createTranscriber without a VAD pack', () => {
  it('answers 400 at once naming the missing packs and the command that installs them, and releases the engines it took', async () => {
    let released = 0;
    const transcribe = createTranscriber({
      engines: () => ({ recognizers: [], analyzer: createSpeakerAnalysis(), release: () => void released++ }),
      utterancePauseSeconds: 0.5,
    });
    await assert.rejects(transcribe({ bytes: makeWav(1), contentType: 'audio/wav' }, options, context()), (e: unknown) => {
      assert.ok(e instanceof PackNotInstalledError);
      assert.equal(e.status, 400);
      assert.equal(e.retryAfterSeconds, undefined);
      assert.deepEqual(e.missing.map((m) => m.role), ['recognizer', 'vad']);
      assert.match(e.message, /no speech recognition model is installed and no voice activity detection \(VAD\) model is installed/);
      assert.match(e.message, /`parley models pull sherpa-onnx-moonshine-base-en-int8 silero-vad`/);
      return true;
    });
    assert.equal(released, 1);
  });
});

describe('createTranscriber with the real VAD and recogniser', { skip: NEEDS }, () => {
  let pool: WorkerPool;
  let vad: StreamingVoiceActivityDetector;
  let released = 0;
  let held: () => HeldEngines;
  before(() => {
    pool = createWorkerPool({ workers: 1 });
    vad = createSherpaVad(pool, sileroEngine());
    const recognizer = createOnlineRecognizer(pool, streamingEnglishEngine());
    held = () => ({ vad, recognizers: [recognizer], analyzer: createSpeakerAnalysis(), release: () => void released++ });
  });
  after(() => pool.close());

  it('gives the fixed sentence for bytes that are not audio, and the limit for audio over the cap', async () => {
    const transcribe = createTranscriber({ engines: () => held(), utterancePauseSeconds: 0.5, decode: { maxSeconds: 2 } });
    released = 0;
    await assert.rejects(
      transcribe({ bytes: new TextEncoder().encode('<html>not audio</html>'), contentType: 'audio/wav' }, options, context()),
      (e: unknown) => e instanceof UnsupportedAudioError && e.message === 'Invalid file format. Supported formats: audio/*',
    );
    await assert.rejects(transcribe({ bytes: makeWav(3), contentType: 'audio/wav' }, options, context()), AudioTooLongError);
    assert.equal(released, 2, 'released after each failure');
  });

  it('returns the result shape for silence: no words, the duration and the file metadata', async () => {
    const transcribe = createTranscriber({ engines: () => held(), utterancePauseSeconds: 0.5 });
    const bytes = makeWav(1.5);
    const result = await transcribe({ bytes, contentType: 'audio/wav' }, options, context());
    assert.ok(!('status' in result), 'the wire status is added by the HTTP layer');
    assert.equal(result.request_id, 'req-1');
    assert.equal(result.transcription, '');
    assert.deepEqual(result.words, []);
    assert.equal(result.duration, 1.5);
    assert.deepEqual(result.metadata, { filename: 'clip.wav', duration: 1.5, fileSize: bytes.byteLength });
  });
});
