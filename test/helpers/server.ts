/**
 * Start a real Parley server for a test: temp data dir (SQLite file), port 0, real HTTP.
 * Close it in `after()`.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { KEY_ROLES } from '../../src/accounts/api-keys.js';
import { loadConfig, type Config } from '../../src/config.js';
import { startServer, type RunningServer, type ServerOptions } from '../../src/server.js';

export interface TestServer {
  url: string;
  key: string;
  accountId: string;
  server: RunningServer;
  config: Config;
  /** fetch with the test key; `path` is relative to the base URL. */
  api(pathname: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
  close(): Promise<void>;
}

type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? (T[K] extends unknown[] ? T[K] : DeepPartial<T[K]>) : T[K] };

/**
 * `engines: true` loads the packs of config.modelsDir (synthesis, transcription, model admin);
 * without it the server has accounts, voices and dictionaries only, plus transcription and jobs
 * when a stand-in `transcribe` is given.
 */
export async function startTestServer(
  options: { config?: DeepPartial<Config>; env?: NodeJS.ProcessEnv } & Omit<ServerOptions, 'logger' | 'onFirstKey'> = {},
): Promise<TestServer> {
  const { config: overrides, env, ...serverOptions } = options;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'parley-test-'));
  const testDefaults = {
    port: 0,
    host: '127.0.0.1',
    dataDir,
    modelsDir: path.join(dataDir, 'models'),
    allowedPrivateHosts: ['127.0.0.1'],
    // Starting a server's worker threads is most of what a test costs (each eSpeak NG worker loads
    // its 24 MB of voice data): one of each pool, where a production server has one per core, and
    // no start-up paragraphs, since tests time nothing. A test about the pools sets its own.
    synthesis: { warmUpRounds: 0, espeakWorkers: 1, outputWorkers: 1 },
    transcription: { decodeWorkers: 1 },
  };
  const config = loadConfig(env ?? {}, mergeDeep(testDefaults, (overrides ?? {}) as Record<string, unknown>));
  const server = await startServer(config, { logger: false, engines: false, ...serverOptions });
  // The operator's key, as the first key a real server prints: an admin key.
  const created = await server.storage.apiKeys.create({ name: 'test', role: KEY_ROLES.admin });
  const api = (pathname: string, init: RequestInit & { json?: unknown } = {}) => {
    const headers = new Headers(init.headers);
    if (!headers.has('authorization')) headers.set('authorization', `Bearer ${created.key}`);
    let body = init.body;
    if (init.json !== undefined) {
      headers.set('content-type', 'application/json');
      body = JSON.stringify(init.json);
    }
    return fetch(server.url + pathname, { ...init, headers, body });
  };
  return { url: server.url, key: created.key, accountId: created.account.id, server, config, api, close: () => server.close() };
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `over` laid onto `base`: plain objects merge key by key, anything else replaces. */
function mergeDeep(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const under = merged[key];
    merged[key] = isPlainObject(under) && isPlainObject(value) ? mergeDeep(under, value) : value;
  }
  return merged;
}
