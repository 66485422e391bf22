/**
 * Speech-to-text accuracy and speed on the labelled English corpus: `node --import tsx bench/stt.ts`.
 *
 * Accuracy, for every installed recogniser (every ASR pack in the models folder): three WERs
 * against the manifest `text` (case and punctuation normalised), summed over the files:
 * - raw: the recogniser alone, as its upstream examples run it: a streaming model on the whole
 *   file, an offline one on consecutive fixed windows (its own window, else 30 s);
 * - pipeline: transcribeAudio (resample, VAD, windows/segments, stitching, words) with the
 *   config's decoding defaults;
 * - their difference (target: pipeline ≤ raw + 0.5 points).
 * Files where the two disagree are listed with both transcripts.
 *
 * Speed, for the first recogniser: per file, the pipeline's wall time, its real-time factor, the
 * raw decode's time and the ratio (the pipeline should add little beyond recognition); last row:
 * all files joined into one recording with 0.5 s pauses. Median of RUNS runs after a warm-up.
 * Peak RSS covers the whole process, worker threads included.
 *
 * Keywords, for the first recogniser that boosts hotwords: for every file, the reference words
 * the plain pipeline decode misses are given as `keywords` (weight 2, at most 100) and the file is
 * decoded again. Printed: the recall of those missed words without boosting (0 by construction)
 * and with it, the whole-file WER without and with (targets: recall up ≥ 30 points, WER not
 * worse by more than 0.5 points), and the time with boosting over the time without, first with a
 * new keyword list and again with the same list (limit 1.5×); then, on all files joined into one
 * recording, a new list against none. The boosting model (beam search, hotwords given per stream)
 * loads once per worker, in the warm-up: a new list should cost no load of its own.
 *
 * Models come from PARLEY_TEST_MODELS_DIR (default ../shared/models), audio from
 * PARLEY_TEST_CORPUS_DIR (default ../shared/corpus).
 */
import { concatFloat32 } from '../src/audio/channel-mix.js';
import { resample } from '../src/audio/resample.js';
import type { PcmAudio } from '../src/audio/pcm.js';
import { loadEngineSet } from '../src/engines/server/engine-set.js';
import { InferenceCore } from '../src/engines/inference/inference-core.js';
import type { Recognizer } from '../src/engines/types.js';
import { scanModelPacks } from '../src/models/detect.js';
import { capabilityOf, enginePackOf } from '../src/models/families/index.js';
import { transcribeAudio, type TranscriptionEngines } from '../src/transcription/pipeline.js';
import { loadCorpusAudio } from '../test/engines/stt-fixtures.js';
import { sharedModelsDir } from '../test/helpers/models.js';
import { labelledEnglishEntries, normaliseWords, rawTranscript, wordErrors } from '../test/helpers/transcript-accuracy.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const { packs } = await scanModelPacks(sharedModelsDir);
const core = new InferenceCore({ workers: 2 });
const set = await loadEngineSet(
  packs.filter((p) => ['offline-asr', 'online-asr', 'vad'].includes(capabilityOf(p.kind))).map((p) => enginePackOf(p)),
  { runners: { synthesis: core, transcription: core }, diarizationThreshold: 0.5 },
);
for (const failure of set.failed) console.log(`could not load ${failure.pack}: ${failure.reason}`);
if (!set.vad) throw new Error(`no VAD pack in ${sharedModelsDir}`);
const english = set.recognizers.filter((r) => r.languages.includes('en') || r.languages.includes('multi'));
if (english.length === 0) throw new Error(`no English recogniser in ${sharedModelsDir}`);
const vad = set.vad;
const enginesFor = (recognizer: Recognizer): TranscriptionEngines => ({ vad, recognizers: [recognizer] });
const options = { language: 'en', wordTimestamps: true, diarize: false };

const clips = await Promise.all(
  labelledEnglishEntries().map(async (entry) => {
    const audio = loadCorpusAudio(entry.file);
    return { entry, audio, samples16k: await resample(audio.samples, audio.sampleRate, 16000), reference: normaliseWords(entry.text!) };
  }),
);
const corpusSeconds = clips.reduce((n, c) => n + c.audio.samples.length / c.audio.sampleRate, 0);
const referenceWords = clips.reduce((n, c) => n + c.reference.length, 0);
const percent = (errors: number) => ((100 * errors) / referenceWords).toFixed(2).padStart(6) + '%';

console.log(`Parley STT bench: ${clips.length} labelled English files (en/, emotion/), ${corpusSeconds.toFixed(1)} s, ${referenceWords} reference words\n`);
console.log(`${'recogniser'.padEnd(62)} ${'raw WER'.padStart(8)} ${'pipeline'.padStart(8)} ${'diff'.padStart(8)}`);
const disagreements: string[] = [];
for (const recognizer of english) {
  let rawErrors = 0;
  let pipelineErrors = 0;
  for (const clip of clips) {
    const samples = recognizer.sampleRate === 16000 ? clip.samples16k : await resample(clip.audio.samples, clip.audio.sampleRate, recognizer.sampleRate);
    const raw = await rawTranscript(recognizer, samples);
    const pipeline = (await transcribeAudio(clip.audio, options, enginesFor(recognizer))).transcription;
    const r = wordErrors(clip.reference, normaliseWords(raw));
    const p = wordErrors(clip.reference, normaliseWords(pipeline));
    rawErrors += r;
    pipelineErrors += p;
    if (r !== p) disagreements.push(`${recognizer.id} ${clip.entry.file}: raw ${r} errors "${raw}", pipeline ${p} errors "${pipeline}"`);
  }
  const diff = (100 * (pipelineErrors - rawErrors)) / referenceWords;
  console.log(`${recognizer.id.padEnd(62)} ${percent(rawErrors)} ${percent(pipelineErrors)} ${`${diff > 0 ? '+' : ''}${diff.toFixed(2)}`.padStart(8)}`);
}
if (disagreements.length > 0) console.log(`\nfiles where raw and pipeline differ:\n  ${disagreements.join('\n  ')}`);

// Keywords: boosting the words the plain decode missed.
const booster = english.find((r) => r.supportsHotwords);
if (!booster) {
  console.log('\nKeywords: no installed recogniser boosts hotwords (a transducer with bpe.vocab or bpe.model)');
} else {
  const boostEngines = enginesFor(booster);
  await transcribeAudio(clips[0]!.audio, options, boostEngines); // warm-up
  // Warm-up of the boosting model on both workers, with a list no file uses.
  const warmList = { ...options, keywords: [{ word: 'warm up', weight: 1 }] };
  await Promise.all([transcribeAudio(clips[0]!.audio, warmList, boostEngines), transcribeAudio(clips[1]!.audio, warmList, boostEngines)]);
  let missedTotal = 0;
  let missedFoundPlain = 0;
  let missedFoundBoosted = 0;
  let plainErrors = 0;
  let boostedErrors = 0;
  let plainMs = 0;
  let firstMs = 0;
  let againMs = 0;
  const allMissed = new Set<string>();
  for (const clip of clips) {
    let start = performance.now();
    const plain = normaliseWords((await transcribeAudio(clip.audio, options, boostEngines)).transcription);
    plainMs += performance.now() - start;
    const heard = new Set(plain);
    const missed = [...new Set(clip.reference)].filter((w) => !heard.has(w) && /^[\p{L}\p{N}][\p{L}\p{N}' -]*$/u.test(w) && w.length <= 50).slice(0, 100);
    for (const w of missed) allMissed.add(w);
    const keywords = missed.map((word) => ({ word, weight: 2 }));
    start = performance.now();
    const boosted = normaliseWords((await transcribeAudio(clip.audio, { ...options, keywords }, boostEngines)).transcription);
    firstMs += performance.now() - start;
    start = performance.now();
    await transcribeAudio(clip.audio, { ...options, keywords }, boostEngines);
    againMs += performance.now() - start;
    const boostedHeard = new Set(boosted);
    missedTotal += missed.length;
    missedFoundPlain += missed.filter((w) => heard.has(w)).length;
    missedFoundBoosted += missed.filter((w) => boostedHeard.has(w)).length;
    plainErrors += wordErrors(clip.reference, plain);
    boostedErrors += wordErrors(clip.reference, boosted);
  }
  const pct = (n: number, d: number) => `${((100 * n) / Math.max(1, d)).toFixed(1)}%`;
  console.log(`\nKeywords: ${booster.id}, the reference words each file's plain decode missed (${missedTotal} over ${clips.length} files), weight 2`);
  console.log(`  missed-word recall   without ${pct(missedFoundPlain, missedTotal).padStart(7)}   with ${pct(missedFoundBoosted, missedTotal).padStart(7)}   (target: up ≥ 30 points)`);
  console.log(`  WER                  without ${percent(plainErrors)}   with ${percent(boostedErrors)}   (target: not worse by more than 0.5 points)`);
  console.log(`  time with / without  new list ${(firstMs / plainMs).toFixed(2)}×   same list again ${(againMs / plainMs).toFixed(2)}×   (limit 1.5×)`);
  // The same on every file joined into one recording, with every file's missed words as a list never used before.
  const gap = new Float32Array(8000);
  const long = { samples: concatFloat32(clips.flatMap((c) => [c.samples16k, gap])), sampleRate: 16000 };
  let start = performance.now();
  await transcribeAudio(long, options, boostEngines);
  const longPlainMs = performance.now() - start;
  start = performance.now();
  await transcribeAudio(long, { ...options, keywords: [...allMissed].slice(0, 100).map((word) => ({ word, weight: 2.5 })) }, boostEngines);
  const longNewMs = performance.now() - start;
  console.log(`  one ${(long.samples.length / 16000).toFixed(0)} s recording     new list ${(longNewMs / longPlainMs).toFixed(2)}×   (${longPlainMs.toFixed(0)} ms without, ${longNewMs.toFixed(0)} ms with)`);
}

// Speed, first recogniser.
const recognizer = english[0]!;
const engines = enginesFor(recognizer);
interface Row {
  name: string;
  seconds: number;
  pipelineMs: number;
  rawMs: number;
}
async function measure(name: string, audio: PcmAudio, samples16k: Float32Array): Promise<Row> {
  const pipelineTimes: number[] = [];
  const rawTimes: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    let start = performance.now();
    await transcribeAudio(audio, options, engines);
    pipelineTimes.push(performance.now() - start);
    start = performance.now();
    await rawTranscript(recognizer, samples16k);
    rawTimes.push(performance.now() - start);
  }
  return { name, seconds: audio.samples.length / audio.sampleRate, pipelineMs: median(pipelineTimes), rawMs: median(rawTimes) };
}
await transcribeAudio(clips[0]!.audio, options, engines); // warm-up: both workers load their models
const rows: Row[] = [];
for (const { entry, audio, samples16k } of clips) rows.push(await measure(entry.file.replace(/^[a-z]+\//, ''), audio, samples16k));
const gap = 8000;
const joined = new Float32Array(clips.reduce((n, c) => n + c.samples16k.length + gap, 0));
let at = 0;
for (const { samples16k } of clips) {
  joined.set(samples16k, at);
  at += samples16k.length + gap;
}
const joinedRow = await measure(`all ${clips.length} joined`, { samples: joined, sampleRate: 16000 }, joined);

const pad = (s: string | number, n: number) => String(s).padStart(n);
console.log(`\nSpeed: ${recognizer.id}, Silero VAD v5, 2 worker threads, median of ${RUNS} runs\n`);
console.log(`${'file'.padEnd(42)} ${pad('audio s', 8)} ${pad('pipe ms', 8)} ${pad('RTF', 6)} ${pad('raw ms', 8)} ${pad('ratio', 6)}`);
const line = (r: Row) =>
  console.log(
    `${r.name.padEnd(42)} ${pad(r.seconds.toFixed(2), 8)} ${pad(r.pipelineMs.toFixed(0), 8)} ${pad((r.pipelineMs / 1000 / r.seconds).toFixed(3), 6)} ` +
      `${pad(r.rawMs.toFixed(0), 8)} ${pad((r.pipelineMs / r.rawMs).toFixed(2), 6)}`,
  );
rows.forEach(line);
console.log('-'.repeat(82));
line({
  name: 'total (per-file runs)',
  seconds: rows.reduce((n, r) => n + r.seconds, 0),
  pipelineMs: rows.reduce((n, r) => n + r.pipelineMs, 0),
  rawMs: rows.reduce((n, r) => n + r.rawMs, 0),
});
line(joinedRow);
console.log(`\npeak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB (whole process, worker threads included)`);
set.release();
await core.close();
