import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AbortedError, InvalidRequestError } from '../../src/errors.js';
import { createDiarizer } from '../../src/engines/server/sherpa-diarizer.js';
import { createOnlineRecognizer } from '../../src/engines/server/sherpa-online-recognizer.js';
import { createSherpaVad } from '../../src/engines/server/sherpa-vad.js';
import type { Diarizer, Recognizer } from '../../src/engines/types.js';
import { createWorkerPool, type WorkerPool } from '../../src/engines/inference/worker-pool.js';
import { transcribeAudio, type AudioTranscript, type TranscriptionEngines } from '../../src/transcription/pipeline.js';
import { corpusEntries, embeddingEngine, englishEntries, loadCorpusAudio, segmentationEngine, sileroEngine, streamingEnglishEngine, streamingEnglishPack } from '../engines/stt-fixtures.js';
import { needs, REAL_TEST_MODELS } from '../helpers/models.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH], corpus: true });

const plain = { language: 'en', wordTimestamps: true, diarize: false };

function assertWordsWellFormed(result: AudioTranscript, file: string): void {
  result.words.forEach((w, i) => {
    assert.ok(w.word.length > 0, `${file}: word ${i} not empty`);
    assert.ok(w.start >= 0 && w.end <= result.duration && w.end >= w.start, `${file}: word ${i} "${w.word}" ${w.start}-${w.end} inside the audio`);
    if (i > 0) assert.ok(w.start >= result.words[i - 1]!.end, `${file}: word ${i} does not overlap word ${i - 1}`);
  });
}

describe('transcribeAudio with sherpa engines', { skip: NEEDS }, () => {
  let pool: WorkerPool;
  let engines: TranscriptionEngines;
  let recognizer: Recognizer;
  let diarizer: Diarizer;
  before(() => {
    pool = createWorkerPool({ workers: 2 });
    recognizer = createOnlineRecognizer(pool, streamingEnglishEngine());
    // A tight threshold: the fixture embedding then splits the corpus recordings into several speakers.
    diarizer = createDiarizer(pool, segmentationEngine(), embeddingEngine(), { threshold: 0.1 });
    engines = { vad: createSherpaVad(pool, sileroEngine()), recognizers: [recognizer], diarizer };
  });
  after(() => pool.close());

  it('gives ordered, non-overlapping words inside the audio for every English corpus file, any sample rate', async () => {
    const entries = englishEntries();
    assert.ok(entries.some((e) => e.sample_rate !== 16000), 'the corpus includes a file to resample');
    for (const entry of entries) {
      const result = await transcribeAudio(loadCorpusAudio(entry.file), plain, engines);
      assert.ok(Math.abs(result.duration - entry.duration_s) < 0.01, `${entry.file}: duration`);
      assert.equal(result.language, 'en');
      assert.ok(result.words.length > 0, `${entry.file}: words`);
      assertWordsWellFormed(result, entry.file);
      assert.equal(result.transcription, result.words.map((w) => w.word).join(' '), `${entry.file}: transcription is the words`);
      assert.ok(result.words.every((w) => w.speaker === 'speaker_0'));
      assert.deepEqual(result.utterances.flatMap((u) => u.text.split(' ')), result.words.map((w) => w.word), `${entry.file}: utterances hold the words`);
    }
  });

  it('places each word on speech where the corpus has word times (±0.3 s)', async () => {
    const labelled = corpusEntries().filter((e) => e.words && e.file.startsWith('en/'));
    assert.ok(labelled.length >= 3);
    for (const entry of labelled) {
      const result = await transcribeAudio(loadCorpusAudio(entry.file), plain, engines);
      const reference = entry.words!;
      for (const w of result.words) {
        const onSpeech = reference.some((r) => w.start < r.end + 0.3 && w.end > r.start - 0.3);
        assert.ok(onSpeech, `${entry.file}: "${w.word}" ${w.start}-${w.end} overlaps a reference word`);
        assert.ok(w.start >= reference[0]!.start - 0.3 && w.start <= reference.at(-1)!.end + 0.3, `${entry.file}: "${w.word}" starts within the speech`);
      }
    }
  });

  it('labels speakers speaker_0, speaker_1, … in order of first appearance', async () => {
    let sawSeveral = false;
    for (const entry of corpusEntries().filter((e) => e.kind === 'diarization')) {
      const result = await transcribeAudio(loadCorpusAudio(entry.file), { ...plain, diarize: true }, engines);
      assertWordsWellFormed(result, entry.file);
      const order: string[] = [];
      for (const w of result.words) if (!order.includes(w.speaker)) order.push(w.speaker);
      assert.deepEqual(order, order.map((_, i) => `speaker_${i}`), `${entry.file}: labels in order of appearance`);
      if (order.length > 1) sawSeveral = true;
      for (const u of result.utterances) {
        const inside = result.words.filter((w) => w.start >= u.start && w.end <= u.end);
        assert.ok(inside.every((w) => w.speaker === u.speaker), `${entry.file}: one speaker per utterance`);
      }
      result.utterances.forEach((u, i) => {
        if (i > 0 && u.speaker === result.utterances[i - 1]!.speaker) {
          assert.ok(u.start - result.utterances[i - 1]!.end > 0.8, `${entry.file}: same-speaker utterances split only at a long pause`);
        }
      });
    }
    assert.ok(sawSeveral, 'at least one recording was split into several speakers');
  });

  it('keeps the event loop turning during a long transcription', async () => {
    const audio = loadCorpusAudio('diarization/ami-meeting-mixture-60s.wav');
    let last = performance.now();
    let longestGap = 0;
    let ticks = 0;
    const timer = setInterval(() => {
      const now = performance.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
      ticks++;
    }, 10);
    try {
      const result = await transcribeAudio(audio, { ...plain, diarize: true }, engines);
      assert.ok(result.words.length > 0);
    } finally {
      clearInterval(timer);
    }
    assert.ok(ticks > 5, `the timer ticked ${ticks} times`);
    // Generous bound: inference runs in workers, so only scheduling noise can delay a tick.
    assert.ok(longestGap < 1000, `the event loop stalled for ${longestGap.toFixed(0)} ms`);
  });

  it('omits words and utterances unless asked, but still transcribes', async () => {
    const result = await transcribeAudio(loadCorpusAudio('en/jfk-inaugural-1961.wav'), { ...plain, wordTimestamps: false }, engines);
    assert.ok(result.transcription.length > 0);
    assert.deepEqual(result.words, []);
    assert.deepEqual(result.utterances, []);
    assert.ok(result.segments.length >= 3);
  });

  it('returns an empty transcript for silence', async () => {
    const result = await transcribeAudio({ samples: new Float32Array(3 * 8000), sampleRate: 8000 }, plain, engines);
    assert.deepEqual(
      { transcription: result.transcription, words: result.words, utterances: result.utterances, segments: result.segments, duration: result.duration },
      { transcription: '', words: [], utterances: [], segments: [], duration: 3 },
    );
  });

  it('refuses a language without a recogniser, naming it', async () => {
    const audio = loadCorpusAudio('en/jfk-inaugural-1961.wav');
    await assert.rejects(transcribeAudio(audio, { ...plain, language: 'fi' }, engines), (e: unknown) => e instanceof InvalidRequestError && / fi /.test(e.message));
    await assert.rejects(transcribeAudio(audio, { ...plain, language: 'multi' }, engines), InvalidRequestError);
    await assert.rejects(transcribeAudio(audio, { ...plain, diarize: true }, { ...engines, diarizer: undefined }), InvalidRequestError);
  });

  it('serves multi with a recogniser that lists it and reports a concrete language', async () => {
    const multi = createOnlineRecognizer(pool, streamingEnglishEngine({ languages: ['multi', 'en'] }));
    const result = await transcribeAudio(loadCorpusAudio('en/jfk-inaugural-1961.wav'), { ...plain, language: 'multi' }, { ...engines, recognizers: [recognizer, multi] });
    assert.equal(result.recognizer, multi.id);
    assert.equal(result.language, 'en');
  });

  it('stops when the signal aborts', async () => {
    const audio = loadCorpusAudio('diarization/ami-meeting-mixture-60s.wav');
    await assert.rejects(transcribeAudio(audio, { ...plain, signal: AbortSignal.abort() }, engines), AbortedError);
    const controller = new AbortController();
    const pending = transcribeAudio(audio, { ...plain, diarize: true, signal: controller.signal }, engines);
    setTimeout(() => controller.abort(), 50);
    await assert.rejects(pending, AbortedError);
  });

  it('fails with the VAD\'s error when the scan beside a streaming recogniser fails, and with the recogniser\'s when it does', async () => {
    const audio = loadCorpusAudio('diarization/ami-meeting-mixture-60s.wav');
    const broken = new Error('VAD broke');
    const failingVad: TranscriptionEngines['vad'] = {
      sampleRate: 16000,
      async detect() {
        throw broken;
      },
      async close() {},
    };
    await assert.rejects(transcribeAudio(audio, plain, { ...engines, vad: failingVad }), (e) => e === broken);
    let scanStopped = false;
    const watchedVad: TranscriptionEngines['vad'] = {
      sampleRate: 16000,
      async *detectStream(samples, options) {
        // Yields nothing until it is told to stop, as a long scan would.
        await new Promise<void>((resolve) => options?.signal?.addEventListener('abort', () => resolve(), { once: true }));
        scanStopped = true;
        throw new AbortedError();
      },
      async detect() {
        return [];
      },
      async close() {},
    };
    const failing: Recognizer = { ...recognizer, recognize: async () => Promise.reject(new Error('decoder broke')) };
    await assert.rejects(transcribeAudio(audio, plain, { vad: watchedVad, recognizers: [failing] }), /decoder broke/);
    assert.ok(scanStopped, 'the VAD scan was stopped');
  });
});

