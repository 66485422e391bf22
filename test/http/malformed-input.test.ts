/**
 * Malformed input answered with a 4xx and the family's error body, through real HTTP: repeated or
 * malformed query values, oversized ids, addresses that lead to private IPv4 through IPv6
 * (IPv4-compatible ::/96, NAT64), and concurrent submissions with one X-Request-Id (409 on SQLite
 * and on PostgreSQL, never a 500).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DuplicateJobError, JobRepository } from '../../src/jobs/job-repository.js';
import { skipWithoutPg, withPgSchema } from '../helpers/pg-schema.js';
import { expectSttError } from '../helpers/stt-errors.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startReceiver } from '../jobs/fixtures/receiver.js';
import { modelsDirWith, needs, REAL_TEST_MODELS } from '../helpers/models.js';

const ESPEAK = 'espeak-en-us-female';
const quiet = { rateLimits: { synthesis: { perMinute: 0 }, transcription: { perMinute: 0 }, management: { perMinute: 0 } }, logLevel: 'silent' as const };
// With what transcription needs installed: without it a submission is refused for the missing pack before its other checks.
const TRANSCRIPTION_PACKS = [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH];
const NEEDS = needs({ models: TRANSCRIPTION_PACKS });
const withPacks = () => ({ ...quiet, modelsDir: modelsDirWith(TRANSCRIPTION_PACKS) });

async function expectSpeechError(r: Response, status: number, message: RegExp): Promise<void> {
  const body = await r.json();
  assert.equal(r.status, status, JSON.stringify(body));
  assert.deepEqual(Object.keys(body).sort(), ['error', 'message']);
  assert.equal(body.error, status === 400 ? 'InvalidRequest' : body.error);
  assert.match(body.message, message);
}

describe('malformed input', { skip: NEEDS }, () => {
  let s: TestServer;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  before(async () => {
    [s, receiver] = await Promise.all([startTestServer({ engines: true, config: withPacks() }), startReceiver()]);
  });
  after(async () => {
    await s?.close();
    await receiver?.close();
  });

  const getText = (query: string, body: BodyInit = new Uint8Array(44), contentType = 'audio/wav', headers: Record<string, string> = {}) =>
    s
      .api(`/api/v1/stt/get_text${query}`, { method: 'POST', headers: { 'content-type': contentType, ...headers }, body })
      .then(async (res) => ({ res, body: await res.json() }));

  describe('query values', () => {
    const cases: [string, string][] = [
      ['?language=en&language=fr', 'language must be given once'],
      ['?word_timestamps=true&word_timestamps=false', 'word_timestamps must be given once'],
      ['?model=stt&model=stt', 'model must be given once'],
      ['?word_timestamps=maybe', 'word_timestamps must be one of true, false'],
      ['?diarize=', 'diarize must be one of true, false'],
      ['?diarize=1', 'diarize must be one of true, false'],
      ['?language=xx', 'language must be one of ' + ['it', 'es', 'en'].join(', ')],
      ['?model=whisper', 'model must be one of stt'],
    ];
    for (const [query, error] of cases) {
      it(`${query} → 400 "${error}…"`, async () => {
        const message = await expectSttError(getText(query), 400, new RegExp(`^${error.replace(/[?.*+()]/g, '\\$&')}`));
        assert.ok(message.length < 400);
      });
    }

    it('a repeated webhook_url is refused before anything is stored', async () => {
      const q = `?webhook_url=${encodeURIComponent(receiver.url)}&webhook_url=${encodeURIComponent(receiver.url)}`;
      await expectSttError(getText(q), 400, 'webhook_url must be given once');
      assert.equal(receiver.received.length, 0);
    });
  });

  describe('oversized ids', () => {
    const long = (n: number) => 'v'.repeat(n);

    it('voice_id over 256 characters on stream and get_speech', async () => {
      for (const endpoint of ['stream', 'get_speech']) {
        const r = await s.api(`/api/v1/tts-v2/${endpoint}`, { method: 'POST', json: { text: 'Hello.', voice_id: long(257) } });
        await expectSpeechError(r, 400, /^voice_id must be at most 256 characters$/);
      }
      // At the limit it is an ordinary unknown voice.
      const r = await s.api('/api/v1/tts-v2/get_speech', { method: 'POST', json: { text: 'Hello.', voice_id: long(256) } });
      await expectSpeechError(r, 400, /^voice_id "v+" is not a voice of tts-v2/);
    });

    it('voiceId of a clone to delete', async () => {
      const r = await s.api('/api/v1/tts-large', { method: 'DELETE', json: { voiceId: long(10_000) } });
      await expectSpeechError(r, 400, /^voiceId must be at most 256 characters$/);
    });

    it('dictionary ids on PUT, DELETE and in pronunciation_dicts', async () => {
      const id = 'dict_' + long(60);
      await expectSpeechError(
        await s.api('/api/v1/pronunciation-dicts', { method: 'PUT', json: { id, items: [{ word: 'a', pronunciation: 'b' }] } }),
        400,
        /^id must be at most 64 characters$/,
      );
      await expectSpeechError(await s.api('/api/v1/pronunciation-dicts', { method: 'DELETE', json: { id } }), 400, /^id must be at most 64 characters$/);
      await expectSpeechError(
        await s.api('/api/v1/tts-v2/get_speech', { method: 'POST', json: { text: 'Hello.', voice_id: ESPEAK, pronunciation_dicts: [id] } }),
        400,
        /^pronunciation_dicts\.0 must be at most 64 characters$/,
      );
    });

    it('job ids (request ids in the path) over 128 characters', async () => {
      await expectSttError(
        s.api(`/api/v1/stt/jobs/${'r'.repeat(129)}`).then(async (res) => ({ res, body: await res.json() })),
        400,
        'request_id must be at most 128 characters',
      );
      await expectSttError(s.api(`/api/v1/stt/jobs/${'r'.repeat(128)}`).then(async (res) => ({ res, body: await res.json() })), 404, /^No job/);
      // Past what the router takes at all, and a path that is not valid %-encoding: the same body shape.
      await expectSttError(
        s.api(`/api/v1/stt/jobs/${'r'.repeat(5_000)}`).then(async (res) => ({ res, body: await res.json() })),
        400,
        'A path segment is longer than 1024 characters',
      );
      await expectSttError(s.api('/api/v1/stt/jobs/%E0%A4%A').then(async (res) => ({ res, body: await res.json() })), 400, 'The URL is not valid');
    });

    it('an X-Request-Id over 128 characters is not taken: the server makes one', async () => {
      const r = await s.api('/api/v1/tts-v2/get_voices', { headers: { 'x-request-id': 'r'.repeat(129) } });
      assert.equal(r.status, 200);
      assert.match(r.headers.get('x-request-id')!, /^req_[0-9a-f]{32}$/);
      const { res, body } = await getText(`?webhook_url=${encodeURIComponent(receiver.url)}`, new Uint8Array(44), 'audio/wav', { 'x-request-id': 'r'.repeat(129) });
      assert.equal(res.status, 200);
      assert.match(body.request_id, /^req_[0-9a-f]{32}$/);
    });
  });

  describe('addresses that reach IPv4 through IPv6', () => {
    // 127.0.0.1 is allowed in tests; these spell it (and 10.0.0.1) in IPv6 and must be refused all the same.
    const hosts = ['[::7f00:1]', '[::127.0.0.1]', '[::a00:1]', '[64:ff9b::7f00:1]', '[64:ff9b::127.0.0.1]', '[64:ff9b:1::7f00:1]', '[64:ff9b:1:ab::1]'];
    for (const host of hosts) {
      it(`${host} as audio URL and as webhook_url`, async () => {
        const url = `http://${host}:9/a.wav`;
        await expectSttError(getText('', JSON.stringify({ url }), 'application/json'), 400, /^Audio URL is not allowed: it leads to a private, loopback or reserved network address$/);
        await expectSttError(getText(`?webhook_url=${encodeURIComponent(url)}`), 400, /^webhook_url is not allowed: it leads to a private, loopback or reserved network address$/);
      });
    }
  });
});

/** One X-Request-Id sent by several clients at once: one job, the others 409, on each backend. */
async function concurrentSubmissions(s: TestServer, receiverUrl: string): Promise<void> {
  const requestId = `dup-${Date.now()}`;
  const submit = () =>
    s
      .api(`/api/v1/stt/get_text?webhook_url=${encodeURIComponent(receiverUrl)}`, {
        method: 'POST',
        headers: { 'content-type': 'audio/wav', 'x-request-id': requestId },
        body: new Uint8Array(44),
      })
      .then(async (res) => ({ res, body: await res.json() }));
  const answers = await Promise.all(Array.from({ length: 8 }, submit));
  assert.deepEqual(answers.map((a) => a.res.status).sort(), [200, 409, 409, 409, 409, 409, 409, 409]);
  for (const a of answers.filter((x) => x.res.status === 409)) {
    assert.deepEqual(a.body, { error: `A job with request_id ${requestId} already exists`, request_id: requestId });
  }

  // The race itself, made certain: both submissions pass the existence check before either inserts.
  const repo = new JobRepository(s.server.storage.store.db, s.server.storage.store.backend);
  const job = (id: string) => ({
    id,
    accountId: s.accountId,
    requestId: `${requestId}-race`,
    audio: new Uint8Array(44),
    contentType: 'audio/wav',
    options: '{}',
    webhookUrl: receiverUrl,
    webhookExtra: '{}',
  });
  const results = await Promise.allSettled([repo.submit(job(`job_race_a_${Date.now()}`)), repo.submit(job(`job_race_b_${Date.now()}`))]);
  assert.deepEqual(results.map((r) => r.status).sort(), ['fulfilled', 'rejected']);
  const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
  assert.ok(rejected.reason instanceof DuplicateJobError, String(rejected.reason));
}

describe('concurrent submissions with the same X-Request-Id', { skip: NEEDS }, () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  before(async () => {
    receiver = await startReceiver();
  });
  after(() => receiver?.close());

  it('SQLite: one job, 409 for the others', async () => {
    const s = await startTestServer({ engines: true, config: withPacks() });
    try {
      await concurrentSubmissions(s, receiver.url);
    } finally {
      await s.close();
    }
  });

  it('PostgreSQL: one job, 409 for the others', { skip: skipWithoutPg }, () =>
    withPgSchema('dup', async (databaseUrl) => {
      const s = await startTestServer({ engines: true, config: { ...withPacks(), databaseUrl } });
      try {
        await concurrentSubmissions(s, receiver.url);
      } finally {
        await s.close();
      }
    }));
});
