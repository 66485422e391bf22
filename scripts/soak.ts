/**
 * `npm run soak`: mixed traffic against a real server on loopback for a while (10 minutes unless
 * PARLEY_SOAK_SECONDS says otherwise), from PARLEY_SOAK_CLIENTS (16) concurrent clients: synthesis
 * as SSE streams and whole files, transcription answered at once and through webhooks (to a
 * receiver on loopback), and pronunciation dictionary CRUD. Every 10 s it prints the errors, p50 and
 * p95 latency per route over those 10 s and the server's resident memory (its process and
 * children; also the anonymous part, and the server's JS heap and external memory); at the end the same per route over the whole run, and whether RSS at the end is
 * within 10% of RSS after the first minute. Not part of `npm test` or CI; it stops by itself.
 *
 * Per-account rate limits are off in the server (every request here comes from one account);
 * everything else is the default configuration. Transcription uses the shared Silero VAD and the
 * tiny streaming zipformer (PARLEY_TEST_MODELS_DIR) and short clips of PARLEY_TEST_CORPUS_DIR.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { corpusFile, modelsDirWith, repoRoot } from '../test/helpers/models.js';

const seconds = Number(process.env.PARLEY_SOAK_SECONDS ?? 600);
const clients = Number(process.env.PARLEY_SOAK_CLIENTS ?? 16);
/** A client's pause between two requests, so 16 clients are busy users rather than a tight loop. */
const pauseMs = Number(process.env.PARLEY_SOAK_PAUSE_MS ?? 100);
const REPORT_EVERY_MS = 10_000;
const BASELINE_AT_MS = 60_000;

const TEXTS = [
  'Hello from the soak test.',
  'It costs $12.50 on 3 March, and the train leaves at 10:45.',
  'A longer paragraph follows. It has several sentences, some short. Others run on for a while, with clauses and commas, to make the engine work a little.',
  'Dr. Smith met 21 people at the tomato festival.',
];
const CLIPS = ['en/cmu-arctic-aew-a0003.wav', 'en/cmu-arctic-axb-a0004.wav', 'en/cmu-arctic-axb-a0006.wav', 'en/ljspeech-LJ002-0020.wav'];

// ---------- the server, as a child process ----------

const dataDir = mkdtempSync(path.join(tmpdir(), 'parley-soak-'));
const modelsDir = modelsDirWith(['silero-vad-v5', 'sherpa-onnx-kws-zipformer-gigaspeech-3.3M-2024-01-01-mobile']);
const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'scripts/soak-server.ts')], {
  cwd: repoRoot,
  env: {
    // As `npm start` runs the server (see package.json): two malloc arenas per process.
    MALLOC_ARENA_MAX: '2',
    ...process.env,
    PARLEY_DATA_DIR: dataDir,
    PARLEY_MODELS_DIR: modelsDir,
    DATABASE_URL: '',
    PARLEY_ALLOWED_PRIVATE_HOSTS: '127.0.0.1',
    PARLEY_LOG_LEVEL: process.env.PARLEY_LOG_LEVEL ?? 'warn',
    PARLEY_RATE_LIMITS__SYNTHESIS__PER_MINUTE: '0',
    PARLEY_RATE_LIMITS__TRANSCRIPTION__PER_MINUTE: '0',
    PARLEY_RATE_LIMITS__MANAGEMENT__PER_MINUTE: '0',
    // All 16 clients are one account: the whole node's admission depth is theirs, as the rate limits are.
    PARLEY_ADMISSION__ACCOUNT_SHARE: '1',
  },
  stdio: ['ignore', 'pipe', 'inherit'],
});
/** The server's last report of its JS heap and external memory, in bytes. */
let serverMemory = { heapUsed: 0, external: 0, arrayBuffers: 0 };
const { url, key } = await new Promise<{ url: string; key: string }>((resolve, reject) => {
  child.once('exit', (code) => reject(new Error(`soak server exited (${code}) before it listened`)));
  let first = true;
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (first) {
      resolve(JSON.parse(line));
      first = false;
      return;
    }
    // Only the memory reports: a log line the server writes to stdout is not one.
    let report: Partial<typeof serverMemory>;
    try {
      report = JSON.parse(line);
    } catch {
      return;
    }
    if (typeof report.heapUsed === 'number' && typeof report.external === 'number') serverMemory = { ...serverMemory, ...report };
  });
});
const auth = { authorization: `Bearer ${key}` };

/**
 * Resident memory of the server process and all its descendants (workers, child processes), in
 * MB: all of it, and the anonymous part alone (heaps; without the mapped model and program files,
 * which the kernel may drop and map again when other processes need memory).
 */
function serverRssMb(): { total: number; anon: number } {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // the process ended meanwhile
    }
  }
  const tree = new Set([child.pid!]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, ppid] of parents) if (tree.has(ppid) && !tree.has(pid)) (tree.add(pid), (grew = true));
  }
  let total = 0;
  let anon = 0;
  for (const pid of tree) {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      total += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
      anon += Number(/RssAnon:\s+(\d+)/.exec(status)?.[1] ?? 0);
    } catch {
      // ended meanwhile
    }
  }
  return { total: total / 1024, anon: anon / 1024 };
}

// ---------- a webhook receiver on loopback ----------

const pendingHooks = new Map<string, number>();
const receiver = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    res.writeHead(200).end();
    const requestId = String(req.headers['x-request-id']);
    const sentAt = pendingHooks.get(requestId);
    if (sentAt === undefined) return; // a repeated delivery (at least once)
    pendingHooks.delete(requestId);
    let body: { status?: string; error?: string } = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      // counted as an error below
    }
    if (body.status === 'success') record('stt webhook (delivered)', performance.now() - sentAt);
    else fail('stt webhook (delivered)', `delivery of ${requestId}: ${JSON.stringify(body).slice(0, 200)}`);
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

// ---------- measurements ----------

interface RouteStats {
  all: number[];
  window: number[];
  errors: number;
  windowErrors: number;
}
const routes = new Map<string, RouteStats>();
const errorSamples: string[] = [];

function stats(route: string): RouteStats {
  let s = routes.get(route);
  if (!s) routes.set(route, (s = { all: [], window: [], errors: 0, windowErrors: 0 }));
  return s;
}

function record(route: string, ms: number): void {
  const s = stats(route);
  s.all.push(ms);
  s.window.push(ms);
}

function fail(route: string, what: string): void {
  const s = stats(route);
  s.errors++;
  s.windowErrors++;
  if (errorSamples.length < 20) errorSamples.push(`${route}: ${what}`);
}

function percentile(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : NaN;
}

function table(pick: (s: RouteStats) => [number[], number]): string {
  const rows = [...routes.entries()].sort(([a], [b]) => a.localeCompare(b));
  return rows
    .map(([route, s]) => {
      const [samples, errors] = pick(s);
      const sorted = [...samples].sort((a, b) => a - b);
      return `  ${route.padEnd(28)} ${String(sorted.length).padStart(6)} ok ${String(errors).padStart(4)} err   p50 ${percentile(sorted, 50).toFixed(0).padStart(6)} ms   p95 ${percentile(sorted, 95).toFixed(0).padStart(6)} ms`;
    })
    .join('\n');
}

// ---------- the clients ----------

const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)]!;
const clips = CLIPS.map((c) => readFileSync(corpusFile(c)));

/** Time `run` as `route`; anything it throws is an error of that route. */
async function timed(route: string, run: () => Promise<void>): Promise<void> {
  const start = performance.now();
  try {
    await run();
    record(route, performance.now() - start);
  } catch (err) {
    fail(route, (err as Error).message);
  }
}

async function expectStatus(res: Response, status: number): Promise<void> {
  if (res.status !== status) throw new Error(`HTTP ${res.status}: ${(await res.text()).slice(0, 200)}`);
}

async function ttsStream(): Promise<void> {
  const start = performance.now();
  await timed('tts stream (whole)', async () => {
    const res = await fetch(`${url}/api/v1/tts-v2/stream`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ text: pick(TEXTS), voice_id: pick(['espeak-en-us-female', 'espeak-en-gb-male']), output_format: pick(['pcm', 'mp3', 'wav']) }),
    });
    await expectStatus(res, 200);
    const decoder = new TextDecoder();
    let text = '';
    let first = true;
    for await (const part of res.body!) {
      if (first) record('tts stream (first chunk)', performance.now() - start);
      first = false;
      text += decoder.decode(part, { stream: true });
    }
    if (!text.includes('event: complete')) throw new Error(`stream ended without completion: …${text.slice(-200)}`);
  });
}

async function ttsFile(): Promise<void> {
  await timed('tts get_speech', async () => {
    const res = await fetch(`${url}/api/v1/tts-v2/get_speech`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ text: pick(TEXTS), voice_id: 'espeak-en-us-male', output_format: pick(['pcm', 'mp3', 'mulaw']) }),
    });
    await expectStatus(res, 200);
    const bytes = await res.arrayBuffer();
    if (bytes.byteLength < 100) throw new Error(`only ${bytes.byteLength} bytes of audio`);
  });
}

async function sttSync(): Promise<void> {
  await timed('stt get_text', async () => {
    const res = await fetch(`${url}/api/v1/stt/get_text?word_timestamps=true`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'audio/wav' },
      body: pick(clips),
    });
    await expectStatus(res, 200);
    const body = (await res.json()) as { status?: string; transcription?: unknown };
    if (body.status !== 'success' || typeof body.transcription !== 'string') throw new Error(`unexpected result ${JSON.stringify(body).slice(0, 200)}`);
  });
}

async function sttWebhook(): Promise<void> {
  await timed('stt webhook (accepted)', async () => {
    const res = await fetch(`${url}/api/v1/stt/get_text?webhook_url=${encodeURIComponent(hookUrl)}&webhook_extra=soak:1`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'audio/wav' },
      body: pick(clips),
    });
    await expectStatus(res, 200);
    const body = (await res.json()) as { status?: string; request_id?: string };
    if (body.status !== 'processing' || !body.request_id) throw new Error(`unexpected answer ${JSON.stringify(body)}`);
    pendingHooks.set(body.request_id, performance.now());
  });
}

async function dictCrud(): Promise<void> {
  const call = (method: string, json?: unknown) =>
    fetch(`${url}/api/v1/pronunciation-dicts`, {
      method,
      headers: json === undefined ? auth : { ...auth, 'content-type': 'application/json' },
      ...(json === undefined ? {} : { body: JSON.stringify(json) }),
    });
  let id = '';
  await timed('dicts POST', async () => {
    const res = await call('POST', { items: [{ word: 'tomato', pronunciation: 'tomahto' }, { word: 'SQL', pronunciation: 'sequel' }] });
    await expectStatus(res, 200);
    id = ((await res.json()) as { id: string }).id;
  });
  if (!id) return;
  await timed('dicts PUT', async () => {
    const items = Array.from({ length: 200 }, (_, i) => ({ word: `word${i}`, pronunciation: `say ${i}` }));
    const res = await call('PUT', { id, items: [...items, { word: 'festival', pronunciation: 'party' }] });
    await expectStatus(res, 200);
    await res.arrayBuffer();
  });
  await timed('tts get_speech (dict)', async () => {
    const res = await fetch(`${url}/api/v1/tts-v2/get_speech`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'The festival of word7 and word150.', voice_id: 'espeak-en-us-female', pronunciation_dicts: [id] }),
    });
    await expectStatus(res, 200);
    await res.arrayBuffer();
  });
  await timed('dicts GET', async () => {
    const res = await call('GET');
    await expectStatus(res, 200);
    await res.arrayBuffer();
  });
  await timed('dicts DELETE', async () => {
    const res = await call('DELETE', { id });
    await expectStatus(res, 200);
    await res.arrayBuffer();
  });
}

/** Weighted mix: what one client does next. */
const mix: [number, () => Promise<void>][] = [
  [30, ttsStream],
  [20, ttsFile],
  [20, sttSync],
  [10, sttWebhook],
  [20, dictCrud],
];
const totalWeight = mix.reduce((n, [w]) => n + w, 0);
function nextAction(): () => Promise<void> {
  let r = Math.random() * totalWeight;
  for (const [w, action] of mix) if ((r -= w) < 0) return action;
  return mix[0]![1];
}

const startedAt = performance.now();
const endAt = startedAt + seconds * 1000;
/** RSS after the first minute, set by the reporter. */
const baseline: { rss: { total: number; anon: number } | null } = { rss: null };
console.log(`soak: ${clients} clients for ${seconds} s against ${url} (server pid ${child.pid}, RSS ${serverRssMb().total.toFixed(0)} MB at start)`);

const reporter = setInterval(() => {
  const elapsed = (performance.now() - startedAt) / 1000;
  const rss = serverRssMb();
  if (baseline.rss === null && elapsed * 1000 >= BASELINE_AT_MS) baseline.rss = rss;
  const errors = [...routes.values()].reduce((n, s) => n + s.errors, 0);
  const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(0);
  console.log(
    `\n[${elapsed.toFixed(0)} s] RSS ${rss.total.toFixed(0)} MB, anonymous ${rss.anon.toFixed(0)} MB (JS heap ${mb(serverMemory.heapUsed)} MB, external ${mb(serverMemory.external)} MB), ` +
      `errors so far ${errors}, webhooks pending ${pendingHooks.size}`,
  );
  console.log(table((s) => [s.window, s.windowErrors]));
  for (const s of routes.values()) {
    s.window = [];
    s.windowErrors = 0;
  }
}, REPORT_EVERY_MS);

async function client(): Promise<void> {
  while (performance.now() < endAt) {
    await nextAction()();
    if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs * (0.5 + Math.random())));
  }
}

let exitCode = 0;
try {
  await Promise.all(Array.from({ length: clients }, client));
  // Deliveries still on their way get a while to arrive; the ones that do not are errors.
  const drainUntil = performance.now() + 60_000;
  while (pendingHooks.size > 0 && performance.now() < drainUntil) await new Promise((r) => setTimeout(r, 200));
  for (const id of pendingHooks.keys()) fail('stt webhook (delivered)', `no delivery for ${id} within 60 s of the end`);

  clearInterval(reporter);
  const endRss = serverRssMb();
  const errors = [...routes.values()].reduce((n, s) => n + s.errors, 0);
  console.log(`\n===== soak finished after ${((performance.now() - startedAt) / 1000).toFixed(0)} s =====`);
  console.log(table((s) => [s.all, s.errors]));
  console.log(`errors: ${errors}`);
  for (const e of errorSamples) console.log(`  ${e}`);
  const baselineRss = baseline.rss;
  if (baselineRss === null) {
    console.log(`RSS at the end ${endRss.total.toFixed(0)} MB (the run was shorter than a minute: no baseline to compare with)`);
  } else {
    const change = (now: number, then: number) => ((now - then) / then) * 100;
    const percent = (p: number) => `${p >= 0 ? '+' : ''}${p.toFixed(1)}%`;
    const total = change(endRss.total, baselineRss.total);
    const within = Math.abs(total) <= 10;
    console.log(
      `RSS after 1 min ${baselineRss.total.toFixed(0)} MB, at the end ${endRss.total.toFixed(0)} MB (${percent(total)}): ${within ? 'within' : 'NOT within'} 10%`,
    );
    console.log(
      `anonymous RSS after 1 min ${baselineRss.anon.toFixed(0)} MB, at the end ${endRss.anon.toFixed(0)} MB (${percent(change(endRss.anon, baselineRss.anon))})`,
    );
    if (!within) exitCode = 1;
  }
  if (errors > 0) exitCode = 1;
} finally {
  clearInterval(reporter);
  child.kill('SIGTERM');
  await new Promise<void>((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.once('exit', () => (clearTimeout(force), resolve()));
    if (child.exitCode !== null) resolve();
  });
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(modelsDir, { recursive: true, force: true });
}
process.exit(exitCode);
