/**
 * Many nodes, one database: two `parley serve` child processes on one PostgreSQL
 * database, each with its own data dir as on two machines, the real transcriber (Silero VAD +
 * a tiny zipformer) and a loopback webhook receiver.
 * - 30 webhook jobs go to node A and 30 to node B; A is killed with SIGKILL mid-run. All 60 must
 *   reach the receiver with a success payload, none failed, none acknowledged twice.
 * - A key made by the CLI and a dictionary made through A work on B.
 * - An account's burst is shared: spent across both nodes, the next request gets 429 on either.
 * Runs when PARLEY_TEST_DATABASE_URL is set (.ci/run's PostgreSQL job sets it).
 */
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { openStore, type Store } from '../../src/store/database.js';
import { randomBase62 } from '../../src/store/ids.js';
import { REAL_TEST_MODELS, corpusFile, modelsDirWith, needs, repoRoot } from '../helpers/models.js';
import { skipWithoutPg, withPgSchema } from '../helpers/pg-schema.js';
import { until } from './fixtures/job-options.js';
import { startReceiver } from './fixtures/receiver.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH], corpus: true });

const JOBS_PER_NODE = 30;
const MANAGEMENT_BURST = 6;
const cli = path.join(repoRoot, 'src/cli/parley.ts');
const run = promisify(execFile);

interface Node {
  name: string;
  child: ChildProcess;
  url: string;
  stderr: () => string;
}

/** `parley serve` in a child process; resolves with its URL once it listens. */
function startNode(name: string, env: NodeJS.ProcessEnv): Promise<Node> {
  // Tests never download: the models are the test's.
  const child = spawn(process.execPath, ['--import', 'tsx', cli, 'serve'], { env: { PARLEY_MODELS__AUTO_PULL: 'false', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`node ${name} did not listen in time; stderr: ${stderr}`)), 90_000);
    child.stdout!.on('data', (d: Buffer) => {
      out = (out + d.toString()).slice(-100_000);
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        out = '';
        child.stdout!.removeAllListeners('data');
        child.stdout!.resume();
        resolve({ name, child, url: m[1]!, stderr: () => stderr });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`node ${name} exited with ${code} before listening; stderr: ${stderr}`));
    });
  });
}

function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

async function count(store: Store, query: ReturnType<typeof sql<{ n: string | number }>>): Promise<number> {
  return Number((await query.execute(store.db)).rows[0]!.n);
}

describe('two nodes on one PostgreSQL database', { skip: NEEDS }, () => {
  it('share jobs, keys, dictionaries and rate limits, and lose nothing when one is killed', { skip: skipWithoutPg, timeout: 240_000 }, (t) =>
    withPgSchema('two_nodes', async (databaseUrl) => {
      const operatorKey = `sk_${randomBase62(40)}`;
      const receiver = await startReceiver();
      const modelsDir = modelsDirWith(['silero-vad-v5', 'sherpa-onnx-kws-zipformer-gigaspeech-3.3M-2024-01-01-mobile']);
      const baseEnv = {
        ...process.env,
        DATABASE_URL: databaseUrl,
        PORT: '0',
        HOST: '127.0.0.1',
        PARLEY_API_KEY: operatorKey,
        PARLEY_MODELS_DIR: modelsDir,
        PARLEY_ALLOWED_PRIVATE_HOSTS: '127.0.0.1',
        PARLEY_LOG_LEVEL: 'info',
        PARLEY_TRANSCRIPTION__WORKERS: '1',
        PARLEY_WEBHOOKS__CONCURRENCY: '2',
        PARLEY_WEBHOOKS__POLL_MS: '50',
        // A dead node's jobs are taken over 3 s after its last heartbeat.
        PARLEY_WEBHOOKS__STALE_LOCK_MS: '3000',
        PARLEY_WEBHOOK_BACKOFF_MS: '200',
        PARLEY_RATE_LIMITS__TRANSCRIPTION__PER_MINUTE: '0',
        PARLEY_RATE_LIMITS__MANAGEMENT__PER_MINUTE: '1',
        PARLEY_RATE_LIMITS__MANAGEMENT__BURST: String(MANAGEMENT_BURST),
      };
      const nodeEnv = (name: string) => ({ ...baseEnv, PARLEY_DATA_DIR: mkdtempSync(path.join(tmpdir(), `parley-node-${name}-`)) });
      // Both start at once with the same PARLEY_API_KEY: it must be stored once.
      const started = await Promise.allSettled([startNode('A', nodeEnv('A')), startNode('B', nodeEnv('B'))]);
      const nodes = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
      const store = await openStore({ databaseUrl, dataDir: '' });
      try {
        for (const s of started) if (s.status === 'rejected') throw s.reason;
        const [a, b] = nodes as [Node, Node];
        const call = (node: Node, key: string, pathname: string, init: RequestInit = {}) =>
          fetch(node.url + pathname, { ...init, headers: { authorization: `Bearer ${key}`, ...(init.headers as Record<string, string>) } });
        assert.equal(await count(store, sql`select count(*) as n from api_keys`), 1, 'the operator key is stored once');

        // A key made by the CLI (as on A's machine) works on both nodes.
        const made = await run(process.execPath, ['--import', 'tsx', cli, 'keys', 'create', '--name', 'two-nodes', '--json'], {
          cwd: repoRoot,
          env: { ...baseEnv, PARLEY_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'parley-cli-')) },
        });
        const key = (JSON.parse(made.stdout) as { key: string }).key;
        for (const node of [a, b]) assert.equal((await call(node, key, '/api/v1/tts-v2/get_voices')).status, 200, `the new key works on ${node.name}`);

        // A dictionary made through A is listed and used on B.
        const dictRes = await call(a, key, '/api/v1/pronunciation-dicts', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ items: [{ word: 'Parley', pronunciation: 'parlay' }] }),
        });
        assert.equal(dictRes.status, 200);
        const dictId = ((await dictRes.json()) as { id: string }).id;
        const listed = (await (await call(b, key, '/api/v1/pronunciation-dicts')).json()) as Array<{ id: string }>;
        assert.deepEqual(listed.map((d) => d.id), [dictId]);
        const speak = (dicts: string[]) =>
          call(b, key, '/api/v1/tts-v2/get_speech', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ text: 'Parley works.', voice_id: 'espeak-en-us-male', pronunciation_dicts: dicts }),
          });
        const spoken = await speak([dictId]);
        assert.equal(spoken.status, 200, 'B synthesises with the dictionary made on A');
        assert.ok((await spoken.arrayBuffer()).byteLength > 1000);
        const unknown = await speak(['dict_unknown0']);
        assert.equal(unknown.status, 400, 'an unknown dictionary is refused, so the one above was found');
        await unknown.arrayBuffer();

        // The burst of another account, spent across both nodes.
        const burstKey = (JSON.parse((await run(process.execPath, ['--import', 'tsx', cli, 'keys', 'create', '--json'], { cwd: repoRoot, env: { ...baseEnv, PARLEY_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'parley-cli-')) } })).stdout) as { key: string }).key;
        const statuses: number[] = [];
        for (let i = 0; i < MANAGEMENT_BURST; i++) statuses.push((await call([a, b][i % 2]!, burstKey, '/api/v1/pronunciation-dicts')).status);
        assert.deepEqual(statuses, Array(MANAGEMENT_BURST).fill(200));
        for (const node of [a, b]) {
          const limited = await call(node, burstKey, '/api/v1/pronunciation-dicts');
          assert.equal(limited.status, 429, `${node.name} refuses once the burst is spent on both`);
          assert.ok(Number(limited.headers.get('retry-after')) > 0);
          assert.equal(((await limited.json()) as { error: string }).error, 'TooManyRequests');
        }

        // 30 jobs to each node.
        const wav = new Uint8Array(readFileSync(corpusFile('en/cmu-arctic-axb-a0004.wav')));
        const ids = Array.from({ length: 2 * JOBS_PER_NODE }, (_, i) => `job-${i < JOBS_PER_NODE ? 'a' : 'b'}-${i}`);
        const query = `webhook_url=${encodeURIComponent(receiver.url)}`;
        await Promise.all(
          ids.map(async (id, i) => {
            const res = await call(i < JOBS_PER_NODE ? a : b, key, `/api/v1/stt/get_text?${query}&webhook_extra=n:${id}`, {
              method: 'POST',
              headers: { 'content-type': 'audio/wav', 'x-request-id': id },
              body: wav,
            });
            assert.deepEqual(await res.json(), { status: 'processing', request_id: id });
          }),
        );

        // Mid-run: some delivered, A holding work. Deliveries are held at the receiver for the
        // moment of the kill, so the kill cannot fall between a receiver's 200 and A recording
        // it (delivery is at least once, so that repeat would be allowed); any repeat left would be the nodes racing.
        const acked = () => receiver.received.filter((r) => r.answered === 200);
        await until('10 deliveries', () => acked().length >= 10, 120_000);
        const heldByA = sql<{ n: string }>`select count(*) as n from jobs where locked_by like ${`%-${a.child.pid}-%`}`;
        await until('A to hold jobs', async () => (await count(store, heldByA)) > 0, 30_000);
        receiver.hold();
        const ackedIds = acked().map((r) => String(r.headers['x-request-id']));
        await until('every acknowledged delivery to be recorded', async () => {
          const done = sql<{ n: string }>`select count(*) as n from jobs where state = 'succeeded' and request_id in (${sql.join(ackedIds)})`;
          return (await count(store, done)) === ackedIds.length;
        }, 10_000);
        const inFlightAtKill = await count(store, heldByA);
        a.child.kill('SIGKILL');
        await exited(a.child);
        await new Promise((r) => setTimeout(r, 300));
        receiver.release();
        t.diagnostic(`A killed holding ${inFlightAtKill} jobs, with ${ackedIds.length} of 60 acknowledged`);
        assert.ok(inFlightAtKill > 0);
        assert.ok(ackedIds.length < ids.length, 'jobs were left when A died');

        await until('all 60 acknowledged', () => new Set(acked().map((r) => r.headers['x-request-id'])).size === ids.length, 150_000);

        for (const id of ids) {
          const successes = receiver.forRequest(id).filter((r) => r.answered === 200);
          assert.equal(successes.length, 1, `${id} acknowledged once`);
          const payload = successes[0]!.json;
          assert.equal(payload.status, 'success', id);
          assert.equal(payload.request_id, id);
          assert.equal(payload.n, id, 'its own webhook_extra pair');
          assert.equal(payload.language, 'en');
          assert.ok(typeof payload.transcription === 'string' && payload.transcription.length > 0, `${id} has a transcript`);
        }
        assert.ok(!receiver.received.some((r) => r.json.status === 'failed'), 'no failure payload was ever sent');
        for (const id of ids) {
          const view = (await (await call(b, key, `/api/v1/stt/jobs/${id}`)).json()) as { state: string; outcome: string };
          assert.deepEqual([view.state, view.outcome], ['succeeded', 'success'], id);
        }
        assert.equal(await count(store, sql`select count(*) as n from job_audio`), 0, 'no job audio left in the database');

        // B shuts down gracefully: exit 0, nothing left locked.
        b.child.kill('SIGTERM');
        assert.equal(await exited(b.child), 0, `B stops cleanly; stderr: ${b.stderr()}`);
        assert.equal(await count(store, sql`select count(*) as n from jobs where locked_by is not null`), 0);
        t.diagnostic(`${receiver.received.length} webhook requests for ${ids.length} jobs`);
      } finally {
        for (const node of nodes) if (node.child.exitCode === null && node.child.signalCode === null) node.child.kill('SIGKILL');
        await Promise.all(nodes.map((n) => exited(n.child)));
        await store.close();
        await receiver.close();
      }
    }),
  );
});
