/**
 * Accuracy of the acoustic baseline (src/voice-analysis/acoustic-baseline.ts) on every
 * labelled corpus clip: `node --import tsx bench/analysis.ts`.
 *
 * Each clip is analysed as one speaker whose speech span is the whole clip (the baseline trims
 * leading and trailing silence itself). Label mapping, matching the baseline's documented rule:
 *   age  < 2 → infant;  2-19 → teenager (children and teens: the spec has no child value);
 *        20-64 → adult;  ≥ 65 → old.  RAVDESS actors are 21-33 (manifest age text "adult (...)") → adult.
 *   emotion  happy → happiness, sad → sadness, angry → anger, fearful → fear, disgust → disgust.
 *            Neutral clips have no correct top emotion: they are reported apart, as the share left
 *            to neutral (1 − sum of the five scores; higher is better).
 */
import path from 'node:path';
import { createSpeakerAnalysis } from '../src/voice-analysis/speaker-analysis.js';
import type { SpeakerTraits } from '../src/voice-analysis/types.js';
import type { AgeGroup, Emotions } from '../src/transcription/types.js';
import { labelledClips, readWav } from '../test/voice-analysis/labelled-clips.js';

const EMOTION_LABELS: Record<string, keyof Emotions> = {
  happy: 'happiness',
  sad: 'sadness',
  angry: 'anger',
  fearful: 'fear',
  disgust: 'disgust',
};
const EMOTIONS: (keyof Emotions)[] = ['happiness', 'sadness', 'disgust', 'fear', 'anger'];

function expectedAge(age: number | null, ageText: string | null): AgeGroup | undefined {
  if (age === null) return ageText?.startsWith('adult') ? 'adult' : undefined;
  if (age < 2) return 'infant';
  if (age < 20) return 'teenager';
  return age < 65 ? 'adult' : 'old';
}

const analyzer = createSpeakerAnalysis();
const rows: { file: string; kind: string; age: number | null; ageText: string | null; gender: string | null; emotion: string | null; traits: SpeakerTraits; ms: number }[] = [];
let audioSeconds = 0;
let cpuMs = 0;
for (const clip of labelledClips()) {
  const { samples, sampleRate } = readWav(clip.file);
  const started = performance.now();
  const traits = await analyzer.analyze(samples, sampleRate, [{ start: 0, end: samples.length / sampleRate }], {
    age: true,
    gender: true,
    emotions: true,
  });
  const ms = performance.now() - started;
  audioSeconds += samples.length / sampleRate;
  cpuMs += ms;
  rows.push({ file: path.basename(clip.file), kind: clip.kind, age: clip.age, ageText: clip.ageText, gender: clip.gender, emotion: clip.emotion, traits, ms });
}

const pct = (n: number, d: number) => (d === 0 ? 'n/a' : `${((100 * n) / d).toFixed(0)}% (${n}/${d})`);
const top = (e: Emotions) => EMOTIONS.reduce((a, b) => (e[b] > e[a] ? b : a));

console.log('clip'.padEnd(44), 'label'.padEnd(20), 'predicted');
for (const r of rows) {
  const label = r.kind === 'emotion' ? `${r.gender} ${r.emotion}` : `${r.gender} ${r.age}y`;
  const e = r.traits.emotions;
  const scores = e ? EMOTIONS.map((k) => `${k.slice(0, 3)} ${e[k].toFixed(2)}`).join(' ') : '-';
  console.log(r.file.padEnd(44), label.padEnd(20), `${r.traits.gender ?? '-'} ${r.traits.age ?? '-'} | ${scores}`);
}

const gendered = rows.filter((r) => r.gender);
const adultSo = gendered.filter((r) => r.kind === 'age_gender' && (r.age ?? 0) >= 18);
const ravdess = gendered.filter((r) => r.kind === 'emotion');
const children = gendered.filter((r) => r.kind === 'age_gender' && (r.age ?? 99) < 18);
const hits = (list: typeof rows) => list.filter((r) => r.traits.gender === r.gender).length;
console.log('\nGender accuracy');
console.log('  overall                         ', pct(hits(gendered), gendered.length));
console.log('  adults ≥ 18 (speechocean, read) ', pct(hits(adultSo), adultSo.length));
console.log('  adults, acted emotion (RAVDESS) ', pct(hits(ravdess), ravdess.length));
console.log('  all adults                      ', pct(hits([...adultSo, ...ravdess]), adultSo.length + ravdess.length));
console.log('  under 18                        ', pct(hits(children), children.length));

const aged = rows.map((r) => ({ r, want: expectedAge(r.age, r.ageText) })).filter((x) => x.want);
console.log('\nAge-group accuracy (label: <2 infant, 2-19 teenager, 20-64 adult)');
console.log('  overall                         ', pct(aged.filter((x) => x.r.traits.age === x.want).length, aged.length));
for (const group of ['teenager', 'adult'] as AgeGroup[]) {
  const g = aged.filter((x) => x.want === group);
  console.log(`  recall ${group.padEnd(25)}`, pct(g.filter((x) => x.r.traits.age === group).length, g.length));
}
const predictedAges = new Map<string, number>();
for (const x of aged) predictedAges.set(x.r.traits.age ?? '-', (predictedAges.get(x.r.traits.age ?? '-') ?? 0) + 1);
console.log('  predicted counts                ', Object.fromEntries(predictedAges));

const emotional = rows.filter((r) => r.emotion && EMOTION_LABELS[r.emotion] && r.traits.emotions);
console.log('\nEmotion top-1 (non-neutral clips; chance 20%)', pct(emotional.filter((r) => top(r.traits.emotions!) === EMOTION_LABELS[r.emotion!]).length, emotional.length));
console.log('Confusion (rows: label, columns: top-1 predicted)');
console.log(''.padEnd(11), EMOTIONS.map((e) => e.slice(0, 5).padStart(6)).join(''), '  recall');
for (const label of EMOTIONS) {
  const mine = emotional.filter((r) => EMOTION_LABELS[r.emotion!] === label);
  const counts = EMOTIONS.map((p) => mine.filter((r) => top(r.traits.emotions!) === p).length);
  console.log(label.padEnd(11), counts.map((c) => String(c).padStart(6)).join(''), '  ', pct(counts[EMOTIONS.indexOf(label)]!, mine.length));
}
const neutral = rows.filter((r) => r.emotion === 'neutral' && r.traits.emotions);
for (const r of neutral) {
  const rest = 1 - EMOTIONS.reduce((s, k) => s + r.traits.emotions![k], 0);
  console.log(`Neutral clip ${r.file}: neutral share ${rest.toFixed(2)}, top emotion ${top(r.traits.emotions!)}`);
}
const emoLabelled = rows.filter((r) => r.emotion && r.traits.emotions);
const meanNeutral = (list: typeof rows) =>
  list.reduce((s, r) => s + 1 - EMOTIONS.reduce((t, k) => t + r.traits.emotions![k], 0), 0) / Math.max(1, list.length);
console.log(`Mean neutral share: neutral clips ${meanNeutral(neutral).toFixed(2)}, emotional clips ${meanNeutral(emoLabelled.filter((r) => r.emotion !== 'neutral')).toFixed(2)}`);

console.log(`\nSpeed: ${audioSeconds.toFixed(1)} s of audio in ${(cpuMs / 1000).toFixed(2)} s, RTF ${(cpuMs / 1000 / audioSeconds).toFixed(3)}`);
