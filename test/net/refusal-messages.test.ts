/**
 * A refused address is refused in general terms to the client (the body of the 400, a job's
 * delivery error): what an internal name resolved to stays in the operator's log.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startLoggedServer, type LoggedServer } from '../helpers/logged-server.js';
import { makeWav, wavTranscribe } from '../jobs/fixtures/wav-transcribe.js';
import { startReceiver } from '../jobs/fixtures/receiver.js';

const RESOLUTION = /127\.0\.0\.1|::1|resolves|loopback\)/;

describe('refusal messages', () => {
  let s: LoggedServer;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  before(async () => {
    s = await startLoggedServer(
      { allowedPrivateHosts: [], webhooks: { backoffBaseMs: 5, backoffCapMs: 40, timeoutMs: 400, pollMs: 20, concurrency: 1 } },
      { transcribe: wavTranscribe() },
    );
    receiver = await startReceiver();
  });
  after(async () => {
    await s?.server.close();
    await receiver?.close();
  });

  it('an audio URL whose name resolves to loopback: 400 without the address; the log has it', async () => {
    const port = new URL(receiver.url).port;
    const res = await fetch(`${s.url}/api/v1/stt/get_text`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `http://localhost:${port}/a.wav` }),
    });
    assert.equal(res.status, 400);
    const body = (await res.json()) as { error: string };
    assert.match(body.error, /not allowed/);
    assert.doesNotMatch(body.error, RESOLUTION);
    assert.match(s.logged(), /host localhost resolves to/);
  });

  it("a webhook whose name resolves to loopback: the job's error is general; the log has the address", async () => {
    const hook = receiver.url.replace('127.0.0.1', 'localhost');
    const res = await fetch(`${s.url}/api/v1/stt/get_text?webhook_url=${encodeURIComponent(hook)}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.key}`, 'content-type': 'audio/wav' },
      body: Buffer.from(makeWav(0.2)),
    });
    assert.equal(res.status, 200);
    const { request_id } = (await res.json()) as { request_id: string };
    let job: { status?: string; last_error: string | null; attempts: Array<{ error: string | null }> };
    for (;;) {
      job = (await (await fetch(`${s.url}/api/v1/stt/jobs/${request_id}`, { headers: { authorization: `Bearer ${s.key}` } })).json()) as typeof job;
      if (job.attempts.length > 0 && job.last_error) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const shown = JSON.stringify(job);
    assert.match(shown, /not allowed/);
    assert.doesNotMatch(shown, RESOLUTION);
    assert.equal(receiver.received.length, 0);
    assert.match(s.logged(), /webhook attempt refused.*|host localhost resolves to/);
    assert.match(s.logged(), /"detail":"host localhost resolves to/);
  });
});
