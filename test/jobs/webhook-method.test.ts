/**
 * `webhook_method`: the HTTP method a job's webhook is delivered with, asked for on the request
 * and stored with the job, so the node that delivers it (not necessarily the one that took the
 * request) uses it. Real servers on one SQLite file, a real loopback receiver, the stand-in
 * transcriber of fixtures/wav-transcribe.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { verifyWebhookSignature } from '../../src/jobs/webhook-signature.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { skipWithoutPg, withPgSchema } from '../helpers/pg-schema.js';
import { expectSttError } from '../helpers/stt-errors.js';
import { silentLog as silent, until } from './fixtures/job-options.js';
import { startReceiver } from './fixtures/receiver.js';
import { makeWav, wavTranscribe } from './fixtures/wav-transcribe.js';

const webhooks = { backoffBaseMs: 200, backoffCapMs: 400, timeoutMs: 2000, pollMs: 20 };

/** A node on the database of `shared`: its SQLite file, or the PostgreSQL URL (each node with a data dir of its own, as on two machines). */
function start(shared: { dataDir?: string; databaseUrl?: string } = {}): Promise<TestServer> {
  return startTestServer({ config: { webhooks, ...shared }, transcribe: wavTranscribe(), jobs: { log: silent } });
}

function post(s: TestServer, path: string): Promise<Response> {
  return fetch(`${s.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${s.key}`, 'content-type': 'audio/wav' }, body: makeWav(0.5) as Uint8Array<ArrayBuffer> });
}

/** A job asked for with webhook_method=GET on one node, its first attempt refused, its retry made by another node. */
async function deliveredByAnotherNode(databaseUrl?: string): Promise<void> {
  const receiver = await startReceiver(({ countForRequest }) => (countForRequest === 1 ? 503 : 200));
  const first = await start(databaseUrl ? { databaseUrl } : {});
  let second: TestServer | undefined;
  try {
    const query = new URLSearchParams({ model: 'pulse', webhook_url: receiver.url, webhook_method: 'GET', webhook_extra: 'case:42' });
    const res = await post(first, `/waves/v1/stt?${query}`);
    const accepted = (await res.json()) as { status: string; request_id: string };
    assert.equal(res.status, 200, JSON.stringify(accepted));
    assert.equal(accepted.status, 'processing');
    const requestId = accepted.request_id;

    // The first attempt is refused with a 503; the node that took the request stops before the retry.
    await until('the first attempt', () => receiver.forRequest(requestId).length === 1);
    await first.close();
    second = await start(databaseUrl ? { databaseUrl } : { dataDir: first.config.dataDir });
    await until('the retry, by the other node', () => receiver.forRequest(requestId).some((d) => d.answered === 200));

    const deliveries = receiver.forRequest(requestId);
    assert.deepEqual(deliveries.map((d) => d.method), deliveries.map(() => 'GET'));
    const delivered = deliveries.at(-1)!;
    assert.equal(delivered.json.status, 'success');
    assert.equal(delivered.json.request_id, requestId);
    assert.equal(delivered.json.case, '42');
    const account = await second.server.storage.store.db.selectFrom('accounts').select('webhook_secret').where('id', '=', first.accountId).executeTakeFirstOrThrow();
    assert.ok(verifyWebhookSignature(account.webhook_secret, delivered.body, String(delivered.headers['x-webhook-signature'])), 'the body is signed as a POST body is');

    // The job is the first node's account's: asked with its key.
    const job = await fetch(`${second.url}/waves/v1/stt/jobs/${requestId}`, { headers: { authorization: `Bearer ${first.key}` } });
    assert.equal(job.status, 200);
    assert.equal(((await job.json()) as { webhook_method: string }).webhook_method, 'GET');
  } finally {
    await Promise.all([first.close().catch(() => undefined), second?.close(), receiver.close()]);
  }
}

describe('webhook_method', () => {
  it('GET: every attempt is a GET with the JSON payload and its signature, also when another node delivers it (SQLite)', () => deliveredByAnotherNode());

  it('the same on PostgreSQL', { skip: skipWithoutPg }, () => withPgSchema('webhook_method', (url) => deliveredByAnotherNode(url)));

  it('POST by default, and on request; a method outside GET and POST is a 400 naming the field', async () => {
    const receiver = await startReceiver();
    const s = await start();
    try {
      for (const [name, method] of [['pulse', undefined], ['pulse', 'POST'], ['stt', undefined]] as const) {
        const query = new URLSearchParams({ webhook_url: receiver.url, ...(method ? { webhook_method: method } : {}) });
        const res = await post(s, `/api/v1/${name}/get_text?${query}`);
        const { request_id: requestId } = (await res.json()) as { request_id: string };
        assert.equal(res.status, 200);
        await until('the delivery', () => receiver.forRequest(requestId).length === 1);
        assert.equal(receiver.forRequest(requestId)[0]!.method, 'POST');
      }
      const refused = async (path: string) => {
        const res = await post(s, `${path}webhook_url=${encodeURIComponent(receiver.url)}&webhook_method=PUT`);
        return { res, body: (await res.json()) as Record<string, string> };
      };
      // The legacy prefix answers {error, request_id}, /waves/v1 {status: "error", message, request_id}.
      await expectSttError(refused('/api/v1/pulse/get_text?'), 400, /webhook_method/);
      for (const path of ['/waves/v1/stt?model=pulse&', '/waves/v1/pulse/get_text?']) {
        const { res, body } = await refused(path);
        assert.equal(res.status, 400);
        assert.equal(body.status, 'error');
        assert.match(body.message!, /webhook_method/);
      }
      assert.equal(receiver.received.length, 3, 'nothing was queued for the refused requests');
    } finally {
      await s.close();
      await receiver.close();
    }
  });
});
