/**
 * Where the metrics are served: their own listener (metrics.port, no key), the main port behind
 * metrics.token, nowhere when neither is set; and the jobs by state come from one node of a
 * cluster only (the holder of the metrics lease), so that summing nodes counts each job once.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { skipWithoutPg, withPgSchema } from '../helpers/pg-schema.js';
import { freePort } from '../helpers/server-process.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { connect, wsUrl } from '../helpers/websocket.js';


const TOKEN = 'metrics-token-0123456789';

/** The value of one sample line of a Prometheus text exposition, or undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('the metrics endpoint', () => {
  const servers: TestServer[] = [];
  after(async () => {
    for (const s of servers) await s.close();
  });

  it('is served on its own loopback listener without a key, and on the main port only with the metrics token', async () => {
    const port = await freePort();
    const t = await startTestServer({ config: { metrics: { port, token: TOKEN } } });
    servers.push(t);
    await t.api('/api/v1/tts-v2/get_voices');
    await t.api('/api/v1/tts-v2/get_voices');
    await fetch(`${t.url}/api/v1/tts-v2/get_voices`); // no key: 401

    const own = await fetch(`http://127.0.0.1:${port}/metrics`);
    assert.equal(own.status, 200);
    assert.match(own.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const text = await own.text();
    assert.match(text, /^# TYPE parley_http_requests_total counter$/m);
    assert.equal(sample(text, 'parley_http_requests_total{family="speech",method="GET",status_class="2xx"}'), 2);
    assert.equal(sample(text, 'parley_http_requests_total{family="speech",method="GET",status_class="4xx"}'), 1);
    assert.equal(sample(text, 'parley_http_request_duration_seconds_count{family="speech",method="GET",status_class="2xx"}'), 2);
    assert.ok((sample(text, 'process_resident_memory_bytes') ?? 0) > 0, 'process metrics are there');
    assert.equal(sample(text, 'parley_database_up'), 1);
    assert.match(text, /^# TYPE parley_tts_first_chunk_seconds histogram$/m);
    assert.match(text, /^# TYPE parley_stt_audio_seconds_total counter$/m);
    assert.match(text, /^# TYPE parley_inference_process_restarts_total counter$/m);
    assert.equal((await fetch(`http://127.0.0.1:${port}/other`)).status, 404);

    const refused = await fetch(`${t.url}/metrics`);
    assert.equal(refused.status, 401);
    assert.equal((await fetch(`${t.url}/metrics`, { headers: { authorization: 'Bearer wrong-token-0123456789' } })).status, 401);
    const main = await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(main.status, 200);
    assert.match(await main.text(), /^parley_http_requests_total\{family="metrics",method="GET",status_class="4xx"\} 2$/m);
  });

  it('counts WebSocket sessions open, and times them when they close', async () => {
    const t = await startTestServer({ engines: true, config: { metrics: { token: TOKEN } } });
    servers.push(t);
    const scrape = async () => (await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
    const socket = await connect(wsUrl(t.url, '/api/v1/tts-v2/get_speech/stream'), { authorization: `Bearer ${t.key}` });
    const open = await scrape();
    assert.equal(sample(open, 'parley_live_sessions_open{kind="synthesis"}'), 1);
    assert.equal(sample(open, 'parley_live_session_duration_seconds_count{kind="synthesis"}'), undefined);
    socket.ws.close();
    const deadline = Date.now() + 5_000;
    let closed = await scrape();
    while (sample(closed, 'parley_live_session_duration_seconds_count{kind="synthesis"}') !== 1) {
      assert.ok(Date.now() < deadline, 'the closed session was timed');
      await new Promise((r) => setTimeout(r, 50));
      closed = await scrape();
    }
    assert.equal(sample(closed, 'parley_live_sessions_open{kind="synthesis"}'), 0);
  });

  it('refuses a metrics port it cannot use and a short token, naming each', () => {
    assert.throws(
      () => loadConfig({ PORT: '9000', PARLEY_METRICS__PORT: '9000', PARLEY_METRICS__TOKEN: 'short' }),
      (err: unknown) =>
        err instanceof ConfigError &&
        err.problems.includes('metrics.port must differ from port') &&
        err.problems.includes('metrics.token must be at least 16 characters'),
    );
    assert.throws(() => loadConfig({ PARLEY_METRICS__PORT: '70000' }), /metrics\.port must be an integer 0\.\.65535/);
    assert.deepEqual(loadConfig({}).metrics, { port: 0, host: '127.0.0.1', token: '' });
  });

  it('is not served at all unless metrics.port or metrics.token is set', async () => {
    const t = await startTestServer();
    servers.push(t);
    assert.equal((await t.api('/metrics')).status, 404);
    assert.equal(t.server.metrics, undefined, 'nothing is recorded');
  });

  it('reports jobs by state from one node of two sharing a database', { skip: skipWithoutPg }, async () => {
    await withPgSchema('metrics_lease', async (databaseUrl) => {
      const nodes = [
        await startTestServer({ config: { databaseUrl, metrics: { token: TOKEN } }, transcribe: async () => assert.fail('no transcription here') }),
        await startTestServer({ config: { databaseUrl, metrics: { token: TOKEN } }, transcribe: async () => assert.fail('no transcription here') }),
      ];
      try {
        const scrape = async (t: TestServer) => (await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
        for (let round = 0; round < 3; round++) {
          const texts = await Promise.all(nodes.map(scrape));
          const reporting = texts.filter((text) => sample(text, 'parley_jobs{state="queued"}') !== undefined);
          assert.equal(reporting.length, 1, `round ${round}: exactly one node reports the jobs`);
          assert.equal(sample(reporting[0]!, 'parley_jobs{state="succeeded"}'), 0);
          for (const text of texts) assert.equal(sample(text, 'parley_database_up'), 1);
        }
        // The holder shuts down and gives the lease up: the other node reports from its next scrape.
        const texts = await Promise.all(nodes.map(scrape));
        const holder = texts.findIndex((text) => sample(text, 'parley_jobs{state="queued"}') !== undefined);
        const [gone] = nodes.splice(holder, 1);
        await gone!.close();
        assert.equal(sample(await scrape(nodes[0]!), 'parley_jobs{state="queued"}'), 0);
      } finally {
        for (const t of nodes) await t.close();
      }
    });
  });
});

