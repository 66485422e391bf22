import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { loadConfig } from '../../src/config.js';
import { startServer } from '../../src/server.js';
import { repoRoot } from '../helpers/models.js';

const run = promisify(execFile);

function parley(args: string[], env: NodeJS.ProcessEnv) {
  return run(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'src/cli/parley.ts'), ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
  });
}

describe('parley keys (CLI)', () => {
  it('creates a key that authenticates, lists it, and revoking it locks the client out', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'parley-cli-'));
    const env = { PARLEY_DATA_DIR: dataDir, DATABASE_URL: '' };
    const created = JSON.parse((await parley(['keys', 'create', '--name', 'alice', '--json'], env)).stdout);
    assert.match(created.key, /^sk_[A-Za-z0-9]{40}$/);

    const listed = JSON.parse((await parley(['keys', 'list', '--json'], env)).stdout);
    assert.equal(listed.length, 1);
    assert.equal(listed[0].id, created.id);
    assert.equal(listed[0].name, 'alice');
    assert.ok(!JSON.stringify(listed).includes(created.key), 'the key itself is never listed');

    const keyCacheTtlMs = 300;
    const server = await startServer(loadConfig({}, { port: 0, host: '127.0.0.1', dataDir, auth: { keyCacheTtlMs } }), { logger: false, engines: false });
    try {
      const ok = await fetch(`${server.url}/api/v1/tts-v2/get_voices`, { headers: { authorization: `Bearer ${created.key}` } });
      assert.equal(ok.status, 200);
      await parley(['keys', 'revoke', created.id], env);
      // The server remembers key lookups for keyCacheTtlMs: the revocation (made by another process) shows within it.
      const until = Date.now() + keyCacheTtlMs + 2_000;
      let revoked: Response;
      do revoked = await fetch(`${server.url}/api/v1/tts-v2/get_voices`, { headers: { authorization: `Bearer ${created.key}` } });
      while (revoked.status === 200 && Date.now() < until);
      assert.equal(revoked.status, 401);
    } finally {
      await server.close();
    }
    await assert.rejects(parley(['keys', 'revoke', created.id], env), /No active key/);
  });

  it('makes admin keys with --admin, user keys without, lists roles and changes them', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'parley-cli-'));
    const env = { PARLEY_DATA_DIR: dataDir, DATABASE_URL: '' };
    const admin = JSON.parse((await parley(['keys', 'create', '--name', 'ops', '--admin', '--json'], env)).stdout);
    const user = JSON.parse((await parley(['keys', 'create', '--name', 'app', '--json'], env)).stdout);
    assert.equal(admin.role, 'admin');
    assert.equal(user.role, 'user');
    const text = (await parley(['keys', 'list'], env)).stdout;
    assert.match(text, new RegExp(`^${admin.id}\t${admin.accountId}\tops\tadmin\tsk_`, 'm'));
    assert.match(text, new RegExp(`^${user.id}\t${user.accountId}\tapp\tuser\tsk_`, 'm'));

    // What the server's auth hook gets for each key (admin routes: test/http/plugins/admin-roles.test.ts).
    const keyCacheTtlMs = 300;
    const server = await startServer(loadConfig({}, { port: 0, host: '127.0.0.1', dataDir, auth: { keyCacheTtlMs } }), { logger: false, engines: false });
    try {
      const role = async (key: string) => (await server.storage.apiKeys.authenticate(key))?.role;
      assert.equal(await role(admin.key), 'admin');
      assert.equal(await role(user.key), 'user');
      assert.equal((await parley(['keys', 'role', user.id, 'admin'], env)).stdout, `${user.id} is now admin\n`);
      // Made by another process: the server's key cache shows it within keyCacheTtlMs.
      const until = Date.now() + keyCacheTtlMs + 2_000;
      while ((await role(user.key)) !== 'admin' && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      assert.equal(await role(user.key), 'admin');
    } finally {
      await server.close();
    }
    await assert.rejects(parley(['keys', 'role', user.id, 'root'], env), /keys role needs a key id and admin or user/);
  });

  it('creates and prints a first key on first start, and accepts PARLEY_API_KEY', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'parley-cli-'));
    let printed = '';
    const first = await startServer(loadConfig({}, { port: 0, host: '127.0.0.1', dataDir }), { logger: false, engines: false, onFirstKey: (k) => (printed = k) });
    try {
      assert.match(printed, /^sk_/);
      const r = await fetch(`${first.url}/api/v1/tts-v2/get_voices`, { headers: { authorization: `Bearer ${printed}` } });
      assert.equal(r.status, 200);
      assert.equal((await first.storage.apiKeys.authenticate(printed))?.role, 'admin', 'the printed key is an admin key');
    } finally {
      await first.close();
    }
    let printedAgain = '';
    const second = await startServer(loadConfig({}, { port: 0, host: '127.0.0.1', dataDir }), { logger: false, engines: false, onFirstKey: (k) => (printedAgain = k) });
    await second.close();
    assert.equal(printedAgain, '', 'a key is printed only on the first start');

    const envKey = 'sk_' + 'E'.repeat(36);
    const envDataDir = mkdtempSync(path.join(tmpdir(), 'parley-cli-'));
    const withEnv = await startServer(loadConfig({ PARLEY_API_KEY: envKey }, { port: 0, host: '127.0.0.1', dataDir: envDataDir }), { logger: false, engines: false });
    try {
      const r = await fetch(`${withEnv.url}/api/v1/tts-v2/get_voices`, { headers: { authorization: `Bearer ${envKey}` } });
      assert.equal(r.status, 200);
      assert.equal((await withEnv.storage.apiKeys.authenticate(envKey))?.role, 'admin', 'PARLEY_API_KEY is an admin key');
      // Stored as a user key by someone (keys role), it is made admin again at the next start.
      const { keyId } = (await withEnv.storage.apiKeys.authenticate(envKey))!;
      await withEnv.storage.apiKeys.setRole(keyId, 'user');
    } finally {
      await withEnv.close();
    }
    const again = await startServer(loadConfig({ PARLEY_API_KEY: envKey }, { port: 0, host: '127.0.0.1', dataDir: envDataDir }), { logger: false, engines: false });
    try {
      assert.equal((await again.storage.apiKeys.authenticate(envKey))?.role, 'admin');
      assert.equal((await again.storage.apiKeys.list()).length, 1, 'stored once');
    } finally {
      await again.close();
    }
  });
});
