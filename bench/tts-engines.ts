/**
 * Speed of the TTS engine adapters: real-time factor (compute time / audio time) and time to the
 * first chunk. Run: node --import tsx bench/tts-engines.ts
 * Uses the built-in eSpeak NG and, when present, the synthetic Piper fixture in
 * PARLEY_TEST_MODELS_DIR (default ../shared/models): its figures measure sherpa's pipeline, not
 * a real voice.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEspeakNgEngine } from '../src/engines/server/espeak-ng-tts.js';
import { InferenceCore } from '../src/engines/inference/inference-core.js';
import { createSherpaTtsEngine } from '../src/engines/server/sherpa-tts.js';
import { enginePackAs } from '../src/models/families/index.js';
import type { TtsEngine, Voice } from '../src/engines/types.js';

const text =
  'The quick brown fox jumps over the lazy dog. A journey of a thousand miles begins with a single step. ' +
  'All that glitters is not gold, and not all those who wander are lost.';

async function measure(engine: TtsEngine, voice: Voice, runs = 5): Promise<void> {
  let compute = 0;
  let audio = 0;
  let firstChunk = 0;
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    let first = 0;
    let samples = 0;
    for await (const chunk of engine.synthesize(voice, text, { speed: 1, language: voice.languages[0]! })) {
      if (!first) first = performance.now() - start;
      samples += chunk.length;
    }
    compute += performance.now() - start;
    audio += (samples / voice.sampleRate) * 1000;
    firstChunk += first;
  }
  console.log(
    `${voice.id.padEnd(40)} RTF ${(compute / audio).toFixed(3)}  first chunk ${(firstChunk / runs).toFixed(0)} ms  ` +
      `audio ${(audio / runs / 1000).toFixed(2)} s`,
  );
}

async function parallel(engine: TtsEngine, voice: Voice, n: number): Promise<void> {
  const start = performance.now();
  await Promise.all(
    Array.from({ length: n }, async () => {
      for await (const _ of engine.synthesize(voice, text, { speed: 1, language: 'en' }));
    }),
  );
  console.log(`  ${n} parallel requests: ${(performance.now() - start).toFixed(0)} ms`);
}

for (const workers of [1, 2]) {
  const started = performance.now();
  const espeak = await createEspeakNgEngine({ workers });
  console.log(`eSpeak NG, ${workers} worker(s), started in ${(performance.now() - started).toFixed(0)} ms`);
  const voices = espeak.listVoices();
  for (const id of ['espeak-en-us-male', 'espeak-hi-female']) await measure(espeak, voices.find((v) => v.id === id)!);
  await parallel(espeak, voices[0]!, 4); // the first run also warms up the other workers
  await parallel(espeak, voices[0]!, 4);
  await espeak.close();
}

const modelsDir = process.env.PARLEY_TEST_MODELS_DIR ?? resolve(fileURLToPath(new URL('../../shared/models', import.meta.url)));
const fixture = join(modelsDir, 'fake-piper-tones-en_US-22k-2spk');
if (existsSync(fixture)) {
  const core = new InferenceCore({ workers: 1 });
  const sherpa = await createSherpaTtsEngine(core, [
    enginePackAs('tts', {
      id: 'fake-piper-tones-en_US-22k-2spk',
      dir: fixture,
      kind: 'tts-vits',
      files: { model: join(fixture, 'model.onnx'), tokens: join(fixture, 'tokens.txt') },
      languages: ['en'],
      voices: [],
      metadata: {},
    }),
  ]);
  console.log('sherpa-onnx, synthetic Piper fixture (phonemisation + pipeline cost only)');
  await measure(sherpa, sherpa.listVoices()[0]!);
  await sherpa.close();
}
