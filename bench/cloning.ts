/**
 * Voice cloning over the labelled corpus speakers: `node --import tsx bench/cloning.ts`.
 *
 * A real server on loopback (SQLite in a temp dir, Silero VAD from the shared models). For every
 * single-speaker English clip of the corpus (age_gender/ and en/): POST add_voice with the clip,
 * timed; the clone then says BENCH_TEXT through tts-v2 get_speech, and its speech is measured the
 * way the sample was (src/synthesis/voice-profile.ts). Printed per clip and as mean absolute error:
 *   F0     clone median F0 − sample median F0, semitones;
 *   range  clone p10-p90 F0 spread − sample spread, semitones;
 *   rate   clone syllable rate / sample syllable rate − 1, percent.
 * Only the built-in match (espeak-ng-matched) exists in this version; the engine column says
 * which engine served each clone.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { decodeAudio } from '../src/audio/decode.js';
import { measureVoiceProfile, semitonesBetween, type VoiceProfile } from '../src/synthesis/voice-profile.js';
import { corpusDir, modelsDirWith } from '../test/helpers/models.js';
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

const clips = readFileSync(path.join(corpusDir, 'manifest.jsonl'), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l) as Entry)
  .filter((e) => (e.kind === 'age_gender' || e.kind === 'transcript') && e.language === 'en');

const server = await startTestServer({ engines: true, config: { modelsDir: modelsDirWith(['silero-vad-v5']) } as never });
interface Row {
  file: string;
  label: string;
  createMs: number;
  status: string;
  engine?: string;
  sample?: VoiceProfile;
  clone?: VoiceProfile;
}
const rows: Row[] = [];
try {
  for (const clip of clips) {
    const form = new FormData();
    form.append('displayName', path.basename(clip.file));
    form.append('file', new Blob([readFileSync(path.join(corpusDir, clip.file))], { type: 'audio/wav' }), path.basename(clip.file));
    const started = performance.now();
    const res = await fetch(`${server.url}/api/v1/tts-large/add_voice`, { method: 'POST', headers: { authorization: `Bearer ${server.key}` }, body: form });
    const body = (await res.json()) as any;
    const createMs = performance.now() - started;
    const label = `${clip.gender ?? '?'} ${clip.age ?? ''}`.trim();
    if (res.status !== 200) {
      rows.push({ file: clip.file, label, createMs, status: `${res.status}: ${body.message}` });
      continue;
    }
    const { voiceId } = body.data;
    const listed = (await (await server.api('/api/v1/tts-large/get_cloned_voices')).json()) as any;
    const voice = listed.voices.find((v: any) => v.voiceId === voiceId);
    const speech = await server.api('/api/v1/tts-v2/get_speech', {
      method: 'POST',
      json: { text: BENCH_TEXT, voice_id: voiceId, output_format: 'wav', sample_rate: 24000 },
    });
    const audio = await decodeAudio(new Uint8Array(await speech.arrayBuffer()), { contentType: 'audio/wav' });
    const clone = await measureVoiceProfile(audio.samples, audio.sampleRate, [{ start: 0, end: audio.samples.length / audio.sampleRate }]);
    rows.push({ file: clip.file, label, createMs, status: voice.status, engine: voice.engine, sample: voice.profile, clone });
    await server.api('/api/v1/tts-large', { method: 'DELETE', json: { voiceId } });
  }
} finally {
  await server.close();
}

const f = (v: number, digits = 1) => (Number.isFinite(v) ? v.toFixed(digits) : 'n/a');
console.log(
  'clip'.padEnd(50),
  'label'.padEnd(8),
  'create s'.padStart(9),
  'engine'.padEnd(18),
  'F0 sample→clone Hz'.padEnd(20),
  'F0 err st'.padStart(9),
  'range err st'.padStart(12),
  'rate err %'.padStart(10),
);
const errors = { f0: [] as number[], range: [] as number[], rate: [] as number[], createMs: [] as number[] };
for (const r of rows) {
  if (!r.sample || !r.clone) {
    console.log(r.file.padEnd(50), r.label.padEnd(8), f(r.createMs / 1000).padStart(9), r.status);
    continue;
  }
  const f0 = semitonesBetween(r.clone.medianF0Hz, r.sample.medianF0Hz);
  const range = r.clone.pitchRangeSemitones - r.sample.pitchRangeSemitones;
  const rate = (100 * r.clone.speakingRate) / r.sample.speakingRate - 100;
  errors.f0.push(f0);
  errors.range.push(range);
  errors.rate.push(rate);
  errors.createMs.push(r.createMs);
  console.log(
    r.file.padEnd(50),
    r.label.padEnd(8),
    f(r.createMs / 1000).padStart(9),
    (r.engine ?? '').padEnd(18),
    `${f(r.sample.medianF0Hz, 0)}→${f(r.clone.medianF0Hz, 0)} (${r.sample.genderClass})`.padEnd(20),
    f(f0, 2).padStart(9),
    f(range, 2).padStart(12),
    f(rate, 0).padStart(10),
  );
}
const meanAbs = (xs: number[]) => xs.reduce((s, x) => s + Math.abs(x), 0) / xs.length;
const sorted = [...errors.createMs].sort((a, b) => a - b);
console.log(`\nbuilt-in match (espeak-ng-matched), ${errors.f0.length} clones of ${rows.length} clips:`);
console.log(`  mean |F0 error| ${f(meanAbs(errors.f0), 2)} st (max ${f(Math.max(...errors.f0.map(Math.abs)), 2)}), within 2 st: ${errors.f0.filter((e) => Math.abs(e) <= 2).length}/${errors.f0.length}`);
console.log(`  mean |pitch-range error| ${f(meanAbs(errors.range), 2)} st`);
console.log(`  mean |rate error| ${f(meanAbs(errors.rate), 0)} %`);
console.log(`  creation time: median ${f(sorted[Math.floor(sorted.length / 2)]! / 1000, 2)} s, max ${f(sorted.at(-1)! / 1000, 2)} s (add_voice round trip, loopback)`);
console.log('zero-shot pack: none installed (this version has the built-in match only)');
