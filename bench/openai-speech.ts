/**
 * /v1/audio/speech per response_format: time to the first byte and to the end over real HTTP
 * (the built-in eSpeak NG voice behind `alloy`), and the encoders alone on the same audio
 * (real-time factor: encoding seconds per second of audio), plus the time stretching of speeds
 * beyond the engines' 0.5-2. Prints numbers; asserts nothing.
 *
 *   npm run bench:openai        Env: BENCH_RUNS (default 10) requests per format.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { KEY_ROLES } from '../src/accounts/api-keys.js';
import { createFfmpegEncoder } from '../src/audio/ffmpeg-encode.js';
import { encodeStream, streamFormats } from '../src/audio/stream-encode.js';
import { TimeStretcher } from '../src/audio/time-stretch.js';
import { loadConfig } from '../src/config.js';
import { startServer } from '../src/server.js';
import { trainJourney } from './texts.js';

const LONG = trainJourney.join(' ');

const RUNS = Math.max(1, Number.parseInt(process.env.BENCH_RUNS ?? '10', 10) || 10);
const SHORT = 'Hello there. This is Parley, speaking through the OpenAI compatible API.';

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const dataDir = mkdtempSync(path.join(tmpdir(), 'parley-bench-openai-'));
const config = loadConfig({}, { port: 0, host: '127.0.0.1', dataDir, modelsDir: path.join(dataDir, 'models'), logLevel: 'warn', rateLimits: { synthesis: { perMinute: 0 } } });
const server = await startServer(config, { logger: false });
try {
  const { key } = await server.storage.apiKeys.create({ name: 'bench', role: KEY_ROLES.admin });
  const speak = async (input: string, format: string) => {
    const started = performance.now();
    const res = await fetch(`${server.url}/v1/audio/speech`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tts-1', voice: 'alloy', input, response_format: format }),
    });
    const reader = res.body!.getReader();
    let first = 0;
    let bytes = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (value && !first) first = performance.now() - started;
      if (value) bytes += value.length;
      if (done) break;
    }
    return { first, total: performance.now() - started, bytes };
  };

  console.log(`/v1/audio/speech, ${RUNS} runs per format, median ms (short: ${SHORT.length} chars; long: ${LONG.length} chars)`);
  console.log('format  first byte (short)  end (short)  first byte (long)  end (long)  bytes (long)');
  for (const format of streamFormats) {
    await speak(SHORT, format); // warm-up: encoder set-up, WASM compilation
    const short = [];
    const long = [];
    for (let i = 0; i < RUNS; i++) short.push(await speak(SHORT, format));
    for (let i = 0; i < Math.max(1, Math.ceil(RUNS / 3)); i++) long.push(await speak(LONG, format));
    console.log(
      `${format.padEnd(6)}  ${median(short.map((r) => r.first)).toFixed(1).padStart(18)}  ${median(short.map((r) => r.total)).toFixed(1).padStart(11)}  ` +
        `${median(long.map((r) => r.first)).toFixed(1).padStart(17)}  ${median(long.map((r) => r.total)).toFixed(1).padStart(10)}  ${String(long[0]!.bytes).padStart(12)}`,
    );
  }

  // The encoders alone, on 60 s of a speech-like signal (harmonics with a moving pitch, and noise).
  const seconds = 60;
  const rate = 24000;
  const signal = new Float32Array(seconds * rate);
  for (let i = 0; i < signal.length; i++) {
    const f0 = 120 + 40 * Math.sin((2 * Math.PI * i) / rate / 3);
    signal[i] = 0.3 * Math.sin((2 * Math.PI * f0 * i) / rate) + 0.1 * Math.sin((4 * Math.PI * f0 * i) / rate) + 0.02 * (Math.random() - 0.5);
  }
  async function* slices() {
    for (let at = 0; at < signal.length; at += 4096) yield signal.subarray(at, at + 4096);
  }
  const ffmpeg = createFfmpegEncoder({ enabled: true, path: null, limits: config.ffmpeg });
  console.log(`\nencoders on ${seconds} s of 24 kHz audio: ms, real-time factor, bytes`);
  for (const format of streamFormats) {
    const started = performance.now();
    let bytes = 0;
    for await (const piece of encodeStream(format, rate, slices(), { ffmpeg, signal: new AbortController().signal })) bytes += piece.length;
    const ms = performance.now() - started;
    console.log(`${format.padEnd(6)}  ${ms.toFixed(0).padStart(6)} ms  RTF ${(ms / 1000 / seconds).toFixed(4)}  ${bytes} bytes`);
  }
  for (const tempo of [0.5, 2]) {
    const started = performance.now();
    const stretcher = new TimeStretcher(tempo, rate);
    for (let at = 0; at < signal.length; at += 4096) stretcher.push(signal.subarray(at, at + 4096));
    stretcher.flush();
    const ms = performance.now() - started;
    console.log(`time stretch x${tempo}: ${ms.toFixed(0)} ms for ${seconds} s of input (RTF ${(ms / 1000 / seconds).toFixed(4)})`);
  }
} finally {
  await server.close();
}
