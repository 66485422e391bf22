/**
 * A SQLite database that stops taking writes under a running server: the file made read-only
 * (its permissions changed), and a full disk (the process may no longer grow files: RLIMIT_FSIZE
 * set on it with prlimit, as a quota or a full filesystem would). Writes must get 503 with
 * Retry-After in the route family's shape, the real cause must be in the log (never SQLite's
 * "cannot rollback - no transaction is active"), reads go on, and once the file takes writes again
 * the server is ready and works as before, without a restart.
 * Then the database's files changed in ways SQLite cannot see from inside: the WAL index
 * (parley.db-shm, which SQLite maps into memory) made immutable, where one write through the
 * mapping would end the process with SIGBUS; and the files deleted or replaced, where writes would
 * go into a file no longer at its path and be lost at the next start. The server must stay up,
 * say not ready naming the cause, refuse writes with 503, and log it.
 * The server is the job-server fixture in a child process. Permissions do not stop root, so as root
 * it runs without the capabilities that bypass them (setpriv drops them from its bounding set):
 * still root, so it reads the checkout wherever that is, but a file's mode bits apply to it.
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import { randomBase62 } from '../../src/store/ids.js';
import { repoRoot } from '../helpers/models.js';
import { skipWhenMissing } from '../helpers/skip.js';
import { until } from '../jobs/fixtures/job-options.js';
import { startReceiver } from '../jobs/fixtures/receiver.js';
import { startJobServer, type JobServerChild } from '../jobs/fixtures/start-job-server.js';

const run = promisify(execFile);
const asRoot = process.getuid?.() === 0;

/** A directory on a filesystem where `chattr +i` works (tmpfs and overlay may refuse it), or why there is none. */
function immutableCapableParent(): { dir: string } | { missing: string } {
  if (process.platform !== 'linux') return { missing: 'needs Linux (chattr)' };
  if (!asRoot) return { missing: 'needs root (chattr +i needs CAP_LINUX_IMMUTABLE)' };
  const tried: string[] = [];
  // The temporary dir, else the checkout's parent: a real disk wherever the tests run from.
  for (const parent of [tmpdir(), path.dirname(repoRoot)]) {
    const probe = mkdtempSync(path.join(parent, 'parley-chattr-probe-'));
    const file = path.join(probe, 'file');
    try {
      writeFileSync(file, '');
      execFileSync('chattr', ['+i', file], { stdio: 'ignore' });
      execFileSync('chattr', ['-i', file], { stdio: 'ignore' });
      return { dir: parent };
    } catch {
      tried.push(parent);
    } finally {
      rmSync(probe, { recursive: true, force: true });
    }
  }
  return { missing: `needs a filesystem that supports chattr +i (not ${tried.join(' nor ')})` };
}

const immutable = immutableCapableParent();

function alive(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

type Child = JobServerChild;

function startFixture(env: NodeJS.ProcessEnv, boundByPermissions: boolean): Promise<Child> {
  return startJobServer(env, boundByPermissions ? { wrapper: ['setpriv', '--bounding-set=-dac_override,-dac_read_search,-fowner'] } : {});
}

interface Running extends Child {
  dataDir: string;
  submit(id: string, seconds?: number): Promise<Response>;
  get(pathname: string): Promise<Response>;
  /** How many times the receiver acknowledged job `id`. */
  acked(id: string): number;
}

/** The fixture on a fresh data dir; with `permissions` file modes apply to it even as root. */
async function withServer(options: { permissions: boolean; parentDir?: string }, body: (s: Running) => Promise<void>) {
  const dataDir = mkdtempSync(path.join(options.parentDir ?? tmpdir(), 'parley-sqlite-fault-'));
  const key = `sk_${randomBase62(40)}`;
  const receiver = await startReceiver();
  const s = await startFixture({
    ...process.env,
    PARLEY_DATA_DIR: dataDir,
    PARLEY_API_KEY: key,
    PARLEY_ALLOWED_PRIVATE_HOSTS: '127.0.0.1',
    PARLEY_LOG_LEVEL: 'warn',
    PARLEY_WEBHOOKS__POLL_MS: '50',
    PARLEY_DATABASE__PROBE_MAX_INTERVAL_MS: '500',
    FIXTURE_TRANSCRIBE_MS: '10',
  }, options.permissions && asRoot).catch(async (err: unknown) => {
    // A server that never started must not leave the receiver holding the test process open.
    await receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  });
  const auth = { authorization: `Bearer ${key}` };
  try {
    await body({
      ...s,
      dataDir,
      submit: (id, seconds = 1) =>
        fetch(`${s.url}/api/v1/stt/test/submit`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ request_id: id, webhook_url: receiver.url, seconds }),
          signal: AbortSignal.timeout(10_000),
        }),
      get: (p) => fetch(s.url + p, { headers: auth, signal: AbortSignal.timeout(10_000) }),
      acked: (id) => receiver.forRequest(id).filter((r) => r.answered === 200).length,
    });
    assert.ok(alive(s.child), `the server is still up (exit code ${s.child.exitCode}, signal ${s.child.signalCode})`);
  } finally {
    if (alive(s.child)) {
      const exited = new Promise((r) => s.child.once('exit', r));
      s.child.kill('SIGTERM');
      const kill = setTimeout(() => s.child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(kill);
    }
    await receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** 503 with Retry-After, in the stt family's shape. */
async function expectUnavailable(res: Response): Promise<void> {
  assert.equal(res.status, 503);
  assert.ok(Number(res.headers.get('retry-after')) >= 1, 'Retry-After');
  const body = (await res.json()) as { error: string; request_id: string };
  assert.deepEqual(Object.keys(body).sort(), ['error', 'request_id']);
  assert.equal(body.error, 'The database is unavailable. Please try again later.');
}

describe('a SQLite file that stops taking writes', () => {
  it('made read-only under the running server: 503 for writes, reads go on, and it recovers', async () => {
    await withServer({ permissions: true }, async (s) => {
      assert.equal((await s.submit('before')).status, 200);
      await until('the first job delivered', () => s.acked('before') === 1);

      const file = path.join(s.dataDir, 'parley.db');
      chmodSync(file, 0o444);
      // The server notices the change within a second and reopens the file; writes before that still land.
      let refused: Response | undefined;
      for (let n = 0; !refused; n++) {
        assert.ok(n < 40, 'a write to the read-only file is refused within 2 s');
        const id = `during-${n}`;
        const res = await s.submit(id);
        if (res.status === 503) refused = res;
        else assert.equal(res.status, 200, `${await res.text()} ${s.logs()}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      await expectUnavailable(refused);
      assert.equal((await s.get('/api/v1/stt/jobs/before')).status, 200, 'reads go on');
      assert.equal((await fetch(`${s.url}/readyz`)).status, 503, 'not ready while writes fail');

      chmodSync(file, 0o644);
      await until('ready again', async () => (await fetch(`${s.url}/readyz`)).status === 200, 10_000);
      assert.equal((await s.submit('after')).status, 200);
      await until('the job after delivered', () => s.acked('after') === 1);
      assert.match(s.logs(), /attempt to write a readonly database/, 'the cause is logged');
      assert.doesNotMatch(s.logs(), /cannot rollback/);
    });
  });

  it(
    'on a full disk: 503 with the real cause logged, not "cannot rollback", and it recovers',
    { skip: skipWhenMissing(process.platform !== 'linux' && 'needs Linux (prlimit)') },
    async () => {
      // prlimit changes the limits of a process of the same user (no CAP_SYS_RESOURCE needed).
      await withServer({ permissions: false }, async (s) => {
        assert.equal((await s.submit('before')).status, 200);
        await until('the first job delivered', () => s.acked('before') === 1);

        // No file of the process may grow past 64 KiB (the soft limit; the hard one stays, so it can
        // be raised again); 30 s of audio is about 1 MB to write.
        await run('prlimit', [`--pid=${s.child.pid}`, '--fsize=65536:']);
        await expectUnavailable(await s.submit('full', 30));
        assert.equal((await fetch(`${s.url}/readyz`)).status, 503, 'not ready while writes fail');
        assert.match(s.logs(), /SQLITE_(FULL|IOERR)/, 'the real cause is logged');
        assert.doesNotMatch(s.logs(), /cannot rollback/);

        await run('prlimit', [`--pid=${s.child.pid}`, '--fsize=unlimited:']);
        await until('ready again', async () => (await fetch(`${s.url}/readyz`)).status === 200, 10_000);
        assert.equal((await s.submit('after', 30)).status, 200);
        await until('the job after delivered', () => s.acked('after') === 1);
        assert.equal(s.acked('full'), 0, 'the refused job was never stored');
      });
    },
  );
});

/** The admin view of /readyz: its status and the database's check. */
async function readiness(s: Running): Promise<{ status: number; database: { ok: boolean; error?: string } }> {
  const res = await s.get('/readyz');
  const body = (await res.json()) as { database: { ok: boolean; error?: string } };
  return { status: res.status, database: body.database };
}

describe('the database files changed under a running server', () => {
  it(
    'the WAL index (parley.db-shm) made immutable: the server stays up, says not ready, refuses writes with 503, logs why, and recovers',
    { skip: skipWhenMissing('missing' in immutable && immutable.missing) },
    async (t) => {
      const parentDir = 'dir' in immutable ? immutable.dir : tmpdir();
      await withServer({ permissions: false, parentDir }, async (s) => {
        const shm = path.join(s.dataDir, 'parley.db-shm');
        assert.equal((await s.submit('before')).status, 200);
        await until('the first job delivered', () => s.acked('before') === 1);

        const exited = new Promise<string>((resolve) => s.child.once('exit', (code, signal) => resolve(`exit code ${code}, signal ${signal}`)));
        execFileSync('chattr', ['+i', shm]);
        try {
          // The job runner polls every 50 ms: each poll is a statement that would touch the mapping.
          const during = await s.submit('during').catch((err: Error) => err);
          const outcome = await Promise.race([exited, new Promise<string>((r) => setTimeout(() => r('still running'), 1_000))]);
          t.diagnostic(`1 s after chattr +i on parley.db-shm the server is ${outcome === 'still running' ? 'still running' : `gone (${outcome})`}; the write answered ${during instanceof Error ? during.message : during.status}`);
          assert.ok(alive(s.child), `the server is up (${outcome}); logs: ${s.logs().slice(-2000)}`);
          assert.ok(!(during instanceof Error), 'the write got an answer');
          await expectUnavailable(during);
          const ready = await readiness(s);
          assert.equal(ready.status, 503, 'not ready');
          assert.equal(ready.database.ok, false);
          assert.match(ready.database.error ?? '', /parley\.db-shm/, '/readyz names the file');
          assert.equal((await s.submit('still')).status, 503);
          assert.match(s.logs(), /parley\.db-shm[^\n]*(SIGBUS|immutable)|(SIGBUS|immutable)[^\n]*parley\.db-shm/, 'the cause is logged');
        } finally {
          execFileSync('chattr', ['-i', shm]);
        }
        await until('ready again', async () => (await fetch(`${s.url}/readyz`)).status === 200, 10_000);
        assert.equal((await s.submit('after')).status, 200);
        await until('the job after delivered', () => s.acked('after') === 1);
        assert.equal(s.acked('during'), 0, 'the refused job was never stored');
      });
    },
  );

  it('the database files deleted: /readyz says not ready within 2 s naming the deletion, and writes get 503', async (t) => {
    await withServer({ permissions: false }, async (s) => {
      assert.equal((await s.submit('before')).status, 200);
      await until('the first job delivered', () => s.acked('before') === 1);

      const files = readdirSync(s.dataDir).filter((name) => name.startsWith('parley.db'));
      for (const name of files) rmSync(path.join(s.dataDir, name));
      const deletedAt = Date.now();
      let notReadyAfterMs: number | undefined;
      while (Date.now() - deletedAt < 10_000) {
        if ((await fetch(`${s.url}/readyz`)).status === 503) {
          notReadyAfterMs = Date.now() - deletedAt;
          break;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      const write = await s.submit('after-deletion');
      t.diagnostic(`deleted ${files.join(', ')}: /readyz ${notReadyAfterMs === undefined ? 'still 200 after 10 s' : `503 after ${(notReadyAfterMs / 1000).toFixed(1)} s`}; a job submitted then answered ${write.status}`);
      assert.ok(notReadyAfterMs !== undefined && notReadyAfterMs <= 2_000, 'not ready within 2 s of the deletion');
      await expectUnavailable(write);
      const ready = await readiness(s);
      assert.equal(ready.status, 503);
      assert.match(ready.database.error ?? '', /parley\.db was deleted/, '/readyz names the deletion');
      assert.match(s.logs(), /parley\.db was deleted/, 'logged');
      assert.equal(s.acked('after-deletion'), 0);
    });
  });

  it('the database file replaced by another (a copy moved over it): not ready, writes get 503, nothing reopened', async (t) => {
    await withServer({ permissions: false }, async (s) => {
      assert.equal((await s.submit('before')).status, 200);
      await until('the first job delivered', () => s.acked('before') === 1);

      const file = path.join(s.dataDir, 'parley.db');
      copyFileSync(file, `${file}.copy`);
      renameSync(`${file}.copy`, file);
      const replacedAt = Date.now();
      await until('not ready', async () => (await fetch(`${s.url}/readyz`)).status === 503, 10_000).catch(() => undefined);
      const ready = await readiness(s);
      const write = await s.submit('after-replacement');
      t.diagnostic(`parley.db replaced: /readyz ${ready.status} after ${((Date.now() - replacedAt) / 1000).toFixed(1)} s; a job submitted then answered ${write.status}`);
      assert.equal(ready.status, 503);
      assert.match(ready.database.error ?? '', /parley\.db was replaced/);
      await expectUnavailable(write);
    });
  });
});
