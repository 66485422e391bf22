/**
 * A real Parley server whose log lines are kept for the test to read (what an operator would
 * see), with a user key. Close it in `after()`.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { KEY_ROLES } from '../../src/accounts/api-keys.js';
import { loadConfig, type Config } from '../../src/config.js';
import { startServer, type RunningServer, type ServerOptions } from '../../src/server.js';

export interface LoggedServer {
  server: RunningServer;
  url: string;
  key: string;
  /** Every line logged so far (HTTP and job loggers). */
  logged(): string;
}

export async function startLoggedServer(
  overrides: Partial<Config> | Record<string, unknown> = {},
  options: Omit<ServerOptions, 'logger'> = {},
): Promise<LoggedServer> {
  const lines: string[] = [];
  const stream = { write: (line: string) => void lines.push(line) };
  const dataDir = mkdtempSync(path.join(tmpdir(), 'parley-test-'));
  const config = loadConfig({}, { port: 0, host: '127.0.0.1', dataDir, modelsDir: path.join(dataDir, 'models'), ...overrides });
  const jobLog = {
    debug: (obj: object, msg: string) => lines.push(JSON.stringify({ ...obj, msg })),
    info: (obj: object, msg: string) => lines.push(JSON.stringify({ ...obj, msg })),
    warn: (obj: object, msg: string) => lines.push(JSON.stringify({ ...obj, msg })),
    error: (obj: object, msg: string) => lines.push(JSON.stringify({ ...obj, msg })),
  };
  const server = await startServer(config, { engines: false, jobs: { log: jobLog }, ...options, logger: { level: 'debug', stream } });
  const key = (await server.storage.apiKeys.create({ name: 'test', role: KEY_ROLES.user })).key;
  return { server, url: server.url, key, logged: () => lines.join('\n') };
}
