/**
 * What metrics and traces cost: `npm run bench:observability`. Prints times and ratios beside
 * their targets (metrics ≤ 1.03, tracing at full sampling ≤ 1.10); asserts nothing.
 *
 * Three built servers run as their own processes on loopback with the same packs: one with
 * neither, one with metrics (scraped every second, as Prometheus would), one tracing every
 * request into a loopback OTLP/HTTP sink. Rounds alternate between them, so drift on a shared
 * machine falls on all three alike; each figure is the median over the rounds, of the wall time
 * and of the CPU time the server and its inference processes spent (from /proc: on a shared
 * machine the CPU time is the steadier measure of cost). Workloads:
 * 1. the cheapest authenticated route (GET /api/v1/tts-v2/get_voices), 4 at a time: the
 *    per-request overhead at its most visible;
 * 2. syntheses with the Piper fixture voice (/tts-v2/get_speech: an inference task per sentence,
 *    spans in the server and in the inference process);
 * 3. transcriptions of a 16.7 s corpus file (VAD and recognition tasks).
 *
 * Env: BENCH_ROUNDS (default 5), PARLEY_TEST_MODELS_DIR, PARLEY_TEST_CORPUS_DIR.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { corpusFile } from '../test/helpers/models.js';
import { processTree } from '../test/helpers/process-tree.js';
import { freePort, startServerProcess, type ServerProcess } from '../test/helpers/server-process.js';
import { trainJourney } from './texts.js';

const ROUNDS = Math.max(1, Number.parseInt(process.env.BENCH_ROUNDS ?? '5', 10) || 5);
const PIPER = 'fake-piper-tones-en_US-22k-2spk';
const PACKS = [PIPER, 'sherpa-onnx-kws-zipformer-gigaspeech-3.3M-2024-01-01-mobile', 'silero-vad-v5'];
const CHEAP_REQUESTS = 2000;
const CONCURRENCY = 4;
const SYNTHESES = 40;
const TRANSCRIPTIONS = 4;
const STT_FILE = 'en/librispeech-1221-135766-0001.wav';

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;


/** Takes OTLP/HTTP exports and drops them, counting the bytes (a collector that keeps up). */
async function startSink(): Promise<{ url: string; bytes: () => number; close(): void }> {
  let bytes = 0;
  const server = http.createServer((request, response) => {
    request.on('data', (c: Buffer) => (bytes += c.length));
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bytes: () => bytes, close: () => server.close() };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

function send(server: ServerProcess, method: string, pathname: string, body?: Buffer | string, contentType = 'application/json'): Promise<number> {
  const base = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: base.hostname, port: base.port, method, path: pathname, agent, headers: { authorization: `Bearer ${server.key}`, 'content-type': contentType } },
      (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve(res.statusCode) : reject(new Error(`${pathname}: ${res.statusCode}`))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** CPU seconds (user + system) used so far by `pid` and the processes below it. */
function cpuSeconds(pid: number): number {
  let ticks = 0;
  for (const p of processTree(pid)) {
    try {
      const fields = readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // gone meanwhile
    }
  }
  return ticks / ticksPerSecond;
}

/** Wall ms and server CPU ms of one run of `work`. */
async function timed(server: ServerProcess, work: () => Promise<unknown>): Promise<{ wall: number; cpu: number }> {
  const cpu = cpuSeconds(server.child.pid!);
  const start = performance.now();
  await work();
  return { wall: performance.now() - start, cpu: (cpuSeconds(server.child.pid!) - cpu) * 1000 };
}

async function pool(count: number, concurrency: number, one: () => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next++ < count) await one();
  }));
}

const sink = await startSink();
const metricsPort = await freePort();
const modes = [
  { name: 'off', env: {} as Record<string, string> },
  { name: 'metrics', env: { PARLEY_METRICS__PORT: String(metricsPort) } },
  { name: 'tracing', env: { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url } },
];
const servers: ServerProcess[] = [];
for (const mode of modes) servers.push(await startServerProcess(PACKS, { PARLEY_INFERENCE__LAYOUT: 'by-capability', ...mode.env }, { built: true }));
// Prometheus's part: a scrape a second of the metrics server for the whole run.
const scraper = setInterval(() => void fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text()).catch(() => undefined), 1000);

const { voices } = (await (await fetch(`${servers[0]!.url}/api/v1/tts-v2/get_voices`, { headers: { authorization: `Bearer ${servers[0]!.key}` } })).json()) as {
  voices: Array<{ voiceId: string }>;
};
const voice = voices.map((v) => v.voiceId).find((id) => id.startsWith(PIPER))!;
const speech = JSON.stringify({ text: trainJourney.slice(0, 2).join(' '), voice_id: voice, output_format: 'pcm' });
const wav = readFileSync(corpusFile(STT_FILE));

const workloads = {
  cheap: (s: ServerProcess) => pool(CHEAP_REQUESTS, CONCURRENCY, () => send(s, 'GET', '/api/v1/tts-v2/get_voices')),
  synthesis: (s: ServerProcess) => pool(SYNTHESES, 2, () => send(s, 'POST', '/api/v1/tts-v2/get_speech', speech)),
  transcription: (s: ServerProcess) => pool(TRANSCRIPTIONS, 2, () => send(s, 'POST', '/api/v1/stt/get_text?language=en', wav, 'audio/wav')),
};
type Workload = keyof typeof workloads;
const times: Record<string, Record<Workload, Array<{ wall: number; cpu: number }>>> = {};
for (const mode of modes) times[mode.name] = { cheap: [], synthesis: [], transcription: [] };

try {
  // A warm-up round loads every model and compiles the hot paths in each server.
  for (const s of servers) for (const work of Object.values(workloads)) await work(s);
  for (let round = 0; round < ROUNDS; round++) {
    for (const workload of Object.keys(workloads) as Workload[]) {
      // Each round starts with a different server, so none always runs first.
      for (let i = 0; i < modes.length; i++) {
        const m = (i + round) % modes.length;
        times[modes[m]!.name]![workload].push(await timed(servers[m]!, () => workloads[workload](servers[m]!)));
      }
    }
  }
} finally {
  clearInterval(scraper);
  for (const s of servers) await s.stop();
  sink.close();
  agent.destroy();
}

const limit: Record<string, number> = { metrics: 1.03, tracing: 1.1 };
console.log(`Cost of metrics and tracing: ${ROUNDS} rounds, medians. The machine is shared (other jobs run on its 2 cores), so wall times carry their noise; the server's CPU time is the steadier figure`);
console.log('workload        mode        wall ms   ratio    server CPU ms   ratio   target');
for (const workload of Object.keys(workloads) as Workload[]) {
  const offWall = median(times.off![workload].map((t) => t.wall));
  const offCpu = median(times.off![workload].map((t) => t.cpu));
  for (const mode of modes) {
    const wall = median(times[mode.name]![workload].map((t) => t.wall));
    const cpu = median(times[mode.name]![workload].map((t) => t.cpu));
    const target = limit[mode.name];
    console.log(
      `${workload.padEnd(15)} ${mode.name.padEnd(9)} ${wall.toFixed(0).padStart(9)}   ${(wall / offWall).toFixed(3)}   ${cpu.toFixed(0).padStart(13)}   ${(cpu / offCpu).toFixed(3)}   ${target ? `≤ ${target.toFixed(2)}` : ''}`,
    );
  }
}
console.log(`OTLP bytes received by the sink: ${sink.bytes()}`);
