/**
 * Throughput and fairness at the machine's limit: `npm run bench:throughput [-- --quick] [-- --sse-only]`.
 * Prints each measured figure beside the limit the measured CPU cost allows, as a ratio; asserts nothing.
 *
 * The limits come from CPU time, not wall time, measured in the same run:
 * - engine CPU per request: the built-in eSpeak NG voice called in this process as the synthesis
 *   use case calls it (sentence by sentence, no resampling, no encoding), process CPU time
 *   (every thread: the eSpeak worker included) over RUNS requests;
 * - server CPU per request: `parley serve` in its own process, one client sending RUNS requests
 *   one after another; CPU time (utime + stime from /proc) of the server process and every
 *   process under it (inference children), all threads; the main thread's share beside it;
 * - throughput limit = cores ÷ server CPU seconds per request;
 * - first-chunk limit at c streams = c × the engine's CPU for the text's first sentence (the
 *   server's first piece) ÷ cores: the time c first pieces take when every core works on them.
 *
 * Loads (all from loopback; each load stops by itself). The request clients run in this process at
 * the lowest CPU priority, niced after the servers have been spawned so the servers keep theirs.
 * The SSE readers run in a child process forked before that, at normal priority, like a player
 * that must read its audio as it comes: at the lowest priority they starved behind the saturated
 * server, fell behind their sockets and counted their own delay as streams run dry (38 of 256 at
 * nice 19, none at nice 0). Loads run in the order listed, the formats first.
 * 1. get_speech (tts-v2, 24 kHz WAV, three sentences ≈ 15 s of audio): server CPU ÷ engine CPU;
 *    requests/s with 1, 16 and 64 closed-loop clients, ÷ the limit and ÷ one client's rate;
 *    16 clients on a server started under `taskset -c 0` (1 core) vs `taskset -c 0,1` (2 cores).
 * 2. SSE /tts-v2/stream of the same text: server CPU and main-thread CPU per stream (one at a
 *    time), beside what base64 of its chunks costs alone (measured here); then 16 (twice: with
 *    `--sse-only` the first is the server's first burst, which costs more while V8 recompiles
 *    eSpeak for text new to a worker; otherwise the get_speech loads came first and the two
 *    show the spread between runs), 64 and 256 concurrent streams, each read to its end: first-chunk p95 ÷ its limit, and the
 *    streams that ran dry. A player starts playing
 *    PLAYBACK_BUFFER_MS after its first chunk; a stream runs dry when a chunk arrives after the
 *    player has played all the audio received before it.
 * 3. Each output format (tts-v2: pcm, wav, mp3, mulaw; OpenAI /v1/audio/speech: opus, flac, aac):
 *    on a server just started (measured first, before the other loads: a server left idle for
 *    minutes runs its next request slower, as V8 drops code it has not run), after one warm-up
 *    pcm request (which compiles eSpeak and the resampler), the format's first request ÷ its tenth.
 * 4. Transcription (POST /api/v1/stt/get_text, a 16.7 s corpus recording, shared Silero VAD and
 *    streaming zipformer): server CPU per request, throughput with 4 and 16 clients ÷ its limit;
 *    WebSocket streaming transcription, 32 streams of an 11 s recording at real-time pace in
 *    100 ms frames: partial latency p50/p95 (from sending the frame holding a partial's last
 *    audio to receiving the partial).
 *
 * The machine's other load changes every figure: the first lines print the load average.
 * Env: PARLEY_TEST_MODELS_DIR, PARLEY_TEST_CORPUS_DIR (default ../shared/...).
 */
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism, loadavg, setPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { WebSocket } from 'ws';
import { encodeInt16 } from '../src/audio/encode.js';
import { parseWav } from '../src/audio/wav.js';
import { createEspeakNgEngine } from '../src/engines/server/espeak-ng-tts.js';
import { prepareText } from '../src/synthesis/text/prepare.js';
import { corpusFile, REAL_TEST_MODELS } from '../test/helpers/models.js';
import { startServerProcess, type ServerProcess } from '../test/helpers/server-process.js';
import { stats } from './stats.js';
import { trainJourney } from './texts.js';

const { values: flags } = parseArgs({
  options: { quick: { type: 'boolean', default: false }, 'sse-only': { type: 'boolean', default: false }, 'sse-reader': { type: 'boolean', default: false } },
});
const QUICK = flags.quick;
/** Only the SSE loads (and the engine figures their limits need): a quicker run for work on streaming. */
const SSE_ONLY = flags['sse-only'];
/** This process is the SSE readers' child: it runs the SSE loads it is sent, then leaves. */
const SSE_READER = flags['sse-reader'];
/** Requests measured one after another for CPU per request (and the engine's runs). */
const RUNS = QUICK ? 10 : 30;
/** Seconds each throughput cell counts, after RAMP_SECONDS uncounted. */
const LOAD_SECONDS = QUICK ? 3 : 10;
const RAMP_SECONDS = QUICK ? 1 : 2;
/** 16 twice: with --sse-only the server's first burst and a later one; after the get_speech loads, the spread between two runs. */
const SSE_STREAMS = QUICK ? [16, 16, 64] : [16, 16, 64, 256];
const PLAYBACK_BUFFER_MS = 200;
const VOICE = 'espeak-en-us-female';
const TEXT = trainJourney.slice(0, 3).join(' ');
const RATE = 24_000;
const STT_FILE = 'en/librispeech-1221-135766-0001.wav';
const STT_STREAM_FILE = 'en/jfk-inaugural-1961.wav';
const STT_STREAMS = QUICK ? 8 : 32;
const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

// ---------------------------------------------------------------------------------------------
// Figures

const fixed = (v: number, digits = 1) => (Number.isFinite(v) ? v.toFixed(digits) : 'n/a');
const ratio = (v: number) => (Number.isFinite(v) ? `${v.toFixed(2)}×` : 'n/a');
const line = (label: string, value: string, beside = '') => console.log(`  ${label.padEnd(52)} ${value.padStart(14)}  ${beside}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// Servers in their own processes, their CPU time read from /proc

interface Server extends ServerProcess {
  /** CPUs the server may use. */
  cores: number;
}

/** utime + stime (seconds) of `pid`, all its threads, and every live process under it. */
function treeCpuSeconds(pid: number): number {
  const parents = new Map<number, number>();
  const ticks = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const [p, t] = statOf(`/proc/${entry}/stat`);
      parents.set(Number(entry), p);
      ticks.set(Number(entry), t);
    } catch {
      // gone meanwhile
    }
  }
  let total = 0;
  const under = (root: number): void => {
    total += ticks.get(root) ?? 0;
    for (const [child, parent] of parents) if (parent === root) under(child);
  };
  under(pid);
  return total / CLOCK_TICKS;
}

/** CPU seconds of the process's main thread alone. */
function mainThreadCpuSeconds(pid: number): number {
  return statOf(`/proc/${pid}/task/${pid}/stat`)[1] / CLOCK_TICKS;
}

/** [parent pid, utime + stime ticks] of one /proc stat file (the command name may hold spaces). */
function statOf(file: string): [number, number] {
  const text = readFileSync(file, 'utf8');
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // Fields after the name, from state (3rd field of the file): ppid is the 4th, utime the 14th, stime the 15th.
  return [Number(fields[1]), Number(fields[11]) + Number(fields[12])];
}

/** The loads here are the machine's limit, not an abusive client: admission and per-address caps off. */
const UNLIMITED = {
  PARLEY_ADMISSION__SYNTHESIS__MAX_IN_FLIGHT: '0',
  PARLEY_ADMISSION__TRANSCRIPTION__MAX_IN_FLIGHT: '0',
  PARLEY_HTTP__MAX_CONNECTIONS_PER_ADDRESS: '2000',
  PARLEY_HTTP__MAX_CONNECTIONS: '4000',
  PARLEY_REALTIME__MAX_SOCKETS_PER_ACCOUNT: '500',
  PARLEY_TRANSCRIPTION__QUEUE_SIZE: '256',
  PARLEY_INFERENCE__MAX_WAITING: '512',
};

async function startServer(options: { cpus?: string; packs?: string[] } = {}): Promise<Server> {
  const server = await startServerProcess(options.packs ?? [], UNLIMITED, { cpus: options.cpus });
  return { ...server, cores: options.cpus ? options.cpus.split(',').length : availableParallelism() };
}

/** What the SSE loads need of a server; a plain object, so it can be sent to the readers' child. */
interface SseTarget {
  url: string;
  key: string;
  cores: number;
  pid: number;
}

const sseTarget = (server: Server): SseTarget => ({ url: server.url, key: server.key, cores: server.cores, pid: server.child.pid! });

const auth = (server: { key: string }) => ({ authorization: `Bearer ${server.key}` });

// ---------------------------------------------------------------------------------------------
// Requests

async function getSpeech(server: Server, format = 'wav'): Promise<number> {
  const res = await fetch(`${server.url}/api/v1/tts-v2/get_speech`, {
    method: 'POST',
    headers: { ...auth(server), 'content-type': 'application/json' },
    body: JSON.stringify({ text: TEXT, voice_id: VOICE, sample_rate: RATE, output_format: format }),
  });
  const bytes = (await res.arrayBuffer()).byteLength;
  if (res.status !== 200) throw new Error(`get_speech: status ${res.status}`);
  return bytes;
}

async function openAiSpeech(server: Server, format: string): Promise<number> {
  const res = await fetch(`${server.url}/v1/audio/speech`, {
    method: 'POST',
    headers: { ...auth(server), 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'tts-1', voice: 'alloy', input: TEXT, response_format: format }),
  });
  const bytes = (await res.arrayBuffer()).byteLength;
  if (res.status !== 200) throw new Error(`/v1/audio/speech ${format}: status ${res.status}`);
  return bytes;
}

async function transcribe(server: Server, wav: Uint8Array<ArrayBuffer>): Promise<void> {
  const res = await fetch(`${server.url}/api/v1/stt/get_text`, { method: 'POST', headers: { ...auth(server), 'content-type': 'audio/wav' }, body: wav });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`get_text: status ${res.status}`);
}

/** CPU seconds of the process tree of the server `pid` per request, and its main thread's share, over `runs` requests one after another. */
async function serverCpuPerRequest(pid: number, runs: number, request: () => Promise<unknown>): Promise<{ cpu: number; main: number; wall: number }> {
  const cpu0 = treeCpuSeconds(pid);
  const main0 = mainThreadCpuSeconds(pid);
  const t0 = performance.now();
  for (let i = 0; i < runs; i++) await request();
  const wall = (performance.now() - t0) / 1000 / runs;
  return { cpu: (treeCpuSeconds(pid) - cpu0) / runs, main: (mainThreadCpuSeconds(pid) - main0) / runs, wall };
}

/**
 * Completed requests per second of `clients` closed-loop clients, counted over LOAD_SECONDS once
 * every client has had an answer and RAMP_SECONDS have passed (with many clients one answer takes
 * many seconds: counting from the start would count the ramp).
 */
async function throughput(clients: number, request: () => Promise<unknown>): Promise<{ rate: number; failed: number }> {
  const rampEnd = performance.now() + RAMP_SECONDS * 1000;
  let answered = 0;
  let from = Infinity;
  let end = Infinity;
  let done = 0;
  let failed = 0;
  const steady = () => {
    if (answered === clients && from === Infinity) {
      from = Math.max(rampEnd, performance.now());
      end = from + LOAD_SECONDS * 1000;
    }
  };
  await Promise.all(
    Array.from({ length: clients }, async () => {
      let first = true;
      while (performance.now() < end) {
        try {
          await request();
          const now = performance.now();
          if (now >= from && now <= end) done++;
        } catch {
          failed++;
        }
        if (first) {
          first = false;
          answered++;
          steady();
        }
      }
    }),
  );
  await sleep(500);
  return { rate: done / LOAD_SECONDS, failed };
}

interface StreamRun {
  firstMs: number;
  dry: boolean;
  audioSeconds: number;
}

/** One SSE stream read to its end: time to the first chunk, and whether a player fed by it would have run dry. */
async function sseStream(server: SseTarget): Promise<StreamRun> {
  const start = performance.now();
  const res = await fetch(`${server.url}/api/v1/tts-v2/stream`, {
    method: 'POST',
    headers: { ...auth(server), 'content-type': 'application/json' },
    body: JSON.stringify({ voice_id: VOICE, text: TEXT, sample_rate: RATE }),
  });
  if (res.status !== 200) throw new Error(`SSE status ${res.status}: ${await res.text()}`);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let firstAt = NaN;
  let audioSeconds = 0;
  let dry = false;
  const onChunk = (data: string) => {
    const now = performance.now();
    const b64 = data.startsWith('{') ? (JSON.parse(data) as { audio: string }).audio : data;
    const seconds = Buffer.byteLength(b64, 'base64') / 2 / RATE;
    if (Number.isNaN(firstAt)) firstAt = now;
    // Played so far when this chunk arrives, against what had arrived before it.
    else if ((now - firstAt - PLAYBACK_BUFFER_MS) / 1000 > audioSeconds) dry = true;
    audioSeconds += seconds;
  };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let at: number;
    while ((at = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, at);
      buffer = buffer.slice(at + 2);
      if (!block.includes('event: chunk')) continue;
      const data = block.split('\n').find((l) => l.startsWith('data:'));
      if (data) onChunk(data.slice(5).trim());
    }
  }
  return { firstMs: firstAt - start, dry, audioSeconds };
}

interface SttRun {
  partialMs: number[];
  errors: string[];
}

/** Streams the recording at real-time pace in 100 ms frames, then close_stream; partial latencies. */
function sttStream(server: Server, pcm: Uint8Array, startDelayMs: number): Promise<SttRun> {
  const frameBytes = 3200;
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${server.url.replace('http', 'ws')}/api/v1/stt/get_text`, { headers: auth(server) });
    const sentAt: number[] = [];
    const run: SttRun = { partialMs: [], errors: [] };
    ws.on('open', async () => {
      await sleep(startDelayMs);
      const t0 = performance.now();
      for (let i = 0, at = 0; at < pcm.length; i++, at += frameBytes) {
        const wait = t0 + i * 100 - performance.now();
        if (wait > 0) await sleep(wait);
        ws.send(pcm.subarray(at, at + frameBytes));
        sentAt.push(performance.now());
      }
      ws.send(JSON.stringify({ type: 'close_stream' }));
    });
    ws.on('message', (data) => {
      const now = performance.now();
      const m = JSON.parse(data.toString());
      if (m.type === 'error') run.errors.push(m.message);
      if (m.type !== 'transcription' || m.is_final || m.is_last) return;
      const frame = Math.min(sentAt.length - 1, Math.max(0, Math.ceil(m.end * 10) - 1));
      if (sentAt[frame] !== undefined) run.partialMs.push(now - sentAt[frame]!);
    });
    ws.on('close', () => resolve(run));
    ws.on('error', reject);
  });
}

// ---------------------------------------------------------------------------------------------
// The engine alone

async function engineAlone(): Promise<{ perRequest: number; firstSentence: number; wall: number }> {
  const engine = await createEspeakNgEngine({ workers: 1 });
  const voice = engine.listVoices().find((v) => v.id === VOICE)!;
  const { sentences, language } = prepareText(TEXT, { language: 'en', allowedLanguages: ['en'], dicts: [], normalize: !engine.normalizesText });
  const speak = async (sentence: string) => {
    for await (const piece of engine.synthesize(voice, sentence, { speed: 1, language })) void piece;
  };
  try {
    // eSpeak's WASM is compiled lazily: its first runs are slower.
    for (let i = 0; i < 3; i++) for (const s of sentences) await speak(s);
    let cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < RUNS; i++) for (const s of sentences) await speak(s);
    const wall = (performance.now() - t0) / 1000 / RUNS;
    let used = process.cpuUsage(cpu0);
    const perRequest = (used.user + used.system) / 1e6 / RUNS;
    cpu0 = process.cpuUsage();
    for (let i = 0; i < RUNS; i++) await speak(sentences[0]!);
    used = process.cpuUsage(cpu0);
    return { perRequest, firstSentence: (used.user + used.system) / 1e6 / RUNS, wall };
  } finally {
    await engine.close();
  }
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const started = performance.now();
  console.log(`Throughput bench${QUICK ? ' (--quick)' : ''}: ${availableParallelism()} cores available, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')} at start`);
  console.log(`Text: ${sentencesOf(TEXT)} sentences, ${TEXT.length} chars, voice ${VOICE}, ${RATE} Hz. CPU time from /proc (${CLOCK_TICKS} ticks/s).\n`);

  const engine = await engineAlone();

  // Every server is spawned before this process lowers its own priority, so they keep theirs.
  const twoCores = await startServer({ cpus: '0,1' });
  if (SSE_ONLY) {
    try {
      await sseLoads(sseTarget(twoCores), engine);
    } finally {
      await twoCores.stop();
    }
    console.log(`\nload average at end ${loadavg().map((l) => l.toFixed(2)).join(' ')}; run took ${fixed((performance.now() - started) / 1000, 0)} s`);
    return;
  }
  const oneCore = await startServer({ cpus: '0' });
  const sttServer = await startServer({ packs: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH] });
  const formatsServer = await startServer();
  const servers = [formatsServer, twoCores, oneCore, sttServer];
  let sseReader: ChildProcess | undefined;
  try {
    // First request of each format ÷ its tenth
    console.log('First request of each format ÷ its tenth (a server just started, after one warm-up pcm request):');
    await getSpeech(formatsServer, 'pcm');
    const formats: [string, () => Promise<number>][] = [
      ...['pcm', 'wav', 'mp3', 'mulaw'].map((f): [string, () => Promise<number>] => [`${f} (tts-v2)`, () => getSpeech(formatsServer, f)]),
      ...['opus', 'flac', 'aac'].map((f): [string, () => Promise<number>] => [`${f} (/v1/audio/speech)`, () => openAiSpeech(formatsServer, f)]),
    ];
    for (const [name, request] of formats) {
      const times: number[] = [];
      try {
        for (let i = 0; i < 10; i++) {
          const t0 = performance.now();
          await request();
          times.push(performance.now() - t0);
        }
        line(name, `${fixed(times[0]!)} ms`, `tenth ${fixed(times[9]!)} ms; first ÷ tenth ${ratio(times[0]! / times[9]!)} (target ≤ 1.5)`);
      } catch (err) {
        line(name, 'failed', (err as Error).message);
      }
    }

    // Forked before this process is niced, so it keeps normal priority; started now and waited
    // for, so that its start-up CPU falls on no measurement.
    sseReader = await startSseReader();
    setPriority(19);
    const cores = twoCores.cores;

    // get_speech
    await getSpeech(twoCores); // warm-up
    await getSpeech(twoCores);
    const server = await serverCpuPerRequest(twoCores.child.pid!, RUNS, () => getSpeech(twoCores));
    const limit = cores / server.cpu;
    const engineLimit = cores / engine.perRequest;
    console.log('\nget_speech (tts-v2, WAV):');
    line('engine CPU per request (in-process, no resample/encode)', `${fixed(engine.perRequest * 1000)} ms`, `wall ${fixed(engine.wall * 1000)} ms`);
    line('server CPU per request (process tree, 1 client)', `${fixed(server.cpu * 1000)} ms`, `wall ${fixed(server.wall * 1000)} ms; main thread ${fixed(server.main * 1000)} ms`);
    line('server CPU ÷ engine CPU', ratio(server.cpu / engine.perRequest), '(target ≤ 1.25)');
    line(`throughput limit = ${cores} cores ÷ server CPU`, `${fixed(limit)} req/s`, `(from engine CPU alone: ${fixed(engineLimit)} req/s)`);
    const one = await throughput(1, () => getSpeech(twoCores));
    line('1 client', `${fixed(one.rate)} req/s`, `÷ limit ${ratio(one.rate / limit)}`);
    for (const clients of [16, 64]) {
      const r = await throughput(clients, () => getSpeech(twoCores));
      line(`${clients} clients`, `${fixed(r.rate)} req/s`, `÷ limit ${ratio(r.rate / limit)} (target ≥ 0.85); ÷ 1 client ${ratio(r.rate / one.rate)} (target ≥ ${fixed(0.85 * cores, 2)})${r.failed ? `; ${r.failed} failed` : ''}`);
    }
    await getSpeech(oneCore);
    const single = await throughput(16, () => getSpeech(oneCore));
    const dual = await throughput(16, () => getSpeech(twoCores));
    line('16 clients, server under taskset -c 0 (1 core)', `${fixed(single.rate)} req/s`);
    line('16 clients, server under taskset -c 0,1 (2 cores)', `${fixed(dual.rate)} req/s`, `2 cores ÷ 1 core ${ratio(dual.rate / single.rate)} (target ≥ 1.8)`);

    await sseLoadsIn(sseReader, sseTarget(twoCores), engine);

    // Transcription
    const wav = new Uint8Array(readFileSync(corpusFile(STT_FILE)));
    const recordingSeconds = parseWav(wav).samples.length / 16_000;
    console.log(`\nTranscription (POST /api/v1/stt/get_text, ${STT_FILE}, ${fixed(recordingSeconds)} s):`);
    await transcribe(sttServer, wav);
    const sttRuns = Math.max(3, Math.round(RUNS / 3));
    const stt = await serverCpuPerRequest(sttServer.child.pid!, sttRuns, () => transcribe(sttServer, wav));
    const sttLimit = sttServer.cores / stt.cpu;
    line('server CPU per request (process tree, 1 client)', `${fixed(stt.cpu * 1000)} ms`, `wall ${fixed(stt.wall * 1000)} ms; main thread ${fixed(stt.main * 1000)} ms`);
    line(`throughput limit = ${sttServer.cores} cores ÷ server CPU`, `${fixed(sttLimit, 2)} req/s`);
    for (const clients of [4, 16]) {
      const r = await throughput(clients, () => transcribe(sttServer, wav));
      line(`${clients} clients`, `${fixed(r.rate, 2)} req/s`, `÷ limit ${ratio(r.rate / sttLimit)}${r.failed ? `; ${r.failed} failed` : ''}`);
    }
    const { samples } = parseWav(new Uint8Array(readFileSync(corpusFile(STT_STREAM_FILE))));
    const pcm = encodeInt16(samples);
    await sttStream(sttServer, pcm.subarray(0, 32_000 * 2), 0); // warm-up
    const streams = await Promise.all(Array.from({ length: STT_STREAMS }, (_, i) => sttStream(sttServer, pcm, (i * 1000) / STT_STREAMS)));
    const partial = stats(streams.flatMap((s) => s.partialMs));
    const errors = streams.flatMap((s) => s.errors);
    line(`WebSocket partial latency, ${STT_STREAMS} real-time streams`, `p50 ${fixed(partial.p50, 0)} ms`, `p95 ${fixed(partial.p95, 0)} ms; max ${fixed(partial.max, 0)} ms; ${partial.n} partials${errors.length ? `; ${errors.length} errors: ${errors[0]}` : ''}`);
  } finally {
    sseReader?.kill();
    await Promise.all(servers.map((s) => s.stop()));
  }
  console.log(`\nload average at end ${loadavg().map((l) => l.toFixed(2)).join(' ')}; run took ${fixed((performance.now() - started) / 1000, 0)} s`);
}

/** The SSE readers' child process, once it is ready for its task. */
function startSseReader(): Promise<ChildProcess> {
  const reader = fork(fileURLToPath(import.meta.url), ['--sse-reader', ...(QUICK ? ['--quick'] : [])], { execArgv: process.execArgv });
  return new Promise((resolve, reject) => {
    reader.once('message', () => resolve(reader));
    reader.once('exit', (code) => reject(new Error(`the SSE readers' process exited (${code})`)));
  });
}

/** Runs the SSE loads in the readers' child (its lines go to the same output); resolves when it is done. */
function sseLoadsIn(reader: ChildProcess, server: SseTarget, engine: { firstSentence: number }): Promise<void> {
  return new Promise((resolve, reject) => {
    reader.once('message', (reply: { ok: boolean; error?: string }) => (reply.ok ? resolve() : reject(new Error(`SSE loads failed: ${reply.error}`))));
    reader.once('exit', (code) => reject(new Error(`the SSE readers' process exited (${code})`)));
    reader.send({ server, engine });
  });
}

/** The SSE part: CPU per stream, then first-chunk p95 and dry streams under load. */
async function sseLoads(server: SseTarget, engine: { firstSentence: number }): Promise<void> {
  const cores = server.cores;
  console.log(`\nSSE /tts-v2/stream, every stream read to its end (a player starts ${PLAYBACK_BUFFER_MS} ms after the first chunk):`);
  line('engine CPU of the first sentence (first piece)', `${fixed(engine.firstSentence * 1000)} ms`);
  await sseStream(server);
  const perStream = await serverCpuPerRequest(server.pid, RUNS, () => sseStream(server));
  line('server CPU per stream (process tree, 1 stream)', `${fixed(perStream.cpu * 1000)} ms`, `main thread ${fixed(perStream.main * 1000)} ms`);
  const audio = (await sseStream(server)).audioSeconds;
  line('  of which base64 of its chunks (measured here)', `${fixed(base64Ms(Math.round(audio * RATE * 2)), 2)} ms`, `(${Math.ceil((audio * RATE * 2) / 1024)} chunks of ≤ 1 KB)`);
  const alone = stats(await Promise.all([0, 1, 2].map(async (i) => (await sleep(i * 300), await sseStream(server)).firstMs)));
  line('first chunk, 1 stream (p50 of 3)', `${fixed(alone.p50)} ms`);
  for (const [i, c] of SSE_STREAMS.entries()) {
    const runs = await Promise.all(Array.from({ length: c }, () => sseStream(server)));
    const first = stats(runs.map((r) => r.firstMs));
    const firstLimit = (c * engine.firstSentence * 1000) / cores;
    const dry = runs.filter((r) => r.dry).length;
    const again = SSE_STREAMS.indexOf(c) < i ? ' again' : '';
    line(`${c} streams${again}: first-chunk p95`, `${fixed(first.p95)} ms`, `limit ${fixed(firstLimit)} ms; ÷ limit ${ratio(first.p95 / firstLimit)} (target ≤ 2.0); p50 ${fixed(first.p50)} ms; ran dry ${dry} of ${c} (target 0)`);
    await sleep(1_000);
  }
}

/** Milliseconds base64 of `bytes` bytes takes in 1 KB chunks (what the SSE route does per stream), the mean of many runs. */
function base64Ms(bytes: number): number {
  const audio = new Uint8Array(bytes).map((_, i) => (i * 7919) & 255);
  const runs = 50;
  let length = 0;
  const t0 = performance.now();
  for (let r = 0; r < runs; r++) for (let at = 0; at < bytes; at += 1024) length += Buffer.from(audio.buffer, at, Math.min(1024, bytes - at)).toString('base64').length;
  const ms = (performance.now() - t0) / runs;
  return length > 0 ? ms : NaN;
}

function sentencesOf(text: string): number {
  return text.split(/(?<=\.)\s+/).length;
}

if (SSE_READER) {
  process.send!({ ready: true });
  process.once('message', (task: { server: SseTarget; engine: { firstSentence: number } }) => {
    sseLoads(task.server, task.engine).then(
      () => process.send!({ ok: true }, () => process.disconnect()),
      (err: Error) => process.send!({ ok: false, error: err.message }, () => process.disconnect()),
    );
  });
} else {
  await main();
}
