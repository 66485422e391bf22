/**
 * Synthesis latency and overhead, engine vs. server. Prints numbers and ratios; asserts nothing.
 *
 *   npm run bench:tts              readable tables
 *   npm run bench:tts -- --json    one JSON summary on stdout
 *
 * Env: BENCH_RUNS (default 20) runs per measured cell; BENCH_LONG_RUNS (default BENCH_RUNS / 5)
 * full long-text HTTP runs (whole stream, get_speech: seconds each with mp3); PARLEY_TEST_MODELS_DIR (default
 * ../shared/models) holds the synthetic Piper fixture fake-piper-tones-en_US-22k-2spk, whose
 * figures measure sherpa's pipeline (phonemisation, ONNX session, streaming), not a real voice.
 *
 * 1. Raw engines: eSpeak NG and the sherpa fixture, called sentence by sentence as the service
 *    calls them (prepareText), no HTTP, no resampling, no encoding: time to the first piece of
 *    audio, to the end of the first sentence, and to the end.
 * 2. The real server in this process over real HTTP: /tts-v2/stream time to the first
 *    `event: chunk` and to the end, /tts-v2/get_speech total time; ratios to the raw engine.
 * 3. Peak RSS and heap used after.
 * 4. 4 concurrent long-text streams: time to first chunk and event-loop delay. The client runs in
 *    the same process as the server, so its SSE parsing counts in the event-loop figures too.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import http from 'node:http';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import { createEspeakNgEngine } from '../src/engines/server/espeak-ng-tts.js';
import { InferenceCore } from '../src/engines/inference/inference-core.js';
import { createSherpaTtsEngine } from '../src/engines/server/sherpa-tts.js';
import type { TtsEngine, Voice } from '../src/engines/types.js';
import type { ModelPack } from '../src/models/model-pack.js';
import { enginePackAs } from '../src/models/families/index.js';
import { startServer, type RunningServer } from '../src/server.js';
import { prepareText } from '../src/synthesis/text/prepare.js';
import { trainJourney } from './texts.js';

const { values: flags } = parseArgs({ options: { json: { type: 'boolean', default: false } } });
const RUNS = Math.max(1, Number.parseInt(process.env.BENCH_RUNS ?? '20', 10) || 20);
/** Full long-text runs (stream to the end, get_speech): each costs up to a few seconds. */
const LONG_RUNS = Math.max(1, Number.parseInt(process.env.BENCH_LONG_RUNS ?? '', 10) || Math.ceil(RUNS / 5));
/**
 * Pause before every measured run, raw engine and HTTP alike. A hung-up stream needs it for the
 * server's abort to land; and a pause changes timings by itself (eSpeak's first piece takes ~2 ms
 * longer after 25 ms idle than back to back), so every cell gets the same one.
 */
const SETTLE_MS = 25;
const CONCURRENCY = 4;
const CONCURRENT_ROUNDS = 3;
const ESPEAK_DATA_DIR = '/usr/lib/x86_64-linux-gnu/espeak-ng-data';
const FIXTURE_ID = 'fake-piper-tones-en_US-22k-2spk';
const ESPEAK_VOICE = 'espeak-en-us-female';
/** Event-loop delay sampling interval; the histogram records whole intervals, so it is subtracted. */
const ELD_RESOLUTION_MS = 1;

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const modelsDir = path.resolve(process.env.PARLEY_TEST_MODELS_DIR ?? path.join(repoRoot, '../shared/models'));
const fixtureDir = path.join(modelsDir, FIXTURE_ID);

const shortText = 'The quick brown fox jumps over the lazy dog while the farmer watches from the old wooden gate.';
const longText = trainJourney.join(' ');

type TextName = 'short' | 'long';
const texts: Record<TextName, string> = { short: shortText, long: longText };
/**
 * 'pcm' and 'mp3' at tts-v2's default 24 kHz. 'pcm@native' asks for the voice's own rate (22.05 kHz
 * for both voices here), so no resampling is done: the gap to the raw engine is then the server's
 * own overhead (HTTP, text preparation, encoding, SSE), without the signal processing that the
 * 24 kHz cells ask for on top of what the raw engine does.
 */
type Format = 'pcm' | 'pcm@native' | 'mp3';
const formats: Format[] = ['pcm', 'pcm@native', 'mp3'];
/** Native rate of both bench voices (eSpeak NG and the 22k fixture). */
const NATIVE_RATE = 22050;

// ---------------------------------------------------------------------------------------------
// Helpers

const sleep = (millis: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, millis));

const log = (line = ''): void => {
  if (!flags.json) console.log(line);
};

interface Stats {
  n: number;
  p50: number;
  p95: number;
  min: number;
  max: number;
  mean: number;
}

function stats(samples: number[]): Stats {
  const s = [...samples].sort((a, b) => a - b);
  const n = s.length;
  if (n === 0) return { n: 0, p50: NaN, p95: NaN, min: NaN, max: NaN, mean: NaN };
  const q = (p: number): number => {
    // Nearest rank: with 20 runs, p95 is the 19th value.
    const rank = Math.min(n, Math.max(1, Math.ceil(p * n)));
    return s[rank - 1]!;
  };
  const r2 = (x: number): number => Math.round(x * 100) / 100;
  return { n, p50: r2(q(0.5)), p95: r2(q(0.95)), min: r2(s[0]!), max: r2(s[n - 1]!), mean: r2(s.reduce((a, b) => a + b, 0) / n) };
}

const ms = (x: number): string => (Number.isFinite(x) ? (x >= 100 ? x.toFixed(0) : x.toFixed(1)) : '-');
const ratio = (x: number): string => (Number.isFinite(x) ? `${x.toFixed(2)}x` : '-');
const round = (x: number, digits = 2): number => (Number.isFinite(x) ? Number(x.toFixed(digits)) : NaN);

function table(headers: string[], rows: (string | number)[][]): void {
  const cells = [headers, ...rows.map((r) => r.map(String))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)));
  const line = (r: string[]): string => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  log(line(headers));
  log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of cells.slice(1)) log(line(r));
  log();
}

function eldSummary(h: IntervalHistogram): { maxMs: number; p99Ms: number; p50Ms: number; meanMs: number } {
  const f = (ns: number): number => round(Math.max(0, ns / 1e6 - ELD_RESOLUTION_MS), 2);
  return { maxMs: f(h.max), p99Ms: f(h.percentile(99)), p50Ms: f(h.percentile(50)), meanMs: f(h.mean) };
}

// ---------------------------------------------------------------------------------------------
// 1. Raw engines

interface RawResult {
  engine: string;
  voice: string;
  text: TextName;
  sentences: number;
  audioSeconds: number;
  firstPieceMs: Stats;
  /** The whole first sentence: what the first-chunk target compares against. */
  firstSentenceMs: Stats;
  totalMs: Stats;
  rtf: number;
}

async function rawEngine(engine: TtsEngine, voice: Voice, name: TextName): Promise<RawResult> {
  if (voice.sampleRate !== NATIVE_RATE) console.error(`bench:tts: ${voice.id} speaks at ${voice.sampleRate} Hz: its pcm@native cells resample`);
  const prepared = prepareText(texts[name], {
    language: 'en',
    allowedLanguages: ['en'],
    dicts: [],
    normalize: !engine.normalizesText,
  });
  const first: number[] = [];
  const firstSentence: number[] = [];
  const total: number[] = [];
  let samples = 0;
  const run = async (): Promise<void> => {
    samples = 0;
    const start = performance.now();
    let firstAt = NaN;
    for (const sentence of prepared.sentences) {
      for await (const piece of engine.synthesize(voice, sentence, { speed: 1, language: prepared.language })) {
        if (Number.isNaN(firstAt)) firstAt = performance.now() - start;
        samples += piece.length;
      }
      if (firstSentence.length === first.length) firstSentence.push(performance.now() - start);
    }
    first.push(firstAt);
    total.push(performance.now() - start);
  };
  await run(); // warm-up, not counted
  first.length = 0;
  firstSentence.length = 0;
  total.length = 0;
  for (let i = 0; i < RUNS; i++) {
    await sleep(SETTLE_MS);
    await run();
  }
  const audioSeconds = samples / voice.sampleRate;
  const totalStats = stats(total);
  return {
    engine: engine.name,
    voice: voice.id,
    text: name,
    sentences: prepared.sentences.length,
    audioSeconds: round(audioSeconds, 3),
    firstPieceMs: stats(first),
    firstSentenceMs: stats(firstSentence),
    totalMs: totalStats,
    rtf: totalStats.p50 / 1000 / audioSeconds,
  };
}

function fixturePack(): ModelPack {
  return {
    id: FIXTURE_ID,
    dir: fixtureDir,
    kind: 'tts-vits',
    files: { model: path.join(fixtureDir, 'model.onnx'), tokens: path.join(fixtureDir, 'tokens.txt') },
    languages: ['en'],
    voices: [],
    metadata: { voice: 'en-us' },
  };
}

// ---------------------------------------------------------------------------------------------
// 2. HTTP

interface Client {
  url: string;
  key: string;
}

/**
 * The client is node:http with a keep-alive agent, not fetch: client and server share this
 * process, and undici's fetch costs the shared event loop more (GET get_voices first byte p50
 * 0.60 ms with fetch, 0.35 ms with node:http, measured here), which would be counted as server
 * overhead.
 */
const agent = new http.Agent({ keepAlive: true });

interface ClientResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: AsyncIterable<Buffer>;
}

function request(client: Client, method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<ClientResponse> {
  const url = new URL(path, client.url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method, agent, signal, headers: { authorization: `Bearer ${client.key}`, 'content-type': 'application/json' } },
      (res) => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: res }),
    );
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

function post(client: Client, route: string, body: unknown, signal?: AbortSignal): Promise<ClientResponse> {
  return request(client, 'POST', `/api/v1/tts-v2/${route}`, body, signal);
}

async function readAll(body: AsyncIterable<Buffer>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of body) parts.push(part);
  return Buffer.concat(parts);
}

/** p50 of GET `path` to its last byte: the HTTP round trip that every request pays. */
async function httpFloor(client: Client, path: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 20 + RUNS * 5; i++) {
    const start = performance.now();
    const res = await request(client, 'GET', path);
    await readAll(res.body);
    if (i >= 20) times.push(performance.now() - start);
  }
  return stats(times).p50;
}

interface StreamTiming {
  firstChunkMs: number;
  totalMs: number;
  chunks: number;
  audioSeconds: number;
}

/**
 * One /stream request; times the first `event: chunk` and the end of the body. With
 * `stopAfterFirst` the client hangs up after the first chunk (the server aborts the synthesis)
 * and totalMs is NaN.
 */
async function streamOnce(client: Client, body: object, stopAfterFirst = false): Promise<StreamTiming> {
  const abort = new AbortController();
  const start = performance.now();
  const res = await post(client, 'stream', body, abort.signal);
  if (res.status !== 200) throw new Error(`stream: HTTP ${res.status}: ${(await readAll(res.body)).toString()}`);
  const decoder = new TextDecoder();
  let buffer = '';
  let firstChunkMs = NaN;
  let chunks = 0;
  let audioSeconds = NaN;
  try {
    for await (const bytes of res.body) {
      buffer += decoder.decode(bytes, { stream: true });
      // Events are cut out by position; the buffer is trimmed once per network read.
      let pos = 0;
      let end: number;
      while ((end = buffer.indexOf('\n\n', pos)) >= 0) {
        const event = buffer.slice(pos, end);
        pos = end + 2;
        const newline = event.indexOf('\n');
        const type = event.startsWith('event: ') ? event.slice(7, newline < 0 ? undefined : newline) : undefined;
        if (type === 'chunk') {
          if (chunks++ === 0) firstChunkMs = performance.now() - start;
          if (stopAfterFirst) {
            abort.abort();
            return { firstChunkMs, totalMs: NaN, chunks, audioSeconds };
          }
        } else if (type === 'complete') {
          const data = /^data: (.*)$/m.exec(event)?.[1];
          audioSeconds = data ? (JSON.parse(data) as { audio_seconds: number }).audio_seconds : NaN;
        } else if (type === 'error') {
          throw new Error(`stream: error event: ${event}`);
        }
      }
      buffer = buffer.slice(pos);
    }
  } catch (err) {
    if (!abort.signal.aborted) throw err;
  }
  return { firstChunkMs, totalMs: performance.now() - start, chunks, audioSeconds };
}

async function getSpeechOnce(client: Client, body: object): Promise<{ totalMs: number; bytes: number; audioSeconds: number }> {
  const start = performance.now();
  const res = await post(client, 'get_speech', body);
  const bytes = (await readAll(res.body)).byteLength;
  if (res.status !== 200) throw new Error(`get_speech: HTTP ${res.status}`);
  return { totalMs: performance.now() - start, bytes, audioSeconds: Number(res.headers['x-audio-duration']) };
}

interface HttpResult {
  voice: string;
  text: TextName;
  format: Format;
  stream: { firstChunkMs: Stats; totalMs: Stats; chunks: number; audioSeconds: number; eventLoopDelayMaxMs: number };
  getSpeech: { totalMs: Stats; bytes: number; audioSeconds: number; eventLoopDelayMaxMs: number };
}

async function withEld<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const h = monitorEventLoopDelay({ resolution: ELD_RESOLUTION_MS });
  h.enable();
  const result = await fn();
  h.disable();
  return [result, eldSummary(h).maxMs];
}

async function httpCell(client: Client, voice: string, name: TextName, format: Format): Promise<HttpResult> {
  const body =
    format === 'pcm@native'
      ? { text: texts[name], voice_id: voice, output_format: 'pcm', sample_rate: NATIVE_RATE, language: 'en' }
      : { text: texts[name], voice_id: voice, output_format: format, language: 'en' };
  if (name === 'short') {
    // Warm-up per voice and format (encoder/resampler WASM, JIT); the long cells come after.
    await streamOnce(client, body);
    await getSpeechOnce(client, body);
  }
  const long = name === 'long';
  const first: number[] = [];
  const total: number[] = [];
  let full: StreamTiming | undefined;
  const [, streamEld] = await withEld(async () => {
    // Long text: the client hangs up after the first chunk, then a few full reads give the total.
    for (let i = 0; i < RUNS; i++) {
      await sleep(SETTLE_MS);
      const r = await streamOnce(client, body, long);
      first.push(r.firstChunkMs);
      if (!long) (total.push(r.totalMs), (full = r));
    }
    for (let i = 0; long && i < LONG_RUNS; i++) {
      await sleep(SETTLE_MS);
      full = await streamOnce(client, body);
      total.push(full.totalMs);
    }
  });
  const whole: number[] = [];
  let file = { totalMs: NaN, bytes: 0, audioSeconds: NaN };
  const [, speechEld] = await withEld(async () => {
    for (let i = 0; i < (long ? LONG_RUNS : RUNS); i++) {
      await sleep(SETTLE_MS);
      file = await getSpeechOnce(client, body);
      whole.push(file.totalMs);
    }
  });
  return {
    voice,
    text: name,
    format,
    stream: {
      firstChunkMs: stats(first),
      totalMs: stats(total),
      chunks: full!.chunks,
      audioSeconds: full!.audioSeconds,
      eventLoopDelayMaxMs: streamEld,
    },
    getSpeech: { totalMs: stats(whole), bytes: file.bytes, audioSeconds: file.audioSeconds, eventLoopDelayMaxMs: speechEld },
  };
}

interface ConcurrencyResult {
  voice: string;
  streams: number;
  rounds: number;
  firstChunkMs: Stats;
  totalMs: Stats;
  wallMs: Stats;
  singleFirstChunkP50Ms: number;
  eventLoopDelay: ReturnType<typeof eldSummary>;
}

async function concurrency(client: Client, voice: string, singleFirstChunkP50Ms: number): Promise<ConcurrencyResult> {
  const body = { text: longText, voice_id: voice, output_format: 'pcm', language: 'en' };
  const first: number[] = [];
  const total: number[] = [];
  const wall: number[] = [];
  const eld = monitorEventLoopDelay({ resolution: ELD_RESOLUTION_MS });
  eld.enable();
  for (let round = 0; round < CONCURRENT_ROUNDS; round++) {
    const start = performance.now();
    const results = await Promise.all(Array.from({ length: CONCURRENCY }, () => streamOnce(client, body)));
    wall.push(performance.now() - start);
    for (const r of results) {
      first.push(r.firstChunkMs);
      total.push(r.totalMs);
    }
  }
  eld.disable();
  return {
    voice,
    streams: CONCURRENCY,
    rounds: CONCURRENT_ROUNDS,
    firstChunkMs: stats(first),
    totalMs: stats(total),
    wallMs: stats(wall),
    singleFirstChunkP50Ms: singleFirstChunkP50Ms,
    eventLoopDelay: eldSummary(eld),
  };
}

// ---------------------------------------------------------------------------------------------
// Main

const benchStart = performance.now();
const loadAtStart = loadavg()[0]!;
const haveFixture = existsSync(path.join(fixtureDir, 'model.onnx'));
if (!haveFixture) {
  console.error(`bench:tts: fixture ${FIXTURE_ID} not found in ${modelsDir} (set PARLEY_TEST_MODELS_DIR); sherpa rows skipped`);
}

log(`Parley TTS bench — ${RUNS} runs per cell (BENCH_RUNS), ${LONG_RUNS} full long-text HTTP runs (BENCH_LONG_RUNS), Node ${process.version}, ${availableParallelism()} CPU(s), load average ${loadavg()[0]!.toFixed(2)}`);
log(`short text: ${shortText.length} chars; long text: ${longText.length} chars`);
log();

// -- 1. Raw engines. Same settings as the server's defaults: 1 eSpeak worker, 1 ONNX thread.
const defaults = loadConfig({}, {});
const raw: RawResult[] = [];
{
  const espeak = await createEspeakNgEngine({ workers: defaults.synthesis.espeakWorkers });
  const voice = espeak.listVoices().find((v) => v.id === ESPEAK_VOICE)!;
  for (const name of ['short', 'long'] as const) raw.push(await rawEngine(espeak, voice, name));
  await espeak.close();
}
if (haveFixture) {
  // In this process, as the raw baseline: the server runs the same core in an inference process.
  const core = new InferenceCore({ workers: 1 });
  const sherpa = await createSherpaTtsEngine(core, [enginePackAs('tts', fixturePack(), { espeakDataDir: ESPEAK_DATA_DIR, numThreads: defaults.synthesis.numThreads })]);
  const voice = sherpa.listVoices()[0]!;
  for (const name of ['short', 'long'] as const) raw.push(await rawEngine(sherpa, voice, name));
  await sherpa.close();
  await core.close();
}

log('1. Raw engine (engine.synthesize over prepareText sentences; no resampling/encoding/HTTP)');
table(
  ['voice', 'text', 'sent', 'audio s', 'first piece p50', 'first piece p95', 'first sentence p50', 'total p50', 'total p95', 'RTF'],
  raw.map((r) => [
    r.voice,
    r.text,
    r.sentences,
    r.audioSeconds.toFixed(2),
    ms(r.firstPieceMs.p50),
    ms(r.firstPieceMs.p95),
    ms(r.firstSentenceMs.p50),
    ms(r.totalMs.p50),
    ms(r.totalMs.p95),
    r.rtf.toFixed(4),
  ]),
);

// -- 2. The server.
const dataDir = mkdtempSync(path.join(tmpdir(), 'parley-bench-'));
const serverModels = path.join(dataDir, 'models');
mkdirSync(serverModels);
if (haveFixture) symlinkSync(fixtureDir, path.join(serverModels, FIXTURE_ID), 'dir');
const config = loadConfig(
  {},
  {
    port: 0,
    host: '127.0.0.1',
    dataDir,
    modelsDir: serverModels,
    logLevel: 'silent',
    // The bench sends far more than the default burst of 60 synthesis requests.
    rateLimits: {
      synthesis: { perMinute: 0, burst: 1 },
      transcription: { perMinute: 0, burst: 1 },
      management: { perMinute: 0, burst: 1 },
    },
    synthesis: { ...defaults.synthesis, espeakDataDir: ESPEAK_DATA_DIR },
  },
);
const serverStart = performance.now();
let server: RunningServer | undefined;
try {
  server = await startServer(config, { logger: false, engines: true });
  const startupMs = performance.now() - serverStart;
  const { key } = await server.storage.apiKeys.create({ name: 'bench' });
  const client: Client = { url: server.url, key };

  const voicesRes = await request(client, 'GET', '/api/v1/tts-v2/get_voices');
  const voiceIds = (JSON.parse((await readAll(voicesRes.body)).toString()) as { voices: { voiceId: string }[] }).voices.map((v) => v.voiceId);
  const floor = { healthz: await httpFloor(client, '/healthz'), getVoices: await httpFloor(client, '/api/v1/tts-v2/get_voices') };
  const fixtureVoice = voiceIds.find((id) => id.startsWith(FIXTURE_ID));
  if (haveFixture && !fixtureVoice) console.error(`bench:tts: the server lists no ${FIXTURE_ID} voice (pack skipped?)`);
  const serverVoices = [ESPEAK_VOICE, ...(fixtureVoice ? [fixtureVoice] : [])];

  const httpEld = monitorEventLoopDelay({ resolution: ELD_RESOLUTION_MS });
  httpEld.enable();
  const http: HttpResult[] = [];
  for (const voice of serverVoices) {
    for (const name of ['short', 'long'] as const) for (const format of formats) http.push(await httpCell(client, voice, name, format));
  }
  httpEld.disable();

  const rawFor = (h: { voice: string; text: TextName }): RawResult | undefined =>
    raw.find((r) => r.text === h.text && (r.voice === h.voice || (h.voice.startsWith(FIXTURE_ID) && r.voice.startsWith(FIXTURE_ID))));

  log(`2. Through the server over HTTP (started in ${ms(startupMs)} ms; tts-v2, 24 kHz output unless pcm@native (${NATIVE_RATE} Hz, no resampling), 1 request at a time)`);
  table(
    ['voice', 'text', 'fmt', 'TTFC p50', 'TTFC p95', 'stream p50', 'get_speech p50', 'get_speech p95', 'TTFC/raw sentence', 'TTFC/raw piece', 'get_speech/raw total', 'ELD max stream', 'ELD max get_speech'],
    http.map((h) => {
      const r = rawFor(h);
      return [
        h.voice,
        h.text,
        h.format,
        ms(h.stream.firstChunkMs.p50),
        ms(h.stream.firstChunkMs.p95),
        ms(h.stream.totalMs.p50),
        ms(h.getSpeech.totalMs.p50),
        ms(h.getSpeech.totalMs.p95),
        ratio(r ? h.stream.firstChunkMs.p50 / r.firstSentenceMs.p50 : NaN),
        ratio(r ? h.stream.firstChunkMs.p50 / r.firstPieceMs.p50 : NaN),
        ratio(r ? h.getSpeech.totalMs.p50 / r.totalMs.p50 : NaN),
        ms(h.stream.eventLoopDelayMaxMs),
        ms(h.getSpeech.eventLoopDelayMaxMs),
      ];
    }),
  );
  log('   TTFC = request sent → first `event: chunk` parsed (over BENCH_RUNS; long text: client hangs up after it).');
  log('   stream/get_speech = whole response (long text: over BENCH_LONG_RUNS). Ratios are p50 / raw engine p50:');
  log('   "raw sentence" = the raw engine finishing the first sentence (the first-chunk target of issue 3),');
  log('   "raw piece" = its first piece of audio (eSpeak: the first 0.1 s; the server streams from it, so it can beat the sentence).');
  log('   get_speech pcm returns a WAV file (add_wav_header defaults to true). ELD = worst event-loop delay in ms.');
  log(`   HTTP floor, same client: GET /healthz ${ms(floor.healthz)} ms, GET get_voices (auth, JSON) ${ms(floor.getVoices)} ms, p50 to the last byte.`);
  log();

  // Real-time factor end to end (get_speech p50 / audio seconds), next to the raw engine's.
  log('   Real-time factor (synthesis time / audio seconds), long text');
  table(
    ['voice', 'raw engine', 'get_speech pcm', 'get_speech pcm@native', 'get_speech mp3'],
    serverVoices.map((voice) => {
      const r = rawFor({ voice, text: 'long' });
      const g = (f: Format): string => {
        const h = http.find((x) => x.voice === voice && x.text === 'long' && x.format === f);
        return h ? (h.getSpeech.totalMs.p50 / 1000 / h.getSpeech.audioSeconds).toFixed(4) : '-';
      };
      return [voice, r ? r.rtf.toFixed(4) : '-', g('pcm'), g('pcm@native'), g('mp3')];
    }),
  );

  // -- 4. Concurrency.
  const conc: ConcurrencyResult[] = [];
  for (const voice of serverVoices) {
    const single = http.find((h) => h.voice === voice && h.text === 'long' && h.format === 'pcm')!;
    conc.push(await concurrency(client, voice, single.stream.firstChunkMs.p50));
  }
  const httpEldSummary = eldSummary(httpEld);
  log(`4. Concurrency: ${CONCURRENCY} simultaneous long-text pcm streams × ${CONCURRENT_ROUNDS} rounds`);
  table(
    ['voice', 'TTFC p50', 'TTFC max', 'vs 1 stream', 'stream p50', 'round wall p50', 'ELD max', 'ELD p99'],
    conc.map((c) => [
      c.voice,
      ms(c.firstChunkMs.p50),
      ms(c.firstChunkMs.max),
      ratio(c.firstChunkMs.p50 / c.singleFirstChunkP50Ms),
      ms(c.totalMs.p50),
      ms(c.wallMs.p50),
      ms(c.eventLoopDelay.maxMs),
      ms(c.eventLoopDelay.p99Ms),
    ]),
  );
  log(
    `   Event-loop delay (ms beyond the ${ELD_RESOLUTION_MS} ms sampling interval; client and server share the loop). ` +
      `Sequential HTTP phase: max ${ms(httpEldSummary.maxMs)}, p99 ${ms(httpEldSummary.p99Ms)}.`,
  );
  log();

  // -- 3. Memory.
  const heapUsedMb = process.memoryUsage().heapUsed / 2 ** 20;
  const rssNowMb = process.memoryUsage().rss / 2 ** 20;
  const peakRssMb = process.resourceUsage().maxRSS / 1024;
  log('3. Memory (whole run: raw engines, server, all requests)');
  table(['peak RSS MB', 'RSS now MB', 'heap used after MB'], [[peakRssMb.toFixed(0), rssNowMb.toFixed(0), heapUsedMb.toFixed(1)]]);

  const wallS = (performance.now() - benchStart) / 1000;
  log(`Bench wall time ${wallS.toFixed(1)} s; load average at start ${loadAtStart.toFixed(2)}, at end ${loadavg()[0]!.toFixed(2)} (other processes skew every figure).`);

  if (flags.json) {
    const summary = {
      runs: RUNS,
      node: process.version,
      cpus: availableParallelism(),
      loadAverage: { start: round(loadAtStart, 2), end: round(loadavg()[0]!, 2) },
      texts: { short: { chars: shortText.length }, long: { chars: longText.length } },
      raw,
      server: {
        startupMs: round(startupMs, 1),
        httpFloorMs: floor,
        http: http.map((h) => {
          const r = rawFor(h);
          return {
            ...h,
            ratios: {
              firstChunkToRawFirstSentence: round(r ? h.stream.firstChunkMs.p50 / r.firstSentenceMs.p50 : NaN, 3),
              firstChunkToRawFirstPiece: round(r ? h.stream.firstChunkMs.p50 / r.firstPieceMs.p50 : NaN, 3),
              getSpeechToRawTotal: round(r ? h.getSpeech.totalMs.p50 / r.totalMs.p50 : NaN, 3),
            },
            getSpeechRtf: round(h.getSpeech.totalMs.p50 / 1000 / h.getSpeech.audioSeconds, 5),
          };
        }),
        sequentialEventLoopDelay: httpEldSummary,
        concurrency: conc,
      },
      memory: { peakRssMb: round(peakRssMb, 1), rssAfterMb: round(rssNowMb, 1), heapUsedAfterMb: round(heapUsedMb, 1) },
      wallSeconds: round(wallS, 1),
    };
    console.log(JSON.stringify(summary, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v), 2));
  }
} finally {
  await server?.close();
  rmSync(dataDir, { recursive: true, force: true });
}
