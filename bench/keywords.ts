/**
 * Keyword boosting calibration: `npm run bench:keywords`.
 *
 * On every English recording of the corpus with a reference text (test/helpers/keyword-recall.ts
 * says which and why), with the shared tiny streaming zipformer and Silero VAD v5:
 * 1. the plain decode of each file; its keywords are the reference words it missed;
 * 2. calibration half (files at even positions): the recogniser's own boost (sherpa hotword score
 *    per token) swept, giving recall of the missed words, WER, and false alarms (unspoken words
 *    boosted alone, and how many come out). The streaming recogniser decodes a whole recording as
 *    one stream in the pipeline too, so this decode is the pipeline's;
 * 3. held-out half (odd positions), then all files: the pipeline (transcribeAudio) with `keywords`
 *    at intensifiers 1, 2, 3, 5, 8, 10, through the calibrated mapping (hotwordBoost).
 * Targets (held-out half, intensifier 2): recall ≥ 30%, WER not worse than plain by more than 0.5
 * points; each figure is printed beside its target as a ratio (≥ 1 meets a floor, ≤ 1 a ceiling).
 *
 * Models come from PARLEY_TEST_MODELS_DIR (default ../shared/models), audio from
 * PARLEY_TEST_CORPUS_DIR (default ../shared/corpus).
 */
import type { PcmAudio } from '../src/audio/pcm.js';
import { resample } from '../src/audio/resample.js';
import { loadEngineSet } from '../src/engines/server/engine-set.js';
import { InferenceCore } from '../src/engines/inference/inference-core.js';
import { scanModelPacks } from '../src/models/detect.js';
import { enginePackOf } from '../src/models/families/index.js';
import { hotwordBoost } from '../src/transcription/options/keywords.js';
import { transcribeAudio } from '../src/transcription/pipeline.js';
import { defaultConfig } from '../src/config.js';
import {
  boostedWer, halves, keywordCorpusEntries, loadKeywordClips, measureFalseAlarms, measureRecall, plainWer, recall,
  type FalseAlarmFigures, type KeywordClip, type KeywordFigures, type Transcribe,
} from '../test/helpers/keyword-recall.js';
import { REAL_TEST_MODELS, sharedModelsDir } from '../test/helpers/models.js';

const RECALL_TARGET = 0.3;
const WER_LIMIT_POINTS = 0.5;
const BOOSTS = (process.env.BENCH_BOOSTS ?? '1,1.5,2,2.5,3,3.25,3.5,3.75,4,5,6,8').split(',').map(Number);
const INTENSIFIERS = [1, 2, 3, 5, 8, 10];

const { packs } = await scanModelPacks(sharedModelsDir);
const core = new InferenceCore({ workers: 1 });
const set = await loadEngineSet(
  packs.filter((p) => p.id === REAL_TEST_MODELS.VAD || p.id === REAL_TEST_MODELS.STREAMING_ENGLISH).map((p) => enginePackOf(p)),
  { runners: { synthesis: core, transcription: core }, diarizationThreshold: 0.5 },
);
const recognizer = set.recognizers.find((r) => r.supportsHotwords);
if (!set.vad || !recognizer) throw new Error(`needs ${REAL_TEST_MODELS.VAD} and ${REAL_TEST_MODELS.STREAMING_ENGLISH} (with its bpe.model) in ${sharedModelsDir}`);
const engines = { vad: set.vad, recognizers: [recognizer] };
const options = { language: 'en', wordTimestamps: false, diarize: false };

/** The pipeline, keywords at intensifiers. */
const pipeline: Transcribe = async (audio, keywords) => (await transcribeAudio(audio, { ...options, ...(keywords ? { keywords } : {}) }, engines)).transcription;

/** The recogniser on the whole recording, `weight` read as its own boost. */
const at16k = new Map<PcmAudio, Float32Array>();
const rawBoost: Transcribe = async (audio, keywords) => {
  let samples = at16k.get(audio);
  if (!samples) at16k.set(audio, (samples = await resample(audio.samples, audio.sampleRate, recognizer.sampleRate)));
  const hotwords = keywords?.map((k) => ({ phrase: k.word, score: k.weight }));
  const tailPaddingSeconds = defaultConfig.transcription.decoding.streamTailPaddingSeconds;
  return (await recognizer.recognize(samples, { language: 'en', tailPaddingSeconds, ...(hotwords?.length ? { hotwords } : {}) })).text;
};

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const points = (f: KeywordFigures) => 100 * (boostedWer(f) - plainWer(f));
const signed = (x: number) => `${x > 0 ? '+' : ''}${x.toFixed(2)}`;

function row(label: string, f: KeywordFigures, alarms?: FalseAlarmFigures): string {
  const wer = `WER ${pct(boostedWer(f)).padStart(6)} (${signed(points(f)).padStart(6)} pts)`;
  const falseAlarms = alarms ? `   unspoken heard ${`${alarms.heard}/${alarms.given}`.padStart(6)} (${signed((100 * alarms.addedErrors) / alarms.referenceWords)} WER pts)` : '';
  return `${label.padEnd(26)} recall ${pct(recall(f)).padStart(6)}   ${wer}${falseAlarms}`;
}

function describeSet(name: string, clips: KeywordClip[]): void {
  const words = clips.reduce((n, c) => n + c.reference.length, 0);
  const missed = clips.reduce((n, c) => n + c.missed.length, 0);
  console.log(`${name}: ${clips.length} files, ${words} reference words, ${missed} missed by the plain decode`);
}

const clips = await loadKeywordClips(keywordCorpusEntries(), pipeline);
const { calibration, heldOut } = halves(clips);
console.log(`Parley keyword bench: ${recognizer.id}, Silero VAD v5\n`);
describeSet('calibration half (even positions)', calibration);
describeSet('held-out half (odd positions)   ', heldOut);

console.log(`\nCalibration half: the recogniser's boost (hotword score per token), swept`);
for (const boost of BOOSTS) {
  const f = await measureRecall(calibration, boost, rawBoost);
  const alarms = await measureFalseAlarms(calibration, boost, rawBoost);
  console.log(row(`boost ${boost}`, f, alarms));
}

console.log(`\nThe mapping: ${INTENSIFIERS.map((i) => `intensifier ${i} → boost ${hotwordBoost(i)}`).join(', ')}`);

for (const [name, part] of [['Held-out half', heldOut], ['All files', clips]] as const) {
  const first = await measureRecall(part, 1, pipeline);
  console.log(`\n${name}, through the pipeline (plain WER ${pct(plainWer(first))})`);
  for (const intensifier of INTENSIFIERS) {
    const f = intensifier === 1 ? first : await measureRecall(part, intensifier, pipeline);
    const alarms = await measureFalseAlarms(part, intensifier, pipeline);
    console.log(row(`intensifier ${intensifier}`, f, alarms));
    if (intensifier === 2) {
      console.log(
        `  targets at 2: recall ${pct(recall(f))} / ${pct(RECALL_TARGET)} = ${(recall(f) / RECALL_TARGET).toFixed(2)} (≥ 1);` +
          ` WER change ${signed(points(f))} pts / +${WER_LIMIT_POINTS} = ${(points(f) / WER_LIMIT_POINTS).toFixed(2)} (≤ 1)`,
      );
    }
  }
}
await core.close();
