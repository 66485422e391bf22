/**
 * Voice cloning over the labelled corpus speakers: `node --import tsx bench/cloning.ts`.
 *
 * A real server on loopback (SQLite in a temp dir, Silero VAD from the shared models) per engine:
 * the built-in match (no zero-shot pack installed), then every zero-shot pack (ZipVoice, Pocket
 * TTS) found in the shared models dir or named in PARLEY_BENCH_ZERO_SHOT (comma-separated pack
 * folder names, e.g. the hand-made fake-zipvoice-envelope-24k, which is not a voice: its figures
 * only show that the code path runs), with the English streaming recogniser so ZipVoice clones
 * are transcribed by Parley. For every single-speaker English clip of the corpus (age_gender/ and
 * en/): POST add_voice with the clip (no transcript), timed to the response and to `completed`;
 * the clone then says BENCH_TEXT through tts-v2 get_speech, and its speech is measured the way the
 * sample was (src/synthesis/voice-profile.ts). Printed per clip and as mean absolute error:
 *   F0     clone median F0 − sample median F0, semitones;
 *   range  clone p10-p90 F0 spread − sample spread, semitones;
 *   rate   clone syllable rate / sample syllable rate − 1, percent.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { decodeAudio } from '../src/audio/decode.js';
import { scanModelPacks } from '../src/models/detect.js';
import { capabilityOf } from '../src/models/families/index.js';
import { measureVoiceProfile, semitonesBetween, type VoiceProfile } from '../src/synthesis/voice-profile.js';
import { corpusDir, modelsDirWith, REAL_TEST_MODELS, sharedModelsDir } from '../test/helpers/models.js';
import { startTestServer } from '../test/helpers/server.js';

const BENCH_TEXT =
  'It was a bright cold day in April, and the clocks were striking thirteen. Nobody in the street seemed to notice, and the old man kept on walking.';

interface Entry {
  file: string;
  kind: string;
  language: string;
  gender: string | null;
  age: string | null;
  duration_s: number;
  num_speakers?: number;
}

interface Row {
  file: string;
  label: string;
  /** add_voice round trip (the response says processing). */
  responseMs: number;
  /** From the request to get_cloned_voices showing completed or failed. */
  createMs: number;
  status: string;
  engine?: string;
  sample?: VoiceProfile;
  clone?: VoiceProfile;
}

const clips = readFileSync(path.join(corpusDir, 'manifest.jsonl'), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l) as Entry)
  .filter((e) => (e.kind === 'age_gender' || e.kind === 'transcript') && e.language === 'en');

async function runEngine(models: string[]): Promise<Row[]> {
  const server = await startTestServer({ engines: true, config: { modelsDir: modelsDirWith(models) } as never });
  const rows: Row[] = [];
  try {
    for (const clip of clips) {
      const form = new FormData();
      form.append('displayName', path.basename(clip.file));
      form.append('file', new Blob([readFileSync(path.join(corpusDir, clip.file))], { type: 'audio/wav' }), path.basename(clip.file));
      const started = performance.now();
      const res = await fetch(`${server.url}/api/v1/tts-large/add_voice`, { method: 'POST', headers: { authorization: `Bearer ${server.key}` }, body: form });
      const body = (await res.json()) as any;
      const responseMs = performance.now() - started;
      const label = `${clip.gender ?? '?'} ${clip.age ?? ''}`.trim();
      if (res.status !== 200) {
        rows.push({ file: clip.file, label, responseMs, createMs: responseMs, status: `${res.status}: ${body.message}` });
        continue;
      }
      const { voiceId } = body.data;
      let voice: any;
      for (;;) {
        const listed = (await (await server.api('/api/v1/tts-large/get_cloned_voices')).json()) as any;
        voice = listed.voices.find((v: any) => v.voiceId === voiceId);
        if (voice.status !== 'processing') break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const createMs = performance.now() - started;
      if (voice.status !== 'completed') {
        rows.push({ file: clip.file, label, responseMs, createMs, status: `${voice.status}: ${voice.error ?? ''}` });
        await server.api('/api/v1/tts-large', { method: 'DELETE', json: { voiceId } });
        continue;
      }
      const speech = await server.api('/api/v1/tts-v2/get_speech', {
        method: 'POST',
        json: { text: BENCH_TEXT, voice_id: voiceId, output_format: 'wav', sample_rate: 24000 },
      });
      const audio = await decodeAudio(new Uint8Array(await speech.arrayBuffer()), { contentType: 'audio/wav' });
      const clone = await measureVoiceProfile(audio.samples, audio.sampleRate, [{ start: 0, end: audio.samples.length / audio.sampleRate }]);
      rows.push({ file: clip.file, label, responseMs, createMs, status: voice.status, engine: voice.engine, sample: voice.profile, clone });
      await server.api('/api/v1/tts-large', { method: 'DELETE', json: { voiceId } });
    }
  } finally {
    await server.close();
  }
  return rows;
}

const f = (v: number, digits = 1) => (Number.isFinite(v) ? v.toFixed(digits) : 'n/a');

function report(title: string, rows: Row[]): void {
  console.log(`\n== ${title}`);
  console.log(
    'clip'.padEnd(50),
    'label'.padEnd(8),
    'resp s'.padStart(7),
    'create s'.padStart(9),
    'engine'.padEnd(18),
    'F0 sample→clone Hz'.padEnd(20),
    'F0 err st'.padStart(9),
    'range err st'.padStart(12),
    'rate err %'.padStart(10),
  );
  const errors = { f0: [] as number[], range: [] as number[], rate: [] as number[], createMs: [] as number[], responseMs: [] as number[] };
  for (const r of rows) {
    if (!r.sample || !r.clone) {
      console.log(r.file.padEnd(50), r.label.padEnd(8), f(r.responseMs / 1000).padStart(7), f(r.createMs / 1000).padStart(9), r.status);
      continue;
    }
    const f0 = semitonesBetween(r.clone.medianF0Hz, r.sample.medianF0Hz);
    const range = r.clone.pitchRangeSemitones - r.sample.pitchRangeSemitones;
    const rate = (100 * r.clone.speakingRate) / r.sample.speakingRate - 100;
    errors.f0.push(f0);
    errors.range.push(range);
    errors.rate.push(rate);
    errors.createMs.push(r.createMs);
    errors.responseMs.push(r.responseMs);
    console.log(
      r.file.padEnd(50),
      r.label.padEnd(8),
      f(r.responseMs / 1000).padStart(7),
      f(r.createMs / 1000).padStart(9),
      (r.engine ?? '').padEnd(18),
      `${f(r.sample.medianF0Hz, 0)}→${f(r.clone.medianF0Hz, 0)} (${r.sample.genderClass})`.padEnd(20),
      f(f0, 2).padStart(9),
      f(range, 2).padStart(12),
      f(rate, 0).padStart(10),
    );
  }
  const meanAbs = (xs: number[]) => xs.reduce((s, x) => s + Math.abs(x), 0) / xs.length;
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(`\n${title}, ${errors.f0.length} clones of ${rows.length} clips:`);
  console.log(`  mean |F0 error| ${f(meanAbs(errors.f0), 2)} st (max ${f(Math.max(...errors.f0.map(Math.abs)), 2)}), within 2 st: ${errors.f0.filter((e) => Math.abs(e) <= 2).length}/${errors.f0.length}`);
  console.log(`  mean |pitch-range error| ${f(meanAbs(errors.range), 2)} st`);
  console.log(`  mean |rate error| ${f(meanAbs(errors.rate), 0)} %`);
  console.log(
    `  add_voice response: median ${f(median(errors.responseMs) / 1000, 2)} s; until completed: median ${f(median(errors.createMs) / 1000, 2)} s, max ${f(Math.max(...errors.createMs) / 1000, 2)} s (loopback)`,
  );
}

/** Zero-shot packs: those installed in the shared models dir, and those PARLEY_BENCH_ZERO_SHOT names. */
async function zeroShotPacks(): Promise<string[]> {
  const { packs } = await scanModelPacks(sharedModelsDir);
  const named = (process.env.PARLEY_BENCH_ZERO_SHOT ?? '').split(',').map((n) => n.trim()).filter(Boolean);
  return [...new Set([...packs.filter((p) => capabilityOf(p.kind) === 'zero-shot-tts').map((p) => p.id), ...named])];
}

report('built-in match (espeak-ng-matched)', await runEngine([REAL_TEST_MODELS.VAD]));
const zeroShot = await zeroShotPacks();
for (const pack of zeroShot) report(`zero-shot pack ${pack}`, await runEngine([REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH, pack]));
if (zeroShot.length === 0) console.log('\nzero-shot pack: none installed (pull one, or name one in PARLEY_BENCH_ZERO_SHOT)');
