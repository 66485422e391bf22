/**
 * Webhook secret rotation with an overlap, through the admin API and the CLI: during the overlap
 * every delivery carries a signature with the new secret and one with the old, so a receiver
 * holding either accepts it; after it (or with no overlap) only the new one signs. User keys
 * cannot reach the admin API.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { KEY_ROLES } from '../../src/accounts/api-keys.js';
import { verifyWebhookSignature } from '../../src/jobs/webhook-signature.js';
import { repoRoot } from '../helpers/models.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { makeWav, wavTranscribe } from './fixtures/wav-transcribe.js';
import { startReceiver } from './fixtures/receiver.js';

const run = promisify(execFile);

describe('webhook secret rotation', () => {
  let s: TestServer;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  before(async () => {
    s = await startTestServer({ transcribe: wavTranscribe(), config: { webhooks: { backoffBaseMs: 5, backoffCapMs: 40, timeoutMs: 2_000, pollMs: 20 }, logLevel: 'warn' } });
    receiver = await startReceiver();
  });
  after(async () => {
    await s?.close();
    await receiver?.close();
  });

  const secretState = async () => (await (await s.api('/api/v1/admin/webhook-secret')).json()) as { webhook_secret: string; previous_secret_valid_until: string | null };
  const rotate = async (overlap_seconds?: number) => {
    const res = await s.api('/api/v1/admin/webhook-secret/rotate', { method: 'POST', json: overlap_seconds === undefined ? {} : { overlap_seconds } });
    assert.equal(res.status, 200);
    return (await res.json()) as { webhook_secret: string; previous_secret_valid_until: string | null };
  };
  async function deliver(): Promise<{ body: string; signature: string }> {
    const before = receiver.received.length;
    const res = await s.api(`/api/v1/stt/get_text?webhook_url=${encodeURIComponent(receiver.url)}`, { method: 'POST', headers: { 'content-type': 'audio/wav' }, body: Buffer.from(makeWav(0.2)) });
    assert.equal(res.status, 200);
    await res.arrayBuffer();
    while (receiver.received.length === before) await new Promise((r) => setTimeout(r, 20));
    const got = receiver.received.at(-1)!;
    return { body: got.body, signature: String(got.headers['x-webhook-signature']) };
  }

  it('during the overlap both secrets sign; with none only the new one does', async () => {
    const first = (await secretState()).webhook_secret;
    const rotated = await rotate(3_600);
    assert.notEqual(rotated.webhook_secret, first);
    assert.ok(Date.parse(rotated.previous_secret_valid_until!) > Date.now() + 3_500_000);
    assert.deepEqual(await secretState(), rotated);

    const during = await deliver();
    assert.equal(during.signature.match(/v1=/g)?.length, 2);
    assert.ok(verifyWebhookSignature(rotated.webhook_secret, during.body, during.signature), 'the new secret verifies');
    assert.ok(verifyWebhookSignature(first, during.body, during.signature), 'the old secret still verifies');

    const cut = await rotate(0);
    assert.equal(cut.previous_secret_valid_until, null);
    const afterCut = await deliver();
    assert.equal(afterCut.signature.match(/v1=/g)?.length, 1);
    assert.ok(verifyWebhookSignature(cut.webhook_secret, afterCut.body, afterCut.signature));
    assert.ok(!verifyWebhookSignature(rotated.webhook_secret, afterCut.body, afterCut.signature));
  });

  it('user keys get 403; a bad overlap is 400', async () => {
    const user = await s.server.storage.apiKeys.create({ name: 'user', role: KEY_ROLES.user });
    const res = await fetch(`${s.url}/api/v1/admin/webhook-secret/rotate`, { method: 'POST', headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' }, body: '{}' });
    assert.equal(res.status, 403);
    const bad = await s.api('/api/v1/admin/webhook-secret/rotate', { method: 'POST', json: { overlap_seconds: -1 } });
    assert.equal(bad.status, 400);
  });

  it('the CLI rotates with --overlap, and the server signs with both', async () => {
    const before = (await secretState()).webhook_secret;
    const keyId = (await s.server.storage.apiKeys.list()).find((k) => k.revoked_at === null && k.account_id === s.accountId)!.id;
    const { stdout } = await run(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'src/cli/parley.ts'), 'keys', 'webhook-secret', keyId, '--rotate', '--overlap', '600'], {
      cwd: repoRoot,
      env: { ...process.env, PARLEY_DATA_DIR: s.config.dataDir, DATABASE_URL: '' },
    });
    const secret = stdout.trim();
    assert.match(secret, /^whsec_/);
    const state = await secretState();
    assert.equal(state.webhook_secret, secret);
    assert.ok(state.previous_secret_valid_until);
    const delivery = await deliver();
    assert.ok(verifyWebhookSignature(secret, delivery.body, delivery.signature));
    assert.ok(verifyWebhookSignature(before, delivery.body, delivery.signature));
  });
});
