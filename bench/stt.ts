/**
 * Speech-to-text on the English corpus files: `node --import tsx bench/stt.ts`.
 *
 * Per file: WER of the shared streaming model against the manifest `text` (case and punctuation
 * normalised; reported, not asserted), real-time factor of the whole pipeline (resample, VAD,
 * recognition, words), the raw recogniser time on the very segments the pipeline used (recogniser
 * called directly, through the same worker pool), and their ratio (target ≤ 1.05: the pipeline
 * should add little beyond recognition). Last row: all files joined into one recording, where the
 * VAD scan can overlap recognition for longer. Times are the median of RUNS runs after a warm-up
 * that loads the models. Peak RSS covers the whole process, worker threads included.
 *
 * Models come from PARLEY_TEST_MODELS_DIR (default ../shared/models), audio from
 * PARLEY_TEST_CORPUS_DIR (default ../shared/corpus).
 */
import { resample } from '../src/audio/resample.js';
import type { PcmAudio } from '../src/audio/pcm.js';
import { createOnlineRecognizer } from '../src/engines/sherpa-online-recognizer.js';
import { createSherpaVad } from '../src/engines/sherpa-vad.js';
import { createWorkerPool } from '../src/engines/worker-pool.js';
import { transcribeAudio, type TranscribedSegment } from '../src/transcription/pipeline.js';
import { englishEntries, loadCorpusAudio, sileroPack, streamingEnglishPack } from '../test/engines/stt-fixtures.js';
import { editDistance, normalise } from '../test/helpers/word-error-rate.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const pool = createWorkerPool({ workers: 2 });
const vad = createSherpaVad(pool, sileroPack());
const recognizer = createOnlineRecognizer(pool, streamingEnglishPack());
const engines = { vad, recognizers: [recognizer] };
const options = { language: 'en', wordTimestamps: true, diarize: false };

async function timePipeline(audio: PcmAudio) {
  const start = performance.now();
  const result = await transcribeAudio(audio, options, engines);
  return { ms: performance.now() - start, result };
}

async function timeRecognizer(samples16k: Float32Array, segments: TranscribedSegment[]): Promise<number> {
  const start = performance.now();
  for (const s of segments) {
    await recognizer.recognize(samples16k.subarray(Math.round(s.start * 16000), Math.round(s.end * 16000)), { language: 'en' });
  }
  return performance.now() - start;
}

interface Row {
  name: string;
  seconds: number;
  errors?: number;
  referenceWords?: number;
  pipelineMs: number;
  rawMs: number;
}

async function measure(name: string, audio: PcmAudio, reference?: string): Promise<Row> {
  const samples16k = await resample(audio.samples, audio.sampleRate, 16000);
  const pipelineTimes: number[] = [];
  const rawTimes: number[] = [];
  let transcription = '';
  for (let run = 0; run < RUNS; run++) {
    const { ms, result } = await timePipeline(audio);
    pipelineTimes.push(ms);
    transcription = result.transcription;
    rawTimes.push(await timeRecognizer(samples16k, result.segments));
  }
  const row: Row = { name, seconds: audio.samples.length / audio.sampleRate, pipelineMs: median(pipelineTimes), rawMs: median(rawTimes) };
  if (reference !== undefined) {
    const ref = normalise(reference);
    row.errors = editDistance(ref, normalise(transcription));
    row.referenceWords = ref.length;
  }
  return row;
}

const entries = englishEntries();
const clips = entries.map((e) => ({ entry: e, audio: loadCorpusAudio(e.file) }));
await timePipeline(clips[0]!.audio); // warm-up: both workers load their models

const rows: Row[] = [];
for (const { entry, audio } of clips) rows.push(await measure(entry.file.replace(/^en\//, ''), audio, entry.text ?? undefined));

// All clips at 16 kHz, joined with 0.5 s of silence: one longer recording.
const parts = await Promise.all(clips.map(({ audio }) => resample(audio.samples, audio.sampleRate, 16000)));
const gap = 8000;
const joined = new Float32Array(parts.reduce((n, p) => n + p.length + gap, 0));
let at = 0;
for (const part of parts) {
  joined.set(part, at);
  at += part.length + gap;
}
const joinedRow = await measure(`all ${clips.length} joined`, { samples: joined, sampleRate: 16000 });

const pad = (s: string | number, n: number) => String(s).padStart(n);
console.log(`Parley STT bench: ${recognizer.id}, Silero VAD v5, 2 pool workers, median of ${RUNS} runs\n`);
console.log(`${'file'.padEnd(42)} ${pad('audio s', 8)} ${pad('WER', 6)} ${pad('pipe ms', 8)} ${pad('RTF', 6)} ${pad('raw ms', 8)} ${pad('ratio', 6)}`);
const line = (r: Row) =>
  console.log(
    `${r.name.padEnd(42)} ${pad(r.seconds.toFixed(2), 8)} ${pad(r.errors === undefined ? '-' : ((100 * r.errors) / r.referenceWords!).toFixed(0) + '%', 6)} ` +
      `${pad(r.pipelineMs.toFixed(0), 8)} ${pad((r.pipelineMs / 1000 / r.seconds).toFixed(3), 6)} ${pad(r.rawMs.toFixed(0), 8)} ${pad((r.pipelineMs / r.rawMs).toFixed(2), 6)}`,
  );
rows.forEach(line);
const total: Row = {
  name: 'total (per-file runs)',
  seconds: rows.reduce((n, r) => n + r.seconds, 0),
  errors: rows.reduce((n, r) => n + r.errors!, 0),
  referenceWords: rows.reduce((n, r) => n + r.referenceWords!, 0),
  pipelineMs: rows.reduce((n, r) => n + r.pipelineMs, 0),
  rawMs: rows.reduce((n, r) => n + r.rawMs, 0),
};
console.log('-'.repeat(84));
line(total);
line(joinedRow);
console.log(`\npeak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB (whole process, both worker threads included)`);
await pool.close();
