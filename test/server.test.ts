/**
 * The composition root's lifecycle: buildServer with engines loads the packs into inference
 * processes; close() stops background work, closes the HTTP server and releases everything it
 * opened — the inference processes exit and the database is closed.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { loadConfig } from '../src/config.js';
import { startServer } from '../src/server.js';
import { modelsDirWith } from './helpers/models.js';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('buildServer and close', () => {
  it('closing the server ends its inference processes, its database and its listener', { timeout: 120_000 }, async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'parley-lifecycle-'));
    const config = loadConfig({}, { port: 0, host: '127.0.0.1', dataDir, modelsDir: modelsDirWith(['fake-piper-tones-en_US-16k']), logLevel: 'silent' });
    const server = await startServer(config, { logger: false });
    after(() => server.close());
    assert.equal((await fetch(`${server.url}/readyz`)).status, 200);
    assert.ok(server.engines, 'engines are built by default');
    assert.deepEqual(server.engines.models.report().loaded.map((p) => p.id), ['fake-piper-tones-en_US-16k']);
    assert.ok(server.jobs, 'the job queue is built when there is a transcriber');

    const { readiness } = server.engines;
    const processes = (await readiness.inference!()).detail as { processes: Array<{ pid: number | null }> };
    const pids = processes.processes.map((p) => p.pid).filter((pid): pid is number => pid !== null);
    assert.ok(pids.length > 0, 'an inference process runs the test voice');

    await server.close();
    for (const pid of pids) {
      for (let i = 0; alive(pid) && i < 100; i++) await new Promise((r) => setTimeout(r, 50));
      assert.equal(alive(pid), false, `inference process ${pid} exited`);
    }
    await assert.rejects(server.storage.apiKeys.countActive(), 'the database is closed');
    await assert.rejects(fetch(`${server.url}/healthz`), 'nothing listens any more');
  });
});
