/**
 * Asynchronous transcription over real HTTP: POST /stt/get_text with
 * webhook_url, the real transcriber and engines, a real loopback webhook receiver, and
 * GET /stt/jobs/{request_id}. Backoff is milliseconds so a retried delivery takes no time.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { verifyWebhookSignature } from '../../../src/jobs/webhook-signature.js';
import { version } from '../../../src/version.js';
import { REAL_TEST_MODELS, corpusFile, modelsDirWith, needs } from '../../helpers/models.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { startReceiver, type ReceivedWebhook } from '../../jobs/fixtures/receiver.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH], corpus: true });

const AUDIO = 'en/cmu-arctic-axb-a0004.wav';
const INVALID_FORMAT = 'Invalid file format. Supported formats: audio/*';
const RESULT_FIELDS = ['status', 'request_id', 'transcription', 'language', 'words', 'utterances', 'duration', 'metadata'];

describe('POST /api/v1/stt/get_text with webhook_url', { skip: NEEDS }, () => {
  let s: TestServer;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let secret: string;
  const wav = new Uint8Array(readFileSync(corpusFile(AUDIO)));

  async function submit(query: string, body: Uint8Array = wav, contentType = 'audio/wav'): Promise<{ res: Response; body: any }> {
    const res = await s.api(`/api/v1/stt/get_text${query}`, { method: 'POST', headers: { 'content-type': contentType }, body: body as Uint8Array<ArrayBuffer> });
    const json = await res.json();
    assert.ok(res.headers.get('x-request-id'));
    assert.equal(json.request_id, res.headers.get('x-request-id'));
    return { res, body: json };
  }

  function hook(extra?: string): string {
    const q = new URLSearchParams({ webhook_url: receiver.url });
    if (extra !== undefined) q.set('webhook_extra', extra);
    return q.toString();
  }

  /** Waits until the job ends (GET /stt/jobs/{id} shows succeeded or failed) and returns that view. */
  async function waitForJob(requestId: string, timeoutMs = 20_000): Promise<any> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const res = await s.api(`/api/v1/stt/jobs/${encodeURIComponent(requestId)}`);
      assert.equal(res.status, 200);
      const job = (await res.json()) as any;
      if (job.state === 'succeeded' || job.state === 'failed') return job;
      if (Date.now() > deadline) throw new Error(`job ${requestId} still ${job.state} after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  function checkDeliveryHeaders(got: ReceivedWebhook, requestId: string, attempt: number): void {
    assert.equal(got.headers['content-type'], 'application/json');
    assert.equal(got.headers['user-agent'], `Parley-Webhooks/${version}`);
    assert.equal(got.headers['x-request-id'], requestId);
    assert.equal(got.headers['x-webhook-attempt'], String(attempt));
    const signature = String(got.headers['x-webhook-signature']);
    assert.match(signature, /^t=\d+,v1=[0-9a-f]{64}$/);
    assert.equal(verifyWebhookSignature(secret, got.body, signature), true, 'the signature verifies with the account secret');
    assert.equal(verifyWebhookSignature(secret, got.body.replace('"', ' "'), signature), false);
  }

  before(async () => {
    const modelsDir = modelsDirWith(['silero-vad-v5', 'sherpa-onnx-kws-zipformer-gigaspeech-3.3M-2024-01-01-mobile']);
    [s, receiver] = await Promise.all([
      startTestServer({
        engines: true,
        config: {
          modelsDir,
          logLevel: 'warn',
          rateLimits: { transcription: { perMinute: 0 } },
          webhooks: { backoffBaseMs: 5, backoffCapMs: 40, timeoutMs: 2000, pollMs: 20 },
        },
      }),
      startReceiver(),
    ]);
    // The secret the CLI shows for this key's account (`parley keys webhook-secret`).
    const account = await s.server.storage.accounts.find(s.accountId);
    assert.ok(account);
    secret = account.webhook_secret;
  });
  after(async () => {
    await s?.close();
    await receiver?.close();
  });

  it('answers 200 {status: processing} at once and delivers the signed success payload with the extra pairs', async () => {
    receiver.setAnswer(() => 200);
    const { res, body } = await submit(`?word_timestamps=true&filename=call.wav&${hook('k1:v1,k2:v2')}`);
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(body).sort(), ['request_id', 'status']);
    assert.equal(body.status, 'processing');
    const requestId: string = body.request_id;

    const job = await waitForJob(requestId);
    assert.equal(job.state, 'succeeded');
    assert.equal(job.outcome, 'success');
    assert.equal(job.webhook_url, receiver.url);
    assert.equal(job.attempts.length, 1);
    assert.equal(job.attempts[0].attempt, 1);
    assert.equal(job.attempts[0].status_code, 200);
    assert.equal(job.attempts[0].error, null);
    assert.ok(!Number.isNaN(Date.parse(job.attempts[0].at)));

    const [got, ...more] = receiver.forRequest(requestId);
    assert.ok(got, 'the receiver got the delivery');
    assert.equal(more.length, 0, 'delivered once');
    checkDeliveryHeaders(got, requestId, 1);
    const payload = got.json as any;
    for (const field of RESULT_FIELDS) assert.ok(field in payload, `payload has ${field}`);
    assert.equal(payload.status, 'success');
    assert.equal(payload.request_id, requestId);
    assert.equal(payload.language, 'en');
    assert.equal(payload.k1, 'v1');
    assert.equal(payload.k2, 'v2');
    assert.deepEqual(Object.keys(payload).sort(), [...RESULT_FIELDS, 'k1', 'k2'].sort());
    assert.deepEqual(payload.metadata, { filename: 'call.wav', duration: payload.duration, fileSize: wav.byteLength });
    assert.ok(payload.words.length > 0, 'word_timestamps applied to the job');
    assert.deepEqual(job.result, Object.fromEntries(Object.entries(payload).filter(([k]) => k !== 'k1' && k !== 'k2')));

    // The same request answered synchronously gives the same transcript.
    const sync = await submit('?word_timestamps=true&filename=call.wav');
    assert.equal(sync.res.status, 200);
    assert.equal(payload.transcription, sync.body.transcription);
    assert.deepEqual(payload.words, sync.body.words);
    assert.equal(payload.duration, sync.body.duration);
  });

  it('retries a 5xx answer and records every attempt', async () => {
    receiver.setAnswer(({ countForRequest }) => (countForRequest === 1 ? 503 : 200));
    const { res, body } = await submit(`?${hook()}`);
    assert.equal(res.status, 200);
    const job = await waitForJob(body.request_id);
    assert.equal(job.state, 'succeeded');
    assert.deepEqual(
      job.attempts.map((a: any) => [a.attempt, a.status_code]),
      [
        [1, 503],
        [2, 200],
      ],
    );
    const deliveries = receiver.forRequest(body.request_id);
    assert.equal(deliveries.length, 2);
    checkDeliveryHeaders(deliveries[1]!, body.request_id, 2);
    assert.equal(deliveries[0]!.body, deliveries[1]!.body, 'the same payload each attempt');
    receiver.setAnswer(() => 200);
  });

  it('undecodable audio is accepted, then delivered as the failed payload with the extra pairs', async () => {
    receiver.setAnswer(() => 200);
    let seed = 11;
    const noise = new Uint8Array(4000).map(() => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 24) & 0xff);
    const { res, body } = await submit(`?${hook('ticket:T-9')}`, noise);
    assert.equal(res.status, 200);
    assert.equal(body.status, 'processing');
    const job = await waitForJob(body.request_id);
    assert.equal(job.state, 'failed', 'the receiver acknowledged the failure payload');
    assert.equal(job.outcome, 'failed');
    assert.equal(job.error, INVALID_FORMAT);
    assert.equal(job.result, null);
    assert.equal(job.attempts.length, 1);
    const [got] = receiver.forRequest(body.request_id);
    assert.ok(got);
    checkDeliveryHeaders(got, body.request_id, 1);
    assert.deepEqual(got.json, { status: 'failed', error: INVALID_FORMAT, request_id: body.request_id, ticket: 'T-9' });
  });

  it('a webhook_extra key that collides with a result field is 400, and nothing is queued', async () => {
    const before = receiver.received.length;
    for (const extra of ['status:x', 'a:1,request_id:2', 'metadata:m', 'error:e']) {
      const { res, body } = await submit(`?${hook(extra)}`);
      assert.equal(res.status, 400, extra);
      assert.deepEqual(Object.keys(body).sort(), ['error', 'request_id']);
      assert.match(body.error, /collides/);
      const job = await s.api(`/api/v1/stt/jobs/${body.request_id}`);
      assert.equal(job.status, 404, 'no job was stored');
    }
    assert.equal(receiver.received.length, before);
  });

  it('malformed webhook_extra, or webhook_extra without webhook_url, is 400', async () => {
    for (const query of [`?${hook('nocolon')}`, `?${hook('k:1,k:2')}`, `?${hook(':v')}`, '?webhook_extra=k1:v1']) {
      const { res, body } = await submit(query);
      assert.equal(res.status, 400, query);
      assert.match(body.error, /webhook_extra/);
    }
  });

  it('a webhook_url that is refused or not http(s) is 400', async () => {
    for (const url of ['http://10.0.0.1/hook', 'http://169.254.169.254/latest', 'http://[::1]:9/hook', 'http://127.0.0.2/hook']) {
      const { res, body } = await submit(`?webhook_url=${encodeURIComponent(url)}`);
      assert.equal(res.status, 400, url);
      assert.match(body.error, /webhook_url is not allowed/);
    }
    for (const url of ['ftp://127.0.0.1/hook', 'not a url']) {
      const { res, body } = await submit(`?webhook_url=${encodeURIComponent(url)}`);
      assert.equal(res.status, 400, url);
      assert.match(body.error, /webhook_url/);
    }
  });

  it('a wrong Content-Type is refused at once, before any job is stored', async () => {
    const { res, body } = await submit(`?${hook()}`, wav, 'text/plain');
    assert.equal(res.status, 400);
    assert.equal(body.error, INVALID_FORMAT);
    assert.equal((await s.api(`/api/v1/stt/jobs/${body.request_id}`)).status, 404);
  });

  it('GET /stt/jobs/{request_id} is 404 for an unknown id and for another account', async () => {
    receiver.setAnswer(() => 200);
    const { body } = await submit(`?${hook()}`);
    await waitForJob(body.request_id);
    const unknown = await s.api('/api/v1/stt/jobs/req_does_not_exist');
    assert.equal(unknown.status, 404);
    const unknownBody = (await unknown.json()) as any;
    assert.deepEqual(Object.keys(unknownBody).sort(), ['error', 'request_id']);
    const other = await s.server.storage.apiKeys.create({ name: 'other' });
    const foreign = await fetch(`${s.url}/api/v1/stt/jobs/${body.request_id}`, { headers: { authorization: `Bearer ${other.key}` } });
    assert.equal(foreign.status, 404);
  });
});
