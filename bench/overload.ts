/**
 * Refusals and goodput under overload: `node --import tsx bench/overload.ts`.
 *
 * A real server (`parley serve` in its own process, the shared VAD and streaming English packs,
 * the built-in eSpeak NG voice, rate limits off so admission control is what refuses) is driven
 * from loopback. Two measurements:
 *
 * 1. CPU per refusal. The transcription family is held full: connections send the headers of an
 *    upload and nothing more, so they hold their places without costing anything. Then 16 clients
 *    send transcriptions in a loop for BENCH_REFUSAL_SECONDS, each retrying at once, once with
 *    `node:http` (a new connection per request, the whole body written at once) and once with
 *    `fetch`; the server's CPU time (utime + stime of its process, from /proc) over the window is
 *    divided by the refusals. Each is measured with the 16.7 s recording as the body (what a real
 *    client sends) and with no body (the cost of the refusal itself). A refusal the client could
 *    not read (the connection reset under its upload) is counted apart: it means a client cannot
 *    tell "retry later" from a broken network. Target ≤ 0.1 ms per refusal.
 * 2. Goodput. N clients, each in a loop, for BENCH_SECONDS per run:
 *    - transcription: POST /api/v1/stt/get_text with the 16.7 s corpus recording;
 *    - synthesis: POST /api/v1/tts-v2/get_speech of a paragraph (its length is read from the bytes).
 *    Well-behaved clients (4, `fetch`) wait as Retry-After says; overloading clients (48, `fetch`
 *    or `node:http`) send again at once after a 503 or a closed connection. Goodput is audio
 *    seconds of successful answers per wall second, counted over the run after a ramp
 *    (BENCH_RAMP_SECONDS) that fills the server's queue; requests still running at the end are
 *    cancelled. Target: goodput at 48 ≥ 90% of goodput at 4, for each family and client kind.
 *
 * BENCH_ONLY=refusals or BENCH_ONLY=goodput runs one of the two.
 *
 * The clients run in this process at the lowest CPU priority (BENCH_CLIENT_NICE, default 19) once
 * the server has started: on a real deployment they are other machines, and here their own loops
 * would otherwise take the CPU the server is measured on. Loopback only; every run stops by itself.
 */
import { execFileSync } from 'node:child_process';
import { setMaxListeners } from 'node:events';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { setPriority } from 'node:os';
import { corpusFile, REAL_TEST_MODELS } from '../test/helpers/models.js';
import { startServerProcess } from '../test/helpers/server-process.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
/** Each run first fills the server's queue for this long, uncounted: goodput is a steady-state rate. */
const RAMP_SECONDS = Number(process.env.BENCH_RAMP_SECONDS ?? 8);
const REFUSAL_SECONDS = Number(process.env.BENCH_REFUSAL_SECONDS ?? 6);
const ONLY = process.env.BENCH_ONLY;
const GOODPUT_TARGET = 0.9;
const REFUSAL_CPU_LIMIT_MS = 0.1;
const RECORDING = 'en/librispeech-1221-135766-0001.wav';
const TEXT =
  'The committee met on Tuesday to review the budget. After a long discussion, the members agreed to postpone the decision until next month, when the final figures would be available.';
const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

interface Run {
  ok: number;
  refused: number;
  /** Refusals the client could not read: the connection broke under it. */
  broken: number;
  failed: number;
  audioSeconds: number;
  wallSeconds: number;
}

interface Answer {
  status: number;
  retryAfter: number;
  audioSeconds: number;
}

type Attempt = (signal: AbortSignal) => Promise<Answer>;
type ClientKind = 'fetch' | 'node:http';

/** CPU seconds the process `pid` has used (all threads): in user space and in the kernel. */
function cpuSeconds(pid: number): { user: number; system: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(fields[11]) / CLOCK_TICKS, system: Number(fields[12]) / CLOCK_TICKS };
}

const cpuBetween = (from: { user: number; system: number }, to: { user: number; system: number }) => ({ user: to.user - from.user, system: to.system - from.system });

async function drive(clients: number, retryAtOnce: boolean, attempt: Attempt, seconds = SECONDS, ramp = RAMP_SECONDS): Promise<Run> {
  const run: Run = { ok: 0, refused: 0, broken: 0, failed: 0, audioSeconds: 0, wallSeconds: seconds };
  const from = performance.now() + ramp * 1000;
  const end = from + seconds * 1000;
  const stop = new AbortController();
  // Every client's request listens to it.
  setMaxListeners(0, stop.signal);
  const timer = setTimeout(() => stop.abort(), end - performance.now());
  const counted = () => performance.now() >= from && performance.now() <= end;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (!stop.signal.aborted) {
        let wait = 0;
        try {
          const r = await attempt(stop.signal);
          if (!counted()) continue;
          if (r.status === 200) {
            run.ok++;
            run.audioSeconds += r.audioSeconds;
            continue;
          }
          if (r.status === 503) run.refused++;
          else run.failed++;
          wait = r.retryAfter;
        } catch {
          if (stop.signal.aborted) break;
          // The connection broke before the client read an answer.
          if (counted()) run.broken++;
          wait = 1;
        }
        if (!retryAtOnce) await new Promise((r) => setTimeout(r, wait * 1000));
      }
    }),
  );
  clearTimeout(timer);
  // Let the server finish cancelling before the next run.
  await new Promise((r) => setTimeout(r, 2_000));
  return run;
}

/** One request with node:http on a connection of its own: the body written at once, as Node's clients do. */
function nodeHttpRequest(url: string, path: string, headers: Record<string, string>, body: Buffer | null, signal: AbortSignal): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(url);
    const req = http.request({ host: hostname, port: Number(port), path, method: 'POST', agent: false, headers: { ...headers, 'content-length': String(body?.length ?? 0) }, signal }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body ?? undefined);
  });
}

const server = await startServerProcess([REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH]);
const serverPid = server.child.pid!;
const clientNice = Number(process.env.BENCH_CLIENT_NICE ?? 19);
// After the spawn: the server and its inference processes keep their priority.
setPriority(clientNice);
const auth = { authorization: `Bearer ${server.key}` };
const wav = readFileSync(corpusFile(RECORDING));
const recordingSeconds = (wav.length - 44) / 2 / 16_000;
const synthesisBody = Buffer.from(JSON.stringify({ text: TEXT, voice_id: 'espeak-en-us-female', add_wav_header: false }));
const pcmSeconds = (bytes: number, sampleRate: unknown) => bytes / 2 / Number(sampleRate ?? 24_000);
const attempts: Record<ClientKind, Record<'transcription' | 'synthesis', Attempt>> = {
  fetch: {
    async transcription(signal) {
      const res = await fetch(`${server.url}/api/v1/stt/get_text`, { method: 'POST', headers: { ...auth, 'content-type': 'audio/wav' }, body: wav, signal });
      await res.arrayBuffer();
      return { status: res.status, retryAfter: Number(res.headers.get('retry-after') ?? 1), audioSeconds: recordingSeconds };
    },
    async synthesis(signal) {
      const res = await fetch(`${server.url}/api/v1/tts-v2/get_speech`, { method: 'POST', signal, headers: { ...auth, 'content-type': 'application/json' }, body: synthesisBody });
      const bytes = (await res.arrayBuffer()).byteLength;
      return { status: res.status, retryAfter: Number(res.headers.get('retry-after') ?? 1), audioSeconds: pcmSeconds(bytes, res.headers.get('x-sample-rate')) };
    },
  },
  'node:http': {
    async transcription(signal) {
      const res = await nodeHttpRequest(server.url, '/api/v1/stt/get_text', { ...auth, 'content-type': 'audio/wav' }, wav, signal);
      return { status: res.status, retryAfter: Number(res.headers['retry-after'] ?? 1), audioSeconds: recordingSeconds };
    },
    async synthesis(signal) {
      const res = await nodeHttpRequest(server.url, '/api/v1/tts-v2/get_speech', { ...auth, 'content-type': 'application/json' }, synthesisBody, signal);
      return { status: res.status, retryAfter: Number(res.headers['retry-after'] ?? 1), audioSeconds: pcmSeconds(res.body.length, res.headers['x-sample-rate']) };
    },
  },
};

try {
  // Warm-up: models loaded, caches filled.
  await attempts.fetch.transcription(new AbortController().signal);
  await attempts.fetch.synthesis(new AbortController().signal);
  console.log(`overload bench: loopback, clients at nice ${clientNice}\n`);
  if (ONLY !== 'goodput') await refusalCost();
  if (ONLY !== 'refusals') await goodput();
} finally {
  await server.stop();
}

async function refusalCost(): Promise<void> {
  console.log(`1. CPU per refusal: the transcription family held full, 16 clients retrying at once for ${REFUSAL_SECONDS} s`);
  // Places held by uploads whose bodies never come (one account may hold its share of the depth;
  // the rest are refused at once and closed, which is fine: the depth is what must be full).
  const holders: net.Socket[] = [];
  for (let i = 0; i < 16; i++) {
    const { hostname, port } = new URL(server.url);
    const socket = net.connect({ host: hostname, port: Number(port) });
    socket.on('error', () => undefined);
    socket.write(`POST /api/v1/stt/get_text HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.key}\r\nContent-Type: audio/wav\r\nContent-Length: ${wav.length}\r\n\r\n`);
    holders.push(socket);
  }
  await new Promise((r) => setTimeout(r, 500));
  for (const kind of ['node:http', 'fetch'] as const) {
    for (const body of [wav, null]) {
      const attempt: Attempt = async (signal) => {
        if (kind === 'node:http') {
          const res = await nodeHttpRequest(server.url, '/api/v1/stt/get_text', { ...auth, 'content-type': 'audio/wav' }, body, signal);
          return { status: res.status, retryAfter: 0, audioSeconds: 0 };
        }
        const res = await fetch(`${server.url}/api/v1/stt/get_text`, { method: 'POST', headers: { ...auth, 'content-type': 'audio/wav' }, body: body ?? new Uint8Array(0), signal });
        await res.arrayBuffer();
        return { status: res.status, retryAfter: 0, audioSeconds: 0 };
      };
      const idleFrom = cpuSeconds(serverPid);
      await new Promise((r) => setTimeout(r, 1_000));
      const idle = cpuBetween(idleFrom, cpuSeconds(serverPid));
      let cpuFrom = idleFrom;
      let cpuTo = idleFrom;
      const started = drive(16, true, attempt, REFUSAL_SECONDS, 1);
      setTimeout(() => (cpuFrom = cpuSeconds(serverPid)), 1_000);
      setTimeout(() => (cpuTo = cpuSeconds(serverPid)), (1 + REFUSAL_SECONDS) * 1000);
      const run = await started;
      const refusals = Math.max(1, run.refused + run.broken);
      const used = cpuBetween(cpuFrom, cpuTo);
      const perRefusal = (seconds: number, idleSeconds: number) => ((seconds - idleSeconds * REFUSAL_SECONDS) * 1000) / refusals;
      const userMs = perRefusal(used.user, idle.user);
      const systemMs = perRefusal(used.system, idle.system);
      const totalMs = userMs + systemMs;
      const what = `${kind}, ${body ? `${Math.round(wav.length / 1024)} KiB body` : 'no body'}`;
      console.log(
        `   ${what.padEnd(24)} ${totalMs.toFixed(3)} ms CPU per refusal (user ${userMs.toFixed(3)}, kernel ${systemMs.toFixed(3)}; ÷ limit ${REFUSAL_CPU_LIMIT_MS} ms: ${(totalMs / REFUSAL_CPU_LIMIT_MS).toFixed(2)})   ` +
          `${(refusals / REFUSAL_SECONDS).toFixed(0)} refusals/s, ${run.broken} of them unread (connection broken)   other ${run.failed + run.ok}`,
      );
    }
  }
  for (const socket of holders) socket.destroy();
  await new Promise((r) => setTimeout(r, 1_000));
}

async function goodput(): Promise<void> {
  const line = (name: string, r: Run) =>
    `   ${name.padEnd(40)} goodput ${(r.audioSeconds / r.wallSeconds).toFixed(1).padStart(6)} audio s/s   ok ${String(r.ok).padStart(5)}   503 ${String(r.refused).padStart(6)} (${(r.refused / r.wallSeconds).toFixed(0)}/s)   broken ${r.broken}   other ${r.failed}`;
  console.log(`\n2. Goodput: ${SECONDS} s counted per run after ${RAMP_SECONDS} s of ramp`);
  for (const family of ['transcription', 'synthesis'] as const) {
    const calm = await drive(4, false, attempts.fetch[family]);
    console.log(line(`${family}: 4 well-behaved clients (fetch)`, calm));
    for (const kind of ['fetch', 'node:http'] as const) {
      const storm = await drive(48, true, attempts[kind][family]);
      const ratio = storm.audioSeconds / calm.audioSeconds;
      console.log(line(`${family}: 48 at once (${kind})`, storm));
      console.log(`   ${family}, ${kind}: goodput at 48 ÷ at 4 = ${ratio.toFixed(2)} (target ≥ ${GOODPUT_TARGET}: ${ratio >= GOODPUT_TARGET ? 'met' : 'NOT met'})`);
    }
  }
}
