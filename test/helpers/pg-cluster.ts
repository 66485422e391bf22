/**
 * A PostgreSQL cluster of a test's own, for tests that stop or kill the database: initdb in a
 * temp dir, a free loopback port, trust authentication for loopback. Never the shared server.
 * PostgreSQL refuses to run as root, so as root (CI) every program runs as the `postgres` user.
 */
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './server-process.js';
import { skipWhenMissing } from './skip.js';

const run = promisify(execFile);

/** The newest /usr/lib/postgresql/<version>/bin holding initdb, postgres and pg_ctl. */
export const pgBinDir: string | undefined = (() => {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  return readdirSync(root)
    .sort((a, b) => Number(b) - Number(a))
    .map((v) => path.join(root, v, 'bin'))
    .find((bin) => ['initdb', 'postgres', 'pg_ctl'].every((p) => existsSync(path.join(bin, p))));
})();

export const skipWithoutPgServer = skipWhenMissing(
  !pgBinDir && 'needs the PostgreSQL server programs (/usr/lib/postgresql/*/bin: apt-get install postgresql; .ci/run does)',
);

export interface PgCluster {
  port: number;
  /** A URL of database `name` (create it first with createDatabase). */
  url(name: string): string;
  createDatabase(name: string): Promise<string>;
  /** Start the server (again); resolves when it accepts connections. */
  start(): Promise<void>;
  /** `pg_ctl stop -m fast`: sessions are ended ("terminating connection due to administrator command"). */
  stopFast(): Promise<void>;
  /** SIGKILL to the postmaster, as a crashed machine or an OOM kill. */
  killPostmaster(): Promise<void>;
  /** Stop it for good and delete its files. */
  destroy(): Promise<void>;
}

export async function startPgCluster(): Promise<PgCluster> {
  if (!pgBinDir) throw new Error('no PostgreSQL server programs');
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(path.join(tmpdir(), 'parley-pg-'));
  const data = path.join(dir, 'data');
  if (asRoot) {
    const id = async (flag: string) => Number((await run('id', [flag, 'postgres'])).stdout.trim());
    chownSync(dir, await id('-u'), await id('-g'));
  }
  const pgRun = (program: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', path.join(pgBinDir!, program), ...args]) : run(path.join(pgBinDir!, program), args);
  await pgRun('initdb', ['-D', data, '-U', 'parley', '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions']);
  const port = await freePort();
  // fsync off: the test measures the server's behaviour, not the disk's; the socket dir is ours.
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir} -c fsync=off -c max_connections=50`;
  const url = (name: string) => `postgres://parley@127.0.0.1:${port}/${name}`;

  const running = () => pgRun('pg_ctl', ['-D', data, 'status']).then(() => true, () => false);
  const start = async () => {
    if (await running()) return;
    // After a SIGKILL the old backends may hold the shared memory a moment longer: try again.
    for (let tries = 0; ; tries++) {
      try {
        await pgRun('pg_ctl', ['-D', data, '-o', options, '-l', path.join(dir, 'log'), '-w', '-t', '30', 'start']);
        return;
      } catch (err) {
        if (tries >= 20) throw new Error(`PostgreSQL did not start: ${(err as Error).message}\n${readFileSync(path.join(dir, 'log'), 'utf8').slice(-2000)}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  };
  await start();

  return {
    port,
    url,
    async createDatabase(name) {
      const admin = new pg.Client({ connectionString: url('postgres') });
      await admin.connect();
      try {
        await admin.query(`create database ${name}`);
      } finally {
        await admin.end();
      }
      return url(name);
    },
    start,
    async stopFast() {
      await pgRun('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
    },
    async killPostmaster() {
      const pid = Number(readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      process.kill(pid, 'SIGKILL');
      // Wait until the port is closed: the kill has taken effect.
      for (;;) {
        try {
          process.kill(pid, 0);
        } catch {
          return;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async destroy() {
      await pgRun('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
