/**
 * Webhook delivery end to end: a real Parley server with the job queue installed, a real loopback
 * receiver, the stand-in transcriber of fixtures/wav-transcribe.ts. Backoff is milliseconds here
 * so 11 attempts take well under a second.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { InvalidRequestError } from '../../src/errors.js';
import type { JobLogger } from '../../src/jobs/job-events.js';
import type { JobService, JobView } from '../../src/jobs/job-service.js';
import { parseWebhookExtra } from '../../src/jobs/webhook-extra.js';
import { verifyWebhookSignature } from '../../src/jobs/webhook-signature.js';
import type { TranscriptionOptions } from '../../src/transcription/types.js';
import { version } from '../../src/version.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { makeWav, wavTranscribe } from './fixtures/wav-transcribe.js';
import { plainOptions, silentLog as silent } from './fixtures/job-options.js';
import { startReceiver } from './fixtures/receiver.js';

const options: TranscriptionOptions = { ...plainOptions, filename: 'call.wav' };
const fastWebhooks = { backoffBaseMs: 5, backoffCapMs: 40, timeoutMs: 400, pollMs: 20, concurrency: 2 };

async function startWithJobs(config: object = {}): Promise<{ t: TestServer; jobs: JobService; errors: unknown[]; logged: string[] }> {
  let jobs!: JobService;
  const logged: string[] = [];
  const log: JobLogger = { ...silent, error: (_obj, msg) => logged.push(msg) };
  const t = await startTestServer({
    config: { webhooks: fastWebhooks, ...config },
    transcribe: wavTranscribe(),
    jobs: { log },
  });
  jobs = t.server.jobs!.service;
  const errors: unknown[] = [];
  jobs.events.on('job:error', (e) => errors.push(e.error));
  return { t, jobs, errors, logged };
}

async function waitForEnd(jobs: JobService, accountId: string, requestId: string, timeoutMs = 15_000): Promise<JobView> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await jobs.get(accountId, requestId);
    if (job && (job.state === 'succeeded' || job.state === 'failed')) return job;
    if (Date.now() > deadline) throw new Error(`job ${requestId} still ${job?.state} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('webhook delivery', () => {
  let t: TestServer;
  let jobs: JobService;
  let errors: unknown[];
  let logged: string[];
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let n = 0;

  before(async () => {
    ({ t, jobs, errors, logged } = await startWithJobs());
    receiver = await startReceiver();
  });
  after(async () => {
    await t.close();
    await receiver.close();
    assert.deepEqual(errors, [], 'no unexpected runner errors');
  });

  const submit = async (answer: Parameters<typeof receiver.setAnswer>[0], extra = '', bytes = makeWav(1.5)) => {
    const requestId = `req-test-${++n}`;
    receiver.setAnswer(answer);
    await jobs.submit({
      accountId: t.accountId,
      requestId,
      input: { bytes, contentType: 'audio/wav' },
      options,
      webhookUrl: receiver.url,
      webhookExtra: parseWebhookExtra(extra),
    });
    return requestId;
  };

  it('delivers the success payload with the extra pairs, headers and a signature that verifies', async () => {
    const requestId = await submit(() => 200, 'order:42,customer:acme');
    const job = await waitForEnd(jobs, t.accountId, requestId);
    assert.equal(job.state, 'succeeded');
    const [got, ...more] = receiver.forRequest(requestId);
    assert.ok(got);
    assert.equal(more.length, 0);
    assert.equal(got.json.status, 'success');
    assert.equal(got.json.request_id, requestId);
    assert.equal(got.json.duration, 1.5);
    assert.equal(got.json.language, 'en');
    assert.deepEqual(got.json.words, []);
    assert.deepEqual(got.json.utterances, []);
    assert.deepEqual(got.json.metadata, { filename: 'call.wav', duration: 1.5, fileSize: makeWav(1.5).byteLength });
    assert.equal(got.json.order, '42');
    assert.equal(got.json.customer, 'acme');
    assert.equal(got.headers['content-type'], 'application/json');
    assert.equal(got.headers['user-agent'], `Parley-Webhooks/${version}`);
    assert.equal(got.headers['x-webhook-attempt'], '1');
    const account = await t.server.storage.accounts.find(t.accountId);
    const signature = String(got.headers['x-webhook-signature']);
    assert.match(signature, /^t=\d+,v1=[0-9a-f]{64}$/);
    assert.equal(verifyWebhookSignature(account!.webhook_secret, got.body, signature), true);
    assert.equal(verifyWebhookSignature('whsec_wrong', got.body, signature), false);
  });

  it('GET /jobs/{request_id} shows state and attempts to the owner, 404 to other accounts', async () => {
    const requestId = await submit(() => 200);
    await waitForEnd(jobs, t.accountId, requestId);
    const res = await t.api(`/api/v1/stt/jobs/${requestId}`);
    assert.equal(res.status, 200);
    const body = (await res.json()) as any;
    assert.equal(body.state, 'succeeded');
    assert.equal(body.outcome, 'success');
    assert.equal(body.result.duration, 1.5);
    assert.equal(body.attempts.length, 1);
    assert.equal(body.attempts[0].status_code, 200);
    assert.equal(body.attempts[0].attempt, 1);
    assert.ok(!Number.isNaN(Date.parse(body.attempts[0].at)));

    const other = await t.server.storage.apiKeys.create({ name: 'other' });
    const foreign = await fetch(`${t.url}/api/v1/stt/jobs/${requestId}`, { headers: { authorization: `Bearer ${other.key}` } });
    assert.equal(foreign.status, 404);
    const err = (await foreign.json()) as any;
    assert.equal(typeof err.error, 'string');
    assert.equal(typeof err.request_id, 'string');
    assert.equal((await t.api('/api/v1/stt/jobs/nope')).status, 404);

    const ready = (await (await t.api('/readyz')).json()) as any;
    assert.equal(ready.jobs.ok, true);
    assert.ok(ready.jobs.detail.byState.succeeded >= 1);
  });

  it('a receiver answering 500 gets exactly 11 attempts; the job ends failed with each attempt recorded', async () => {
    const requestId = await submit(() => 500);
    const job = await waitForEnd(jobs, t.accountId, requestId);
    assert.equal(job.state, 'failed');
    assert.equal(job.outcome, 'success');
    assert.match(job.lastError ?? '', /gave up after 11 attempts/);
    const got = receiver.forRequest(requestId);
    assert.equal(got.length, 11);
    assert.deepEqual(got.map((r) => r.headers['x-webhook-attempt']), Array.from({ length: 11 }, (_, i) => String(i + 1)));
    assert.equal(job.attempts.length, 11);
    assert.ok(job.attempts.every((a) => a.statusCode === 500 && /500/.test(a.error ?? '')));
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(receiver.forRequest(requestId).length, 11, 'no attempt after giving up');
  });

  it('stops retrying at the first 2xx (after 3 failures)', async () => {
    const requestId = await submit(({ countForRequest }) => (countForRequest <= 3 ? 503 : 204));
    const job = await waitForEnd(jobs, t.accountId, requestId);
    assert.equal(job.state, 'succeeded');
    assert.deepEqual(job.attempts.map((a) => a.statusCode), [503, 503, 503, 204]);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(receiver.forRequest(requestId).length, 4);
  });

  it('retries 408 and 429, and a 404 ends delivery at once', async () => {
    const retried = await submit(({ countForRequest }) => [408, 429, 200][countForRequest - 1] ?? 200);
    assert.deepEqual((await waitForEnd(jobs, t.accountId, retried)).attempts.map((a) => a.statusCode), [408, 429, 200]);

    const requestId = await submit(() => 404);
    const job = await waitForEnd(jobs, t.accountId, requestId);
    assert.equal(job.state, 'failed');
    assert.equal(job.attempts.length, 1);
    assert.equal(job.attempts[0]!.statusCode, 404);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(receiver.forRequest(requestId).length, 1);
  });

  it('times out a hanging receiver and retries', async () => {
    const requestId = await submit(({ countForRequest }) => (countForRequest === 1 ? 'hang' : 200));
    const job = await waitForEnd(jobs, t.accountId, requestId);
    assert.equal(job.state, 'succeeded');
    assert.equal(job.attempts.length, 2);
    assert.equal(job.attempts[0]!.statusCode, null);
    assert.match(job.attempts[0]!.error ?? '', /timed out/);
    assert.equal(job.attempts[1]!.statusCode, 200);
  });

  it('a throwing event listener is logged and does not stop delivery', async () => {
    const off = jobs.events.on('job:delivered', () => {
      throw new Error('listener bug');
    });
    try {
      const requestId = await submit(() => 200);
      assert.equal((await waitForEnd(jobs, t.accountId, requestId)).state, 'succeeded');
      assert.ok(logged.includes('a job event listener threw'));
    } finally {
      off();
    }
  });

  it('audio that cannot be transcribed produces the failed payload, with the extra pairs', async () => {
    const requestId = await submit(() => 200, 'ticket:T-9', new TextEncoder().encode('this is not audio at all'));
    const job = await waitForEnd(jobs, t.accountId, requestId);
    assert.equal(job.state, 'failed');
    assert.equal(job.outcome, 'failed');
    assert.equal(job.attempts.length, 1);
    const [got] = receiver.forRequest(requestId);
    assert.deepEqual(got!.json, {
      status: 'failed',
      error: 'Invalid file format. Supported formats: audio/*',
      request_id: requestId,
      ticket: 'T-9',
    });
  });

  it('refuses a webhook URL that is not http(s), names a forbidden address, or repeats a request id', async () => {
    const base = { accountId: t.accountId, input: { bytes: makeWav(0.1), contentType: 'audio/wav' }, options, webhookExtra: {} };
    await assert.rejects(jobs.submit({ ...base, requestId: 'r-ftp', webhookUrl: 'ftp://127.0.0.1/x' }), InvalidRequestError);
    await assert.rejects(jobs.submit({ ...base, requestId: 'r-meta', webhookUrl: 'http://169.254.169.254/latest' }), /not allowed/);
    await assert.rejects(jobs.submit({ ...base, requestId: 'r-bad', webhookUrl: 'not a url' }), InvalidRequestError);
    await assert.rejects(jobs.submit({ ...base, requestId: 'r-extra', webhookUrl: receiver.url, webhookExtra: { status: 'x' } }), /collides/);
    await jobs.submit({ ...base, requestId: 'r-dup', webhookUrl: receiver.url });
    await assert.rejects(jobs.submit({ ...base, requestId: 'r-dup', webhookUrl: receiver.url }), /already exists/);
  });
});

describe('webhook address rules', () => {
  it('a receiver whose name resolves to a refused address is never contacted; delivery gives up', async () => {
    const { t, jobs, errors } = await startWithJobs({ allowedPrivateHosts: [] });
    const receiver = await startReceiver();
    try {
      const requestId = 'req-forbidden';
      await jobs.submit({
        accountId: t.accountId,
        requestId,
        input: { bytes: makeWav(0.2), contentType: 'audio/wav' },
        options,
        webhookUrl: receiver.url.replace('127.0.0.1', 'localhost'),
        webhookExtra: {},
      });
      const job = await waitForEnd(jobs, t.accountId, requestId);
      assert.equal(job.state, 'failed');
      assert.equal(job.attempts.length, 1);
      assert.match(job.attempts[0]!.error ?? '', /not allowed/);
      assert.equal(receiver.received.length, 0);
      assert.deepEqual(errors, []);
    } finally {
      await t.close();
      await receiver.close();
    }
  });
});
