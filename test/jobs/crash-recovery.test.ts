/**
 * Restart safety: a Parley child process is killed with SIGKILL while
 * jobs are queued, running and waiting for a delivery retry, twice in a row, and restarted on the
 * same data dir each time. Every one of the 50 jobs must reach the receiver; repeats are allowed
 * (at least once) and counted.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { SqliteDatabase } from '../../src/store/sqlite-driver.js';
import { randomBase62 } from '../../src/store/ids.js';
import { startReceiver } from './fixtures/receiver.js';

const fixture = fileURLToPath(new URL('./fixtures/job-server.ts', import.meta.url));
const JOBS = 50;

function startChild(env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', fixture], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
    if (process.env.CRASH_TEST_VERBOSE) process.stderr.write(d);
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`child did not start in time; stderr: ${stderr}`)), 30_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /READY (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1]! });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`child exited with ${code} before READY; stderr: ${stderr}`));
    });
  });
}

function killHard(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

async function until(what: string, check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('crash recovery', () => {
  // Twice in a row, each on a fresh data dir: one lucky run proves little.
  for (const round of [1, 2]) {
    it(`all 50 jobs reach the receiver across two kill -9 and restarts (round ${round})`, { timeout: 60_000 }, async (t) => {
      const dataDir = mkdtempSync(path.join(tmpdir(), 'parley-crash-'));
      const key = `sk_${randomBase62(40)}`;
      // The first attempt of every job fails, so retries are pending whenever the process dies.
      const receiver = await startReceiver(({ countForRequest }) => (countForRequest === 1 ? 500 : 200));
      const acked = () => new Set(receiver.received.filter((r) => r.answered === 200).map((r) => String(r.headers['x-request-id'])));
      const env = {
        ...process.env,
        PARLEY_DATA_DIR: dataDir,
        PARLEY_API_KEY: key,
        PARLEY_ALLOWED_PRIVATE_HOSTS: '127.0.0.1',
        PARLEY_WEBHOOK_BACKOFF_MS: '200',
        PARLEY_WEBHOOKS__BACKOFF_CAP_MS: '800',
        PARLEY_WEBHOOKS__POLL_MS: '50',
        PARLEY_WEBHOOKS__CONCURRENCY: '2',
        PARLEY_WEBHOOKS__TIMEOUT_MS: '2000',
        PARLEY_RATE_LIMITS__TRANSCRIPTION__PER_MINUTE: '0',
        FIXTURE_TRANSCRIBE_MS: '100',
      };
      let current: ChildProcess | null = null;
      try {
        let { child, url } = await startChild(env);
        current = child;
        const ids = Array.from({ length: JOBS }, (_, i) => `crash-${i}`);
        for (const id of ids) {
          const res = await fetch(`${url}/api/v1/stt/test/submit`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ request_id: id, webhook_url: receiver.url, webhook_extra: `n:${id}` }),
          });
          assert.equal(res.status, 200);
          assert.deepEqual(await res.json(), { status: 'processing', request_id: id });
        }

        const seen = () => new Set(receiver.received.map((r) => String(r.headers['x-request-id'])));
        // Kill once 15, then 30 jobs have reached the receiver: the rest are still queued or running,
        // and the ones seen are mostly waiting for the retry of their failed first attempt.
        for (const threshold of [15, 30]) {
          await until(`${threshold} jobs at the receiver`, () => seen().size >= threshold, 30_000);
          await killHard(child);
          const done = acked();
          const pendingRetry = [...seen()].filter((id) => !done.has(id)).length;
          const notYet = JOBS - seen().size;
          t.diagnostic(`killed with ${done.size} acknowledged, ${pendingRetry} waiting for a retry, ${notYet} not yet transcribed or sent`);
          assert.ok(pendingRetry > 0, 'deliveries were pending at the kill');
          assert.ok(notYet > 0, 'jobs were still queued or running at the kill');
          ({ child, url } = await startChild(env));
          current = child;
        }

        await until('all 50 acknowledged', () => acked().size === JOBS, 30_000);
        assert.deepEqual([...acked()].sort(), [...ids].sort());
        for (const r of receiver.received) assert.equal(r.json.n, r.headers['x-request-id'], 'extra pair of the same job');

        const repeats = ids.map((id) => receiver.forRequest(id).filter((r) => r.answered === 200).length - 1).reduce((a, b) => a + b, 0);
        t.diagnostic(`${receiver.received.length} requests for ${JOBS} jobs; ${repeats} repeated acknowledged deliveries`);

        for (const id of ids) {
          const res = await fetch(`${url}/api/v1/stt/jobs/${id}`, { headers: { authorization: `Bearer ${key}` } });
          const job = (await res.json()) as { state: string };
          assert.equal(job.state, 'succeeded', id);
        }
        assert.equal(existsSync(path.join(dataDir, 'jobs')), false, 'job audio never touches the data dir');
        const db = new SqliteDatabase(path.join(dataDir, 'parley.db'), { readonly: true });
        try {
          assert.deepEqual(db.prepare('select count(*) as n from job_audio').get(), { n: 0 }, 'no audio left behind');
        } finally {
          db.close();
        }

        const exitCode = await new Promise<number | null>((resolve) => {
          child.once('exit', (code) => resolve(code));
          child.kill('SIGTERM');
        });
        assert.equal(exitCode, 0, 'a clean shutdown');
        current = null;
      } finally {
        if (current && current.exitCode === null && current.signalCode === null) await killHard(current);
        await receiver.close();
      }
    });
  }
});
