/**
 * Runs fuzz cases against a real Parley server in a child process on loopback, a few at a time,
 * and reports counts per outcome, every failure, the slowest request and the server's peak RSS.
 * A failure is: a 500 or above other than 503 (overload), a request over 30 s, a connection the
 * server dropped, or the server process dying. Everything stops by itself: a bounded number of
 * cases, a per-request timeout, and the server and file server closed at the end.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { processMemoryKb, processTree } from '../helpers/process-tree.js';
import { corpusDir } from '../helpers/models.js';
import { buildBombs, fileServerBytes, generateCase, loadCorpus, type FuzzCase, type FuzzContext } from './generate.js';

export interface FuzzOptions {
  seed: number;
  cases: number;
  /** Run only this case (replay). */
  only?: number;
  concurrency?: number;
  /** The server's duration cap (limits.maxAudioSeconds); bombs are made 1.5 times as long. */
  maxAudioSeconds?: number;
  /** Print progress lines. */
  log?: (line: string) => void;
}

export interface FuzzFailure {
  index: number;
  kind: string;
  path: string;
  outcome: string;
  detail: string;
}

export interface FuzzReport {
  seed: number;
  cases: number;
  byOutcome: Record<string, number>;
  byKind: Record<string, Record<string, number>>;
  failures: FuzzFailure[];
  crashed: boolean;
  slowest: { index: number; kind: string; ms: number; status: string };
  peakRssMb: number;
  /** The cases in flight when the peak RSS was sampled. */
  peakCases: string;
  wallSeconds: number;
}

const REQUEST_LIMIT_MS = 30_000;
const here = path.dirname(fileURLToPath(import.meta.url));

/** RSS (kB) of a process and all its descendants (ffmpeg children included). */
function treeRssKb(pid: number): number {
  return processTree(pid).reduce((total, p) => total + processMemoryKb(p).rss, 0);
}

async function startServer(maxAudioSeconds: number): Promise<{ child: ChildProcess; url: string; key: string; exited: Promise<number | null>; stderr: () => string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'server.ts')], {
    env: { ...process.env, PARLEY_FUZZ_MAX_AUDIO_SECONDS: String(maxAudioSeconds) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-20_000);
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const ready = await new Promise<{ url: string; key: string }>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const line = out.split('\n')[0];
      if (out.includes('\n')) resolve(JSON.parse(line));
    });
    void exited.then((code) => reject(new Error(`fuzz server exited (${code}) before it was ready:\n${stderr}`)));
  });
  return { child, ...ready, exited, stderr: () => stderr };
}

async function startFileServer(ctx: Omit<FuzzContext, 'filesUrl'>): Promise<{ server: http.Server; url: string }> {
  const bombs = Object.values(ctx.bombs);
  const server = http.createServer((req, res) => {
    const [, kind, arg] = (req.url ?? '').split('/');
    const bytes = kind === 'bomb' ? bombs[Number(arg) % bombs.length]?.bytes : fileServerBytes(arg ?? '0', { ...ctx, filesUrl: '' });
    res.writeHead(200, { 'content-type': 'audio/wav' }).end(bytes ?? Buffer.alloc(0));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

function outcomeOf(status: number): string {
  if (status === 503) return '503 overload';
  return `${Math.floor(status / 100)}xx`;
}

export async function runFuzz(options: FuzzOptions): Promise<FuzzReport> {
  const started = performance.now();
  const log = options.log ?? (() => undefined);
  const maxAudioSeconds = options.maxAudioSeconds ?? 7200;
  const partial = { voices: [] as string[], corpus: loadCorpus(corpusDir), bombs: buildBombs(maxAudioSeconds * 1.5) };
  const files = await startFileServer(partial);
  const server = await startServer(maxAudioSeconds);
  let crashed = false;
  void server.exited.then(() => {
    crashed = true;
  });
  let peakKb = 0;
  /** Cases in flight, to name the ones running when the peak was reached. */
  const inFlight = new Map<number, string>();
  let peakCases = '';
  const sampler = setInterval(() => {
    const kb = treeRssKb(server.child.pid!);
    if (kb > peakKb) {
      if (kb > peakKb + 200 * 1024) log(`server RSS ${Math.round(kb / 1024)} MB with cases ${[...inFlight].map(([i, kind]) => `${i} (${kind})`).join(', ')} in flight`);
      peakKb = kb;
      peakCases = [...inFlight].map(([i, kind]) => `${i} (${kind})`).join(', ');
    }
  }, 200);

  const report: FuzzReport = {
    seed: options.seed,
    cases: 0,
    byOutcome: {},
    byKind: {},
    failures: [],
    crashed: false,
    slowest: { index: -1, kind: '', ms: 0, status: '' },
    peakRssMb: 0,
    peakCases: '',
    wallSeconds: 0,
  };
  try {
    const auth = { authorization: `Bearer ${server.key}` };
    const voices = (await (await fetch(`${server.url}/api/v1/tts-v2/get_voices`, { headers: auth })).json()) as { voices: { voiceId: string }[] };
    const ctx: FuzzContext = { ...partial, voices: voices.voices.map((v) => v.voiceId).slice(0, 20), filesUrl: files.url };

    const indexes = options.only !== undefined ? [options.only] : Array.from({ length: options.cases }, (_, i) => i);
    let next = 0;
    const count = (kind: string, outcome: string) => {
      report.byOutcome[outcome] = (report.byOutcome[outcome] ?? 0) + 1;
      const perKind = (report.byKind[kind] ??= {});
      perKind[outcome] = (perKind[outcome] ?? 0) + 1;
    };
    const runOne = async (index: number) => {
      const c: FuzzCase = generateCase(options.seed, index, ctx);
      const headers = { ...c.headers, ...(c.anonymous ? {} : auth) };
      inFlight.set(index, c.kind);
      const t0 = performance.now();
      let outcome: string;
      let detail = '';
      try {
        const res = await fetch(server.url + c.path, {
          method: c.method,
          headers,
          body: c.body as BodyInit | undefined,
          signal: AbortSignal.timeout(REQUEST_LIMIT_MS * 2),
        });
        const body = new Uint8Array(await res.arrayBuffer());
        outcome = outcomeOf(res.status);
        if (res.status >= 500 && res.status !== 503) detail = Buffer.from(body.subarray(0, 300)).toString('utf8');
        if (options.only !== undefined) log(`case ${index} (${c.kind}) ${c.method} ${c.path.slice(0, 200)} -> ${res.status} ${Buffer.from(body.subarray(0, 500)).toString('utf8')}`);
      } catch (error) {
        outcome = crashed ? 'server crash' : 'connection error';
        detail = String((error as Error).cause ?? error);
      }
      inFlight.delete(index);
      const ms = performance.now() - t0;
      if (ms > report.slowest.ms) report.slowest = { index, kind: c.kind, ms: Math.round(ms), status: outcome };
      if (ms > REQUEST_LIMIT_MS) {
        report.failures.push({ index, kind: c.kind, path: c.path.slice(0, 120), outcome: 'over 30 s', detail: `${Math.round(ms)} ms` });
      }
      if ((outcome.startsWith('5') && outcome !== '503 overload') || outcome === 'connection error' || outcome === 'server crash') {
        report.failures.push({ index, kind: c.kind, path: c.path.slice(0, 120), outcome, detail });
      }
      const failure = report.failures[report.failures.length - 1];
      if (failure?.index === index) log(`FAIL case ${index} (${c.kind}): ${failure.outcome} ${failure.detail.slice(0, 200)}`);
      count(c.kind, outcome);
      report.cases++;
      if (report.cases % 500 === 0) log(`${report.cases} cases, ${report.failures.length} failures, ${Math.round((performance.now() - started) / 1000)} s, server RSS peak ${Math.round(peakKb / 1024)} MB`);
    };
    await Promise.all(
      Array.from({ length: options.concurrency ?? 4 }, async () => {
        while (next < indexes.length && !crashed) await runOne(indexes[next++]);
      }),
    );
  } finally {
    clearInterval(sampler);
    peakKb = Math.max(peakKb, treeRssKb(server.child.pid!));
    report.crashed = crashed;
    if (!crashed) {
      server.child.kill('SIGTERM');
      await Promise.race([server.exited, new Promise((r) => setTimeout(r, 5_000))]);
      server.child.kill('SIGKILL');
    } else {
      log(`server stderr:\n${server.stderr()}`);
    }
    files.server.close();
    files.server.closeAllConnections();
  }
  report.peakRssMb = Math.round(peakKb / 1024);
  report.peakCases = peakCases;
  report.wallSeconds = Math.round((performance.now() - started) / 1000);
  return report;
}

export function formatReport(r: FuzzReport): string {
  const lines = [
    `fuzz seed ${r.seed}: ${r.cases} cases in ${r.wallSeconds} s`,
    `outcomes: ${Object.entries(r.byOutcome).sort().map(([k, v]) => `${k} ${v}`).join(', ')}`,
    `server crashed: ${r.crashed ? 'YES' : 'no'}; failures (5xx other than 503, over 30 s, dropped connections): ${r.failures.length}`,
    `slowest request: case ${r.slowest.index} (${r.slowest.kind}) ${r.slowest.ms} ms -> ${r.slowest.status}`,
    `server peak RSS (process tree, sampled every 200 ms): ${r.peakRssMb} MB, with cases ${r.peakCases || '(none)'} in flight`,
    'by kind:',
    ...Object.entries(r.byKind).sort().map(([kind, outcomes]) => `  ${kind}: ${Object.entries(outcomes).sort().map(([k, v]) => `${k} ${v}`).join(', ')}`),
  ];
  for (const f of r.failures.slice(0, 30)) lines.push(`FAIL case ${f.index} (${f.kind}) ${f.path}: ${f.outcome} ${f.detail.slice(0, 200)}`);
  if (r.failures.length) lines.push(`replay one: PARLEY_FUZZ_SEED=${r.seed} PARLEY_FUZZ_CASE=<case> npm run fuzz`);
  return lines.join('\n');
}
