/**
 * What serving inference costs beyond the engine itself: `npm run bench:inference`. Prints numbers
 * and ratios; asserts nothing.
 *
 * The server runs as its own process (the built `parley serve`) on loopback with the shared
 * models, so its resident memory and CPU are its own and not the client's. The raw engines run in
 * this process, called directly through sherpa-onnx, on the same inputs:
 *
 * 1. Synthesis, Piper fixture voice (fake-piper-tones-en_US-22k-2spk, ~1 ms a sentence): raw
 *    generation of the whole text vs. /tts-v2/get_speech (pcm at the voice's own rate, so neither
 *    resampling nor encoding is measured), and the SSE time to the first chunk.
 * 2. Transcription, the tiny streaming zipformer on a 16.7 s corpus file: raw decode of the whole
 *    file vs. /stt/get_text (decode, VAD, recognition, words).
 * 3. Throughput with 4 concurrent transcriptions of that file: seconds of audio per second.
 * 4. Idle resident memory after every model has served once: the server and every process it
 *    started, as RSS (shared pages counted in each process) and as PSS (shared pages split).
 *
 * Env: BENCH_RUNS (default 10), PARLEY_TEST_MODELS_DIR, PARLEY_TEST_CORPUS_DIR.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { decodeAudio } from '../src/audio/decode.js';
import { loadSherpaOnnx } from '../src/engines/sherpa-onnx.js';
import { corpusDir, sharedModelsDir as modelsDir } from '../test/helpers/models.js';
import { processMemoryKb, processTree } from '../test/helpers/process-tree.js';
import { startServerProcess } from '../test/helpers/server-process.js';
import { trainJourney } from './texts.js';

const RUNS = Math.max(1, Number.parseInt(process.env.BENCH_RUNS ?? '10', 10) || 10);
const CONCURRENCY = 4;
const CONCURRENT_REQUESTS = 12;
const PIPER = 'fake-piper-tones-en_US-22k-2spk';
const ZIPFORMER = 'sherpa-onnx-kws-zipformer-gigaspeech-3.3M-2024-01-01-mobile';
const SHARED_PACKS = [PIPER, ZIPFORMER, 'silero-vad-v5', 'fake-pyannote-segmentation-energy', 'handmade-fbank-stats-speaker-embedding'];
const STT_FILE = 'en/librispeech-1221-135766-0001.wav';

/** Six sentences of ordinary prose. */
const text = trainJourney.slice(0, 6).join(' ');

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const ms = (v: number) => `${v.toFixed(1)} ms`;

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

/** One request over a keep-alive node:http client; resolves at the first body byte and at the end. */
function request(
  base: URL,
  method: string,
  pathname: string,
  body: Buffer | string | undefined,
  contentType: string,
): Promise<{ status: number; firstByteMs: number; totalMs: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    let firstByteMs = -1;
    const req = http.request(
      { host: base.hostname, port: base.port, method, path: pathname, agent, headers: { authorization: `Bearer ${key}`, 'content-type': contentType } },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => {
          if (firstByteMs < 0) firstByteMs = performance.now() - start;
          parts.push(d);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, firstByteMs, totalMs: performance.now() - start, body: Buffer.concat(parts) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** RSS and PSS in MB of a process and all its descendants. */
function treeMemory(rootPid: number): { pids: number; rssMb: number; pssMb: number; perProcess: string[] } {
  const pids = processTree(rootPid);
  let rss = 0;
  let pss = 0;
  const perProcess: string[] = [];
  for (const pid of pids) {
    const kb = processMemoryKb(pid);
    let name = '';
    try {
      name = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(-2).join(' ').slice(0, 60);
    } catch {
      continue; // gone meanwhile
    }
    rss += kb.rss / 1024;
    pss += kb.pss / 1024;
    perProcess.push(`    pid ${pid}: RSS ${(kb.rss / 1024).toFixed(0)} MB, PSS ${(kb.pss / 1024).toFixed(0)} MB  (${name})`);
  }
  return { pids: pids.length, rssMb: rss, pssMb: pss, perProcess };
}

// ---- raw engines, in this process
const sherpa = loadSherpaOnnx();

async function rawSynthesis(): Promise<{ firstPieceMs: number[]; totalMs: number[] }> {
  const dir = path.join(modelsDir, PIPER);
  const tts = await sherpa.OfflineTts.createAsync({
    model: { vits: { model: path.join(dir, 'model.onnx'), tokens: path.join(dir, 'tokens.txt'), dataDir: '/usr/lib/x86_64-linux-gnu/espeak-ng-data' }, numThreads: 1, provider: 'cpu', debug: false },
    maxNumSentences: 1,
  });
  const firstPieceMs: number[] = [];
  const totalMs: number[] = [];
  for (let run = -1; run < RUNS; run++) {
    const start = performance.now();
    let first = -1;
    await tts.generateAsync({
      text,
      sid: 0,
      speed: 1,
      onProgress: () => {
        if (first < 0) first = performance.now() - start;
        return 1;
      },
    });
    if (run >= 0) {
      firstPieceMs.push(first);
      totalMs.push(performance.now() - start);
    }
  }
  return { firstPieceMs, totalMs };
}

function rawTranscription(samples: Float32Array): { totalMs: number[]; text: string } {
  const dir = path.join(modelsDir, ZIPFORMER);
  const recognizer = new sherpa.OnlineRecognizer({
    featConfig: { sampleRate: 16000, featureDim: 80 },
    modelConfig: {
      transducer: {
        encoder: path.join(dir, 'encoder-epoch-12-avg-2-chunk-16-left-64.int8.patched.onnx'),
        decoder: path.join(dir, 'decoder-epoch-12-avg-2-chunk-16-left-64.onnx'),
        joiner: path.join(dir, 'joiner-epoch-12-avg-2-chunk-16-left-64.int8.onnx'),
      },
      tokens: path.join(dir, 'tokens.txt'),
      numThreads: 1,
      provider: 'cpu',
      debug: 0,
    },
    decodingMethod: 'greedy_search',
    enableEndpoint: 0,
  });
  const totalMs: number[] = [];
  let textOut = '';
  for (let run = -1; run < RUNS; run++) {
    const start = performance.now();
    const stream = recognizer.createStream();
    stream.acceptWaveform({ samples, sampleRate: 16000 });
    stream.acceptWaveform({ samples: new Float32Array(Math.round(0.66 * 16000)), sampleRate: 16000 });
    stream.inputFinished();
    while (recognizer.isReady(stream)) recognizer.decode(stream);
    textOut = recognizer.getResult(stream).text;
    if (run >= 0) totalMs.push(performance.now() - start);
  }
  return { totalMs, text: textOut };
}

const wav = readFileSync(path.join(corpusDir, STT_FILE));
const decoded = await decodeAudio(wav, { contentType: 'audio/wav' });
if (decoded.sampleRate !== 16000) throw new Error(`${STT_FILE} is not 16 kHz`);
const audioSeconds = decoded.samples.length / 16000;

const rawTts = await rawSynthesis();
const rawStt = rawTranscription(decoded.samples);

const server = await startServerProcess(SHARED_PACKS, {}, { built: true });
const port = new URL(server.url);
const key = server.key;
try {
  const { voices } = JSON.parse((await request(port, 'GET', '/api/v1/tts-v2/get_voices', undefined, 'application/json')).body.toString()) as {
    voices: Array<{ voiceId: string }>;
  };
  const voiceId = voices.map((v) => v.voiceId).find((id) => id.startsWith(PIPER));
  if (!voiceId) throw new Error(`the server lists no ${PIPER} voice`);
  const ttsBody = JSON.stringify({ text, voice_id: voiceId, sample_rate: 22050, output_format: 'pcm' });

  const speech: number[] = [];
  const firstChunk: number[] = [];
  const stt: number[] = [];
  for (let run = -1; run < RUNS; run++) {
    const whole = await request(port, 'POST', '/api/v1/tts-v2/get_speech', ttsBody, 'application/json');
    if (whole.status !== 200) throw new Error(`get_speech answered ${whole.status}: ${whole.body.toString().slice(0, 200)}`);
    const sse = await request(port, 'POST', '/api/v1/tts-v2/stream', ttsBody, 'application/json');
    const t = await request(port, 'POST', '/api/v1/stt/get_text?language=en', wav, 'audio/wav');
    if (t.status !== 200) throw new Error(`get_text answered ${t.status}: ${t.body.toString().slice(0, 200)}`);
    if (run < 0) continue;
    speech.push(whole.totalMs);
    firstChunk.push(sse.firstByteMs);
    stt.push(t.totalMs);
  }

  // 4 clients, each sending the file again as soon as its last answer came back.
  let sent = 0;
  const concurrentStart = performance.now();
  const latencies: number[] = [];
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (sent < CONCURRENT_REQUESTS) {
        sent++;
        const r = await request(port, 'POST', '/api/v1/stt/get_text?language=en', wav, 'audio/wav');
        if (r.status !== 200) throw new Error(`concurrent get_text answered ${r.status}`);
        latencies.push(r.totalMs);
      }
    }),
  );
  const concurrentSeconds = (performance.now() - concurrentStart) / 1000;

  await new Promise((r) => setTimeout(r, 2000));
  const memory = treeMemory(server.child.pid!);

  console.log(`Parley inference bench: server in its own process, median of ${RUNS} runs after one warm-up\n`);
  console.log('Synthesis, Piper fixture, 6 sentences, pcm at 22.05 kHz');
  console.log(`  raw first piece        ${ms(median(rawTts.firstPieceMs))}`);
  console.log(`  raw whole text         ${ms(median(rawTts.totalMs))}`);
  console.log(`  SSE first chunk        ${ms(median(firstChunk))}   (${(median(firstChunk) / median(rawTts.firstPieceMs)).toFixed(2)}x raw first piece)`);
  console.log(`  get_speech             ${ms(median(speech))}   (${(median(speech) / median(rawTts.totalMs)).toFixed(2)}x raw)`);
  console.log(`\nTranscription, tiny zipformer, ${STT_FILE} (${audioSeconds.toFixed(1)} s)`);
  console.log(`  raw whole-file decode  ${ms(median(rawStt.totalMs))}`);
  console.log(`  get_text               ${ms(median(stt))}   (${(median(stt) / median(rawStt.totalMs)).toFixed(2)}x raw, RTF ${(median(stt) / 1000 / audioSeconds).toFixed(3)})`);
  console.log(
    `  ${CONCURRENCY} concurrent          ${CONCURRENT_REQUESTS} requests in ${concurrentSeconds.toFixed(2)} s: ` +
      `${((CONCURRENT_REQUESTS * audioSeconds) / concurrentSeconds).toFixed(1)} s of audio per second, latency p50 ${ms(median(latencies))}`,
  );
  console.log(`\nIdle memory after warm-up: ${memory.pids} process(es), RSS ${memory.rssMb.toFixed(0)} MB, PSS ${memory.pssMb.toFixed(0)} MB`);
  for (const line of memory.perProcess) console.log(line);
} finally {
  await server.stop();
  agent.destroy();
}
