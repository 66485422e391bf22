/**
 * Admission control: with a family's depth of requests in flight, or an account's share of it,
 * the next request is answered 503 with Retry-After and Connection: close from its headers alone
 * (the test sends no body at all, and the answer still comes), in the family's error shape.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KEY_ROLES } from '../../../src/accounts/api-keys.js';
import { makeWav, wavTranscribe } from '../../jobs/fixtures/wav-transcribe.js';
import { connectRaw, within } from '../../helpers/raw-http.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';

describe('admission control', () => {
  let s: TestServer;
  let other: string;
  let third: string;
  before(async () => {
    s = await startTestServer({
      transcribe: wavTranscribe({ delayMs: 1_500 }),
      config: {
        admission: { transcription: { maxInFlight: 2 }, accountShare: 0.5 },
        rateLimits: { transcription: { perMinute: 0 } },
        logLevel: 'warn',
      },
    });
    other = (await s.server.storage.apiKeys.create({ name: 'other', role: KEY_ROLES.user })).key;
    third = (await s.server.storage.apiKeys.create({ name: 'third', role: KEY_ROLES.user })).key;
  });
  after(() => s?.close());

  const transcribe = (key: string) =>
    fetch(`${s.url}/api/v1/stt/get_text`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'audio/wav' }, body: Buffer.from(makeWav(0.5)) });

  /** Headers announcing a 5 MB upload, and not one byte of it. */
  async function headersOnly(key: string): Promise<string> {
    const c = await connectRaw(s.url);
    c.write(`POST /api/v1/stt/get_text HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: audio/wav\r\nContent-Length: 5000000\r\n\r\n`);
    return within(c.closed, 1_000, 'the refusal, before any body');
  }

  it("an account past its share, then anyone past the depth, is refused from the headers; admitted work completes", async () => {
    const first = transcribe(s.key);
    await new Promise((r) => setTimeout(r, 200));
    // The account holds its share (half of 2): its next request is refused, another account's is not.
    const ownRefusal = await headersOnly(s.key);
    assert.match(ownRefusal, /^HTTP\/1\.1 503 /);
    assert.match(ownRefusal, /\r\nRetry-After: \d+\r\n/i);
    assert.match(ownRefusal, /\r\nConnection: close\r\n/i);
    assert.match(ownRefusal, /"error":"This account has too many requests in progress\. Please try again later\."/);
    const second = transcribe(other);
    await new Promise((r) => setTimeout(r, 200));
    // Two in flight: the depth is reached for every account.
    const full = await headersOnly(third);
    assert.match(full, /^HTTP\/1\.1 503 /);
    assert.match(full, /"error":"Server is busy\. Please try again later\."/);
    assert.deepEqual([(await first).status, (await second).status], [200, 200]);
    // Places are given back when requests end.
    assert.equal((await transcribe(third)).status, 200);
  });
});

describe('admission control and jobs', () => {
  it('transcriptions submitted as jobs (webhook_url) are not held to the depth: they only store the audio', async () => {
    const s = await startTestServer({
      transcribe: wavTranscribe({ delayMs: 300 }),
      config: { admission: { transcription: { maxInFlight: 1 } }, rateLimits: { transcription: { perMinute: 0 } }, logLevel: 'warn' },
    });
    try {
      const hook = encodeURIComponent('http://127.0.0.1:9/hook');
      const answers = await Promise.all(
        Array.from({ length: 6 }, () =>
          fetch(`${s.url}/api/v1/stt/get_text?webhook_url=${hook}`, { method: 'POST', headers: { authorization: `Bearer ${s.key}`, 'content-type': 'audio/wav' }, body: Buffer.from(makeWav(0.2)) }),
        ),
      );
      assert.deepEqual(answers.map((a) => a.status), [200, 200, 200, 200, 200, 200]);
    } finally {
      await s.close();
    }
  });
});
