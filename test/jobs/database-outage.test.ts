/**
 * A PostgreSQL outage under load: `parley serve` processes (the job-server fixture: the real server
 * and job queue, the built-in eSpeak NG voices, the stand-in transcriber) on a PostgreSQL cluster
 * of the test's own, 20 accepted webhook jobs, and clients calling synthesis, transcription and
 * job submission all along. The database goes away for 20 s, three ways: a clean stop
 * (`pg_ctl stop -m fast`), a SIGKILL of the postmaster, and a clean stop under two nodes.
 * Every node must stay up; every request answers within 10 s with success or 503 + Retry-After;
 * within 30 s of the database's return every accepted job is delivered exactly once as a success,
 * and the nodes serve as before. The counts are printed (answers by status during the outage,
 * jobs delivered, time to recover).
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { randomBase62 } from '../../src/store/ids.js';
import { startPgCluster, skipWithoutPgServer, type PgCluster } from '../helpers/pg-cluster.js';
import { until } from './fixtures/job-options.js';
import { startReceiver } from './fixtures/receiver.js';
import { makeWav } from './fixtures/wav-transcribe.js';

const fixture = fileURLToPath(new URL('./fixtures/job-server.ts', import.meta.url));
const JOBS = 20;
const OUTAGE_MS = 20_000;
const REQUEST_LIMIT_MS = 10_000;
const RECOVERY_LIMIT_MS = 30_000;

interface Node {
  name: string;
  child: ChildProcess;
  url: string;
  logs: () => string;
}

function startNode(name: string, env: NodeJS.ProcessEnv): Promise<Node> {
  const child = spawn(process.execPath, ['--import', 'tsx', fixture], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let logs = '';
  const keep = (d: Buffer) => {
    logs = (logs + d.toString()).slice(-200_000);
    if (process.env.OUTAGE_TEST_VERBOSE) process.stderr.write(d);
  };
  child.stderr!.on('data', keep);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`node ${name} did not start in time: ${logs}`)), 60_000);
    child.stdout!.on('data', (d: Buffer) => {
      keep(d);
      const m = /READY (\S+)/.exec(logs);
      if (m) {
        clearTimeout(timer);
        resolve({ name, child, url: m[1]!, logs: () => logs });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`node ${name} exited with ${code} before READY: ${logs}`));
    });
  });
}

function alive(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

interface Answer {
  kind: string;
  node: string;
  status: number | 'network error' | 'timeout';
  retryAfter: string | null;
  ms: number;
  phase: 'outage' | 'after';
  detail?: string;
}

type Fault = 'stop' | 'kill';

const variants: Array<{ title: string; fault: Fault; nodes: number }> = [
  { title: 'the database stopped cleanly for 20 s', fault: 'stop', nodes: 1 },
  { title: 'the postmaster killed with SIGKILL, down 20 s', fault: 'kill', nodes: 1 },
  { title: 'two nodes, the database stopped cleanly for 20 s', fault: 'stop', nodes: 2 },
];

describe('a PostgreSQL outage', { skip: skipWithoutPgServer }, () => {
  let cluster: PgCluster;
  before(async () => {
    cluster = await startPgCluster();
  });
  after(async () => {
    await cluster?.destroy();
  });

  variants.forEach((variant, index) => {
    it(`keeps the nodes up and loses no job: ${variant.title}`, { timeout: 150_000 }, async (t) => {
      const databaseUrl = await cluster.createDatabase(`outage_${index}`);
      const key = `sk_${randomBase62(40)}`;
      const receiver = await startReceiver();
      const dirs: string[] = [];
      const nodeEnv = (name: string) => {
        const dataDir = mkdtempSync(path.join(tmpdir(), `parley-outage-${name}-`));
        const modelsDir = path.join(dataDir, 'models');
        dirs.push(dataDir);
        return {
          ...process.env,
          DATABASE_URL: databaseUrl,
          PARLEY_DATA_DIR: dataDir,
          PARLEY_MODELS_DIR: modelsDir,
          PARLEY_API_KEY: key,
          PARLEY_ALLOWED_PRIVATE_HOSTS: '127.0.0.1',
          PARLEY_LOG_LEVEL: 'warn',
          FIXTURE_ENGINES: '1',
          FIXTURE_TRANSCRIBE_MS: '1000',
          PARLEY_WEBHOOKS__CONCURRENCY: '2',
          PARLEY_WEBHOOKS__POLL_MS: '100',
          PARLEY_DATABASE__PROBE_MAX_INTERVAL_MS: '2000',
          // Limits stay on, so the shared buckets meet the outage too, but high enough never to refuse.
          PARLEY_RATE_LIMITS__SYNTHESIS__BURST: '10000',
          PARLEY_RATE_LIMITS__TRANSCRIPTION__BURST: '10000',
          PARLEY_RATE_LIMITS__MANAGEMENT__BURST: '10000',
        };
      };
      const nodes: Node[] = [];
      try {
        for (let i = 0; i < variant.nodes; i++) nodes.push(await startNode(String.fromCharCode(65 + i), nodeEnv(String.fromCharCode(65 + i))));
        const auth = { authorization: `Bearer ${key}` };
        const wav = new Uint8Array(makeWav(1));
        const requests: Record<string, (node: Node, id: string) => Promise<Response>> = {
          synthesis: (node) =>
            fetch(`${node.url}/api/v1/tts-v2/get_speech`, {
              method: 'POST',
              headers: { ...auth, 'content-type': 'application/json' },
              body: JSON.stringify({ text: 'The server stays up.', voice_id: 'espeak-en-us-male' }),
              signal: AbortSignal.timeout(REQUEST_LIMIT_MS),
            }),
          transcription: (node) =>
            fetch(`${node.url}/api/v1/stt/get_text?language=en`, {
              method: 'POST',
              headers: { ...auth, 'content-type': 'audio/wav' },
              body: wav,
              signal: AbortSignal.timeout(REQUEST_LIMIT_MS),
            }),
          job: (node, id) =>
            fetch(`${node.url}/api/v1/stt/get_text?language=en&webhook_url=${encodeURIComponent(receiver.url)}&webhook_extra=n:${id}`, {
              method: 'POST',
              headers: { ...auth, 'content-type': 'audio/wav', 'x-request-id': id },
              body: wav,
              signal: AbortSignal.timeout(REQUEST_LIMIT_MS),
            }),
        };

        // Before: everything works, and the key is verified on every node.
        for (const node of nodes) for (const kind of ['synthesis', 'transcription'] as const) assert.equal((await requests[kind]!(node, '')).status, 200, `${kind} on ${node.name}`);
        const accepted: string[] = [];
        await Promise.all(
          Array.from({ length: JOBS }, async (_, i) => {
            const id = `before-${i}`;
            const res = await requests.job!(nodes[i % nodes.length]!, id);
            assert.deepEqual(await res.json(), { status: 'processing', request_id: id });
            accepted.push(id);
          }),
        );
        // Some jobs transcribed and delivered, some running, most queued.
        await until('the first deliveries', () => receiver.received.length >= 2, 20_000);

        // The outage, with clients calling every node all along.
        const answers: Answer[] = [];
        let phase: Answer['phase'] = 'outage';
        let calling = true;
        let serial = 0;
        const callLoop = async (node: Node, kind: string) => {
          while (calling) {
            const id = `${kind}-${node.name}-${serial++}`;
            const started = Date.now();
            const entry: Answer = { kind, node: node.name, status: 'network error', retryAfter: null, ms: 0, phase };
            try {
              const res = await requests[kind]!(node, id);
              entry.status = res.status;
              entry.retryAfter = res.headers.get('retry-after');
              const body = await res.text();
              if (res.status !== 200) entry.detail = body.slice(0, 200);
              if (kind === 'job' && res.status === 200) accepted.push(id);
            } catch (err) {
              entry.status = (err as Error).name === 'TimeoutError' ? 'timeout' : 'network error';
              entry.detail = String((err as Error).cause ?? err);
            }
            entry.ms = Date.now() - started;
            answers.push(entry);
            await new Promise((r) => setTimeout(r, 100));
          }
        };
        const downAt = Date.now();
        if (variant.fault === 'stop') await cluster.stopFast();
        else await cluster.killPostmaster();
        const loops = nodes.flatMap((node) => Object.keys(requests).map((kind) => callLoop(node, kind)));

        // Midway: /readyz says not ready, the reason only to an admin key.
        await new Promise((r) => setTimeout(r, OUTAGE_MS / 2));
        for (const node of nodes) {
          const bare = await fetch(`${node.url}/readyz`);
          assert.equal(bare.status, 503);
          assert.deepEqual(await bare.json(), { status: 'not_ready' });
          const detailed = (await (await fetch(`${node.url}/readyz`, { headers: auth })).json()) as { status: string; database: { ok: boolean; error: string } };
          assert.equal(detailed.status, 'not_ready');
          assert.equal(detailed.database.ok, false);
          assert.ok(detailed.database.error.length > 0, 'the cause is shown to an admin');
          // What needs the database: 503 + Retry-After in each route family's shape.
          const retryAfter = (res: Response) => assert.ok(Number(res.headers.get('retry-after')) >= 1, `Retry-After on ${res.url}`);
          const dicts = await fetch(`${node.url}/api/v1/pronunciation-dicts`, { headers: auth });
          assert.equal(dicts.status, 503);
          retryAfter(dicts);
          assert.deepEqual(await dicts.json(), { error: 'ServiceUnavailable', message: 'The database is unavailable. Please try again later.' });
          const job = await requests.job!(node, `midway-${node.name}`);
          assert.equal(job.status, 503);
          retryAfter(job);
          assert.deepEqual(await job.json(), { error: 'The database is unavailable. Please try again later.', request_id: `midway-${node.name}` });
          // A key never verified needs a lookup: 503, not 401.
          const openai = await fetch(`${node.url}/v1/audio/speech`, {
            method: 'POST',
            headers: { authorization: `Bearer sk_${randomBase62(40)}`, 'content-type': 'application/json' },
            body: JSON.stringify({ model: 'tts-1', voice: 'alloy', input: 'Hello.' }),
          });
          assert.equal(openai.status, 503);
          retryAfter(openai);
          assert.deepEqual(await openai.json(), {
            error: { message: 'The database is unavailable. Please try again later.', type: 'server_error', param: null, code: 'service_unavailable' },
          });
        }
        await new Promise((r) => setTimeout(r, downAt + OUTAGE_MS - Date.now()));
        await cluster.start();
        const upAt = Date.now();
        phase = 'after';

        const readyAt: number[] = [];
        for (const node of nodes) {
          await until(`${node.name} ready again`, async () => (await fetch(`${node.url}/readyz`)).status === 200, RECOVERY_LIMIT_MS);
          readyAt.push(Date.now() - upAt);
        }
        // Clients go on a moment after recovery, then stop; every job accepted by then must arrive.
        await new Promise((r) => setTimeout(r, 1_000));
        calling = false;
        await Promise.all(loops);
        const acked = () => new Set(receiver.received.filter((r) => r.answered === 200).map((r) => String(r.headers['x-request-id'])));
        await until('every accepted job delivered', () => accepted.every((id) => acked().has(id)), Math.max(1, RECOVERY_LIMIT_MS - (Date.now() - upAt)));
        const deliveredAfterMs = Date.now() - upAt;

        // Serves as before: a new job is delivered, synthesis and transcription answer.
        for (const node of nodes) {
          const id = `after-${node.name}`;
          assert.equal((await requests.job!(node, id)).status, 200);
          accepted.push(id);
          for (const kind of ['synthesis', 'transcription'] as const) assert.equal((await requests[kind]!(node, '')).status, 200, `${kind} on ${node.name} after`);
        }
        await until('the new jobs delivered', () => accepted.every((id) => acked().has(id)), 15_000);

        // The figures.
        const tally = (list: Answer[]) => {
          const out: Record<string, Record<string, number>> = {};
          for (const a of list) (out[a.kind] ??= {})[String(a.status)] = (out[a.kind]![String(a.status)] ?? 0) + 1;
          return JSON.stringify(out);
        };
        const during = answers.filter((a) => a.phase === 'outage');
        const slowest = Math.max(...answers.map((a) => a.ms));
        const repeats = receiver.received.length - acked().size;
        const figures = [
          `${variant.title}: answers during the outage by kind and status ${tally(during)}; after it ${tally(answers.filter((a) => a.phase === 'after'))}`,
          `slowest answer ${slowest} ms; ready again ${readyAt.join(', ')} ms after the database; ${accepted.length} accepted jobs all delivered ${deliveredAfterMs} ms after it; ${receiver.received.length} webhook requests (${repeats} beyond one per job)`,
        ];
        for (const line of figures) t.diagnostic(line);

        // The checks.
        for (const node of nodes) assert.ok(alive(node.child), `node ${node.name} is up; logs: ${node.logs().slice(-3000)}`);
        const wrong = answers.filter((a) => !(a.status === 200 || (a.status === 503 && Number(a.retryAfter) >= 1)) || a.ms > REQUEST_LIMIT_MS);
        assert.deepEqual(wrong, [], 'every request answers within 10 s with success or 503 + Retry-After');
        assert.ok(during.some((a) => a.kind === 'job' && a.status === 503), 'job submission needs the database: 503 during the outage');
        assert.ok(during.filter((a) => a.kind === 'synthesis').every((a) => a.status === 200), 'synthesis with a verified key needs no database');
        for (const id of accepted) {
          const successes = receiver.forRequest(id).filter((r) => r.answered === 200);
          assert.equal(successes.length, 1, `${id} delivered exactly once`);
          assert.equal(successes[0]!.json.status, 'success', id);
          assert.equal(successes[0]!.json.n, id, id);
        }
        assert.ok(!receiver.received.some((r) => r.json.status === 'failed'), 'no failure payload');
        const logs = nodes.map((n) => n.logs()).join('\n');
        assert.match(logs, /database unavailable/, 'the outage is logged with its cause');
        assert.match(logs, /database usable again/);
      } finally {
        for (const node of nodes) if (alive(node.child)) node.child.kill('SIGKILL');
        await Promise.all(nodes.map((n) => (alive(n.child) ? new Promise((r) => n.child.once('exit', r)) : undefined)));
        await receiver.close();
        for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
        // The next variant needs the cluster up whatever happened here.
        await cluster.start().catch(() => undefined);
      }
    });
  });
});
