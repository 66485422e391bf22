/**
 * Properties of the pipeline on the labelled corpus, with the real streaming model and VAD: it
 * must not lose what the engine hears (issue 18). Each test states a property over all the files,
 * never an expectation about one file.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { resample } from '../../src/audio/resample.js';
import { createOnlineRecognizer } from '../../src/engines/server/sherpa-online-recognizer.js';
import { createSherpaVad } from '../../src/engines/server/sherpa-vad.js';
import type { RecognizedSegment, Recognizer } from '../../src/engines/types.js';
import { createWorkerPool, type WorkerPool } from '../../src/engines/inference/worker-pool.js';
import { transcribeAudio, type AudioTranscript, type TranscriptionEngines } from '../../src/transcription/pipeline.js';
import { splitWithOverlap } from '../../src/transcription/speech-segments.js';
import { assembleWords, type TimedWord } from '../../src/transcription/words.js';
import { createDiarizer } from '../../src/engines/server/sherpa-diarizer.js';
import { corpusEntries, embeddingEngine, loadCorpusAudio, segmentationEngine, sileroEngine, streamingEnglishEngine } from '../engines/stt-fixtures.js';
import { labelledEnglishEntries, normaliseWords, rawTranscript } from '../helpers/transcript-accuracy.js';
import { needs, REAL_TEST_MODELS } from '../helpers/models.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH], corpus: true });

const plain = { language: 'en', wordTimestamps: true, diarize: false };

/** The last reference word is among the last two words heard (a trailing filler or split word may follow it). */
function endsWith(reference: string, transcript: string): boolean {
  const last = normaliseWords(reference).at(-1)!;
  return normaliseWords(transcript).slice(-2).includes(last);
}

function assertTimesTrue(result: AudioTranscript, file: string): void {
  result.words.forEach((w, i) => {
    assert.ok(w.start >= 0 && w.start <= w.end && w.end <= result.duration, `${file}: word ${i} "${w.word}" ${w.start}-${w.end} inside 0-${result.duration}`);
    if (i > 0) assert.ok(w.start >= result.words[i - 1]!.end, `${file}: word ${i} "${w.word}" starts after the word before it ends`);
  });
  result.utterances.forEach((u, i) => {
    assert.ok(u.start >= 0 && u.start <= u.end && u.end <= result.duration, `${file}: utterance ${i} inside the audio`);
    if (i > 0) assert.ok(u.start >= result.utterances[i - 1]!.end, `${file}: utterance ${i} does not overlap the one before (any speaker)`);
  });
  result.segments.forEach((s, i) => {
    assert.ok(s.start >= 0 && s.start <= s.end && s.end <= result.duration, `${file}: segment ${i} inside the audio`);
    if (i > 0) assert.ok(s.start >= result.segments[i - 1]!.end, `${file}: segment ${i} does not overlap the one before`);
  });
}

describe('transcription fidelity on the labelled corpus', { skip: NEEDS }, () => {
  let pool: WorkerPool;
  let streaming: Recognizer;
  /** The same model fed padded VAD segments, the way an offline model is. */
  let segmented: Recognizer;
  let engines: (recognizer: Recognizer) => TranscriptionEngines;
  before(() => {
    pool = createWorkerPool({ workers: 2 });
    streaming = createOnlineRecognizer(pool, streamingEnglishEngine());
    segmented = { ...streaming, streaming: false };
    const vad = createSherpaVad(pool, sileroEngine());
    // The fixture diarizer (not pretrained) with a tight threshold splits recordings into several speakers.
    const diarizer = createDiarizer(pool, segmentationEngine(), embeddingEngine(), { threshold: 0.1 });
    engines = (recognizer) => ({ vad, recognizers: [recognizer], diarizer });
  });
  after(() => pool.close());

  it('recognises the last word of each reference utterance as often through the pipeline as the raw engine does', async () => {
    const entries = labelledEnglishEntries();
    assert.ok(entries.length >= 20, 'the corpus has its labelled English files');
    let raw = 0;
    const through = { streaming: 0, segmented: 0 };
    for (const entry of entries) {
      const audio = loadCorpusAudio(entry.file);
      if (endsWith(entry.text!, await rawTranscript(streaming, await resample(audio.samples, audio.sampleRate, 16000)))) raw++;
      if (endsWith(entry.text!, (await transcribeAudio(audio, plain, engines(streaming))).transcription)) through.streaming++;
      if (endsWith(entry.text!, (await transcribeAudio(audio, plain, engines(segmented))).transcription)) through.segmented++;
    }
    assert.ok(raw > entries.length / 2, `the raw engine hears most last words (${raw}/${entries.length})`);
    assert.ok(through.streaming >= raw, `whole-stream decoding: ${through.streaming} last words against the raw engine's ${raw}`);
    assert.ok(through.segmented >= raw, `padded VAD segments: ${through.segmented} last words against the raw engine's ${raw}`);
  });

  it('keeps word, utterance and segment times inside the file, ordered and never overlapping (across speakers too), on every English corpus recording', async () => {
    const entries = corpusEntries().filter((e) => e.language === 'en' && /^(en|emotion|diarization)\//.test(e.file));
    let speakers = 0;
    for (const entry of entries) {
      const audio = loadCorpusAudio(entry.file);
      const diarize = entry.kind === 'diarization';
      for (const recognizer of [streaming, segmented]) {
        const result = await transcribeAudio(audio, { ...plain, diarize }, engines(recognizer));
        assert.ok(Math.abs(result.duration - entry.duration_s) < 0.01, `${entry.file}: duration`);
        assertTimesTrue(result, `${entry.file} (${recognizer.streaming ? 'stream' : 'segments'})`);
        if (diarize) speakers = Math.max(speakers, new Set(result.words.map((w) => w.speaker)).size);
      }
    }
    assert.ok(speakers > 1, 'the diarized recordings were split into several speakers, so utterances of different speakers were checked');
  });

  it('neither drops nor repeats words where a long recording is cut into overlapping windows', async () => {
    // The English read speech back to back with no pause: one minute of speech, cut every few seconds.
    const parts = await Promise.all(
      corpusEntries()
        .filter((e) => e.file.startsWith('en/'))
        .map(async (e) => {
          const a = loadCorpusAudio(e.file);
          return resample(a.samples, a.sampleRate, 16000);
        }),
    );
    const samples = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
    parts.reduce((at, p) => (samples.set(p, at), at + p.length), 0);
    const decoding = { streamWindowSeconds: 8, windowOverlapSeconds: 2 };
    // What each window heard on its own, recorded as the pipeline asks for it.
    const heard: RecognizedSegment[] = [];
    const recording: Recognizer = { ...streaming, recognize: async (s, o) => heard[heard.push(await streaming.recognize(s, o)) - 1]! };
    const result = await transcribeAudio({ samples, sampleRate: 16000 }, { ...plain, decoding }, engines(recording));
    const windows = splitWithOverlap({ start: 0, end: samples.length / 16000 }, samples, 16000, decoding.streamWindowSeconds, decoding.windowOverlapSeconds);
    assert.equal(heard.length, windows.length, 'one decode per window');
    assert.ok(windows.length >= 6, `the recording is cut ${windows.length - 1} times`);
    assertTimesTrue(result, 'windowed');

    const middle = (w: TimedWord) => (w.start + w.end) / 2;
    const windowWords = windows.map((w, i) => assembleWords(heard[i]!, w));
    const out = result.words;
    const has = (w: TimedWord) => out.some((o) => o.word === w.word && (Math.abs(o.start - w.start) < 0.01 || Math.abs(o.end - w.end) < 0.01));
    for (let i = 1; i < windows.length; i++) {
      const overlap = { start: windows[i]!.start, end: windows[i - 1]!.end };
      const where = `cut ${i} (${overlap.start.toFixed(2)}-${overlap.end.toFixed(2)} s)`;
      // Nothing dropped: each window's words outside the overlap (and away from the other cuts) are all in the transcript.
      const before = windowWords[i - 1]!.filter((w) => middle(w) < overlap.start && (i < 2 || middle(w) > windows[i - 2]!.end));
      const after = windowWords[i]!.filter((w) => middle(w) > overlap.end && (i + 1 >= windows.length || middle(w) < windows[i + 1]!.start));
      for (const w of [...before, ...after]) assert.ok(has(w), `${where}: "${w.word}" at ${w.start.toFixed(2)} s is kept`);
      // At the join the transcript is the earlier window's words, then the later window's.
      const region = out.filter((w) => middle(w) > overlap.start - 1 && middle(w) < overlap.end + 1);
      // (a word's start may have moved up to keep times ordered, its end down to meet the next window's word)
      const same = (x: TimedWord, w: TimedWord) => x.word === w.word && (Math.abs(x.start - w.start) < 0.01 || Math.abs(x.end - w.end) < 0.01);
      const fromEarlier = (w: TimedWord) => windowWords[i - 1]!.some((x) => same(x, w));
      const fromLater = (w: TimedWord) => windowWords[i]!.some((x) => same(x, w));
      let split = 0;
      while (split < region.length && fromEarlier(region[split]!)) split++;
      assert.ok(region.slice(split).every(fromLater), `${where}: "${region.map((w) => w.word).join(' ')}" is the earlier window's words, then the later one's`);
      const last = region[split - 1];
      const next = region[split];
      if (!last || !next) continue;
      // Nothing doubled: the two words meeting at the join are not one word heard by both windows.
      assert.ok(!(last.word === next.word && Math.abs(last.start - next.start) <= 0.5), `${where}: "${next.word}" twice`);
      // Nothing dropped: no stretch between them where both windows heard a word that neither side kept.
      const between = (ws: TimedWord[]) => ws.some((w) => middle(w) > last.end && middle(w) < next.start);
      assert.ok(!(between(windowWords[i - 1]!) && between(windowWords[i]!)), `${where}: words heard between "${last.word}" and "${next.word}" were lost`);
    }
  });
});
