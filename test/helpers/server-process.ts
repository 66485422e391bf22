/**
 * A Parley server as its own process (`parley serve` through tsx) on loopback: for tests that kill
 * processes around it and must see that the server itself lives on, and for benches that measure
 * the server's own memory. The caller gets the base URL, the key and the child to stop.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Agent, fetch as undiciFetch } from 'undici';
import { repoRoot, sharedModel } from './models.js';

export interface ServerProcess {
  url: string;
  key: string;
  /** The server's models dir (links to the shared packs). */
  modelsDir: string;
  child: ChildProcess;
  /** Authenticated JSON of /readyz. */
  readiness(): Promise<Readiness>;
  stop(): Promise<void>;
}

export interface ProcessStatus {
  name: string;
  pid: number | null;
  state: string;
  models: string[];
  restarts: number;
  tasks: { running: number; waiting: number; completed: number; failed: number };
}

export interface Readiness {
  status: string;
  inference?: { detail: { processes: ProcessStatus[] } };
  models?: { detail: { started: string[]; kept: string[] } };
}

/** A port free on loopback now (for a listener a child process opens). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/**
 * Starts the server with links to the named shared packs in its models dir; `env` adds settings.
 * `built` runs the compiled server (`npm run build` first), as users run it: no TypeScript loader
 * in it or its child processes, which is what memory figures should see.
 */
export async function startServerProcess(
  packs: string[],
  env: Record<string, string> = {},
  options: {
    built?: boolean;
    /** The server serves HTTPS (env sets PARLEY_TLS__*): the certificate to trust. */
    tls?: { ca: Buffer };
    /** Started under `taskset -c <cpus>` (e.g. "0"): the server and everything it starts may use only these CPUs. */
    cpus?: string;
  } = {},
): Promise<ServerProcess> {
  const dispatcher = options.tls && new Agent({ connect: { ca: options.tls.ca } });
  const get = (url: string, init: { headers?: Record<string, string> } = {}) => (dispatcher ? undiciFetch(url, { ...init, dispatcher }) : fetch(url, init));
  const dataDir = mkdtempSync(path.join(tmpdir(), 'parley-proc-'));
  const models = path.join(dataDir, 'models');
  mkdirSync(models);
  for (const name of packs) symlinkSync(sharedModel(name), path.join(models, name), 'dir');
  const port = await freePort();
  const key = `sk_${'c'.repeat(40)}`;
  const entry = options.built ? [path.join(repoRoot, 'bin/parley.js')] : ['--import', 'tsx', path.join(repoRoot, 'src/cli/parley.ts')];
  // taskset execs the server in the same process, so the child's pid is the server's.
  const [command, ...args] = options.cpus ? ['taskset', '-c', options.cpus, process.execPath, ...entry, 'serve'] : [process.execPath, ...entry, 'serve'];
  const child = spawn(command!, args, {
    cwd: repoRoot,
    stdio: ['ignore', process.env.PARLEY_TEST_SERVER_LOGS ? 'inherit' : 'ignore', process.env.PARLEY_TEST_SERVER_LOGS ? 'inherit' : 'ignore'],
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      PARLEY_DATA_DIR: dataDir,
      PARLEY_MODELS_DIR: models,
      PARLEY_API_KEY: key,
      PARLEY_LOG_LEVEL: 'warn',
      PARLEY_ALLOWED_PRIVATE_HOSTS: '127.0.0.1',
      PARLEY_RATE_LIMITS__SYNTHESIS__PER_MINUTE: '0',
      PARLEY_RATE_LIMITS__TRANSCRIPTION__PER_MINUTE: '0',
      PARLEY_RATE_LIMITS__MANAGEMENT__PER_MINUTE: '0',
      // Tests never download on their own: a test that wants the first-run installs sets it and a mirror.
      PARLEY_MODELS__AUTO_PULL: 'false',
      ...env,
    },
  });
  const url = `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  const readiness = async (): Promise<Readiness> => {
    const r = await get(`${url}/readyz`, { headers: { authorization: `Bearer ${key}` } });
    return (await r.json()) as Readiness;
  };
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`the server process did not start (exit code ${child.exitCode})`);
    }
    try {
      if ((await get(`${url}/readyz`)).status === 200) break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url, key, modelsDir: models, child, readiness, stop };
}

/** The named inference process as /readyz shows it. */
export async function inferenceProcess(server: ServerProcess, name: string): Promise<ProcessStatus | undefined> {
  return (await server.readiness()).inference?.detail.processes.find((p) => p.name === name);
}
