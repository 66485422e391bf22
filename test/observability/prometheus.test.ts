/**
 * Debian's real Prometheus scrapes a running Parley (its own process, metrics on their own
 * loopback listener) every second; after real traffic, Prometheus's HTTP API answers with the
 * request counts, a first-chunk latency quantile, the seconds of audio transcribed and the
 * restart of an inference process killed with SIGKILL. The alert rules pass `promtool check rules`.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { REAL_TEST_MODELS, corpusFile, needs, repoRoot } from '../helpers/models.js';
import { freePort, inferenceProcess, startServerProcess, type ServerProcess } from '../helpers/server-process.js';
import { skipWhenMissing } from '../helpers/skip.js';

const PIPER = 'fake-piper-tones-en_US-16k';
const onPath = (bin: string) => spawnSync('sh', ['-c', `command -v ${bin}`]).status === 0;
const NEEDS =
  needs({ models: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH, PIPER], corpus: true }) ||
  skipWhenMissing(!(onPath('prometheus') && onPath('promtool')) && 'needs Debian\'s prometheus (apt-get install prometheus; npm test\'s set-up does)');


interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

describe('Prometheus scraping Parley', { skip: NEEDS }, () => {
  let server: ServerProcess;
  let prometheus: ChildProcess;
  let promUrl: string;
  let dir: string;
  let metricsUrl: string;
  const api = (pathname: string, init: RequestInit = {}) =>
    fetch(server.url + pathname, { ...init, headers: { authorization: `Bearer ${server.key}`, ...(init.headers as Record<string, string>) } });

  /** The instant vector of `query`, once `accept` holds for it (Prometheus scrapes every second). */
  async function query(expr: string, accept: (samples: Sample[]) => boolean, timeoutMs = 20_000): Promise<Sample[]> {
    const deadline = Date.now() + timeoutMs;
    let last: Sample[] = [];
    for (;;) {
      const r = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
      const body = (await r.json()) as { status: string; data: { result: Sample[] }; error?: string };
      assert.equal(body.status, 'success', body.error);
      last = body.data.result;
      if (accept(last)) return last;
      if (Date.now() > deadline) assert.fail(`${expr} never matched; last answer: ${JSON.stringify(last)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  const single = (samples: Sample[]) => Number(samples[0]?.value[1]);

  before(async () => {
    const metricsPort = await freePort();
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    server = await startServerProcess([REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH, PIPER], {
      PARLEY_METRICS__PORT: String(metricsPort),
      PARLEY_INFERENCE__LAYOUT: 'by-capability',
      PARLEY_INFERENCE__RESTART_DELAY_MS: '100',
    });
    dir = mkdtempSync(path.join(tmpdir(), 'parley-prometheus-'));
    writeFileSync(
      path.join(dir, 'prometheus.yml'),
      [
        'global: { scrape_interval: 1s, evaluation_interval: 1s }',
        'rule_files: [' + JSON.stringify(path.join(repoRoot, 'deploy/prometheus/alerts.yml')) + ']',
        'scrape_configs:',
        '  - job_name: parley',
        `    static_configs: [{ targets: ["127.0.0.1:${metricsPort}"] }]`,
      ].join('\n'),
    );
    const promPort = await freePort();
    promUrl = `http://127.0.0.1:${promPort}`;
    prometheus = spawn(
      'prometheus',
      [`--config.file=${path.join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${promPort}`, '--log.level=warn'],
      { stdio: ['ignore', 'ignore', process.env.PARLEY_TEST_SERVER_LOGS ? 'inherit' : 'ignore'] },
    );
    const deadline = Date.now() + 30_000;
    for (;;) {
      assert.equal(prometheus.exitCode, null, 'prometheus exited');
      const ready = await fetch(`${promUrl}/-/ready`).then((r) => r.ok, () => false);
      if (ready) break;
      assert.ok(Date.now() < deadline, 'prometheus never became ready');
      await new Promise((r) => setTimeout(r, 200));
    }
    // Up: Prometheus reached the metrics listener.
    await query('up{job="parley"}', (s) => single(s) === 1);
  });

  after(async () => {
    if (prometheus && prometheus.exitCode === null) {
      prometheus.kill('SIGTERM');
      await new Promise((r) => prometheus.once('exit', r));
    }
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('counts requests, times first chunks, sums transcribed audio and counts an inference restart', async () => {
    const { voices } = (await (await api('/api/v1/tts-v2/get_voices')).json()) as { voices: Array<{ voiceId: string }> };
    const voice = voices.map((v) => v.voiceId).find((id) => id.startsWith(PIPER));
    assert.ok(voice, 'the Piper fixture voice is listed');
    for (let i = 0; i < 3; i++) {
      const r = await api('/api/v1/tts-v2/get_speech', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text: `Sentence number ${i + 1}.`, voice_id: voice, output_format: 'wav' }),
      });
      assert.equal(r.status, 200, await r.clone().text());
      await r.arrayBuffer();
    }
    const bad = await api('/api/v1/tts-v2/get_speech', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(bad.status, 400);

    const wav = readFileSync(corpusFile('en/librivox-sense-and-sensibility-0890.wav'));
    let audioSeconds = 0;
    for (let i = 0; i < 2; i++) {
      const r = await api('/api/v1/stt/get_text?language=en', { method: 'POST', headers: { 'content-type': 'audio/wav' }, body: new Uint8Array(wav) });
      assert.equal(r.status, 200);
      audioSeconds += ((await r.json()) as { duration: number }).duration;
    }

    const ok = await query('sum(parley_http_requests_total{family="speech",method="POST",status_class="2xx"})', (s) => single(s) === 3);
    assert.equal(single(ok), 3);
    await query('sum(parley_http_requests_total{family="speech",status_class="4xx"})', (s) => single(s) === 1);
    await query('sum(parley_http_requests_total{family="stt",method="POST",status_class="2xx"})', (s) => single(s) === 2);

    // Every synthesis timed its first chunk; the median since start lies within the histogram's range.
    await query('sum(parley_tts_first_chunk_seconds_count{model="tts-v2",engine="sherpa-onnx"})', (s) => single(s) === 3);
    const median = single(await query('histogram_quantile(0.5, sum by (le) (parley_tts_first_chunk_seconds_bucket))', (s) => s.length === 1 && Number.isFinite(single(s))));
    assert.ok(median > 0 && median <= 120, `median first chunk ${median} s`);

    const heard = single(await query('sum(parley_stt_audio_seconds_total)', (s) => Math.abs(single(s) - audioSeconds) < 0.01));
    assert.ok(Math.abs(heard - audioSeconds) < 0.01, `${heard} s transcribed, ${audioSeconds} s sent`);
    await query('sum(parley_stt_processing_seconds_count)', (s) => single(s) === 2);

    const before = await inferenceProcess(server, 'synthesis');
    assert.ok(before?.pid, 'the synthesis process runs');
    await query('parley_inference_process_restarts_total{process="synthesis"}', (s) => s.length === 0 || single(s) === 0);
    process.kill(before.pid, 'SIGKILL');
    const restarts = await query('parley_inference_process_restarts_total{process="synthesis"}', (s) => single(s) === 1);
    assert.equal(single(restarts), 1);
    await query('parley_inference_process_restarts_total{process="transcription"}', (s) => s.length === 0 || single(s) === 0);
    // The restarted process takes syntheses again, and Prometheus sees it up.
    const again = await api('/api/v1/tts-v2/get_speech', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Back again.', voice_id: voice, output_format: 'wav' }),
    });
    assert.equal(again.status, 200);
    await query('parley_inference_process_up{process="synthesis"}', (s) => single(s) === 1);
    await query('parley_database_up', (s) => single(s) === 1);
  });

  it('every query of the Grafana dashboard parses in Prometheus and names metrics the server exports', async () => {
    const dashboard = JSON.parse(readFileSync(path.join(repoRoot, 'deploy/grafana/parley.json'), 'utf8')) as { panels: Array<{ targets?: Array<{ expr: string }> }> };
    const exprs = dashboard.panels.flatMap((p) => p.targets ?? []).map((t) => t.expr);
    assert.ok(exprs.length >= 20);
    const exported = new Set([...(await (await fetch(metricsUrl)).text()).matchAll(/^# TYPE (\S+) (\w+)$/gm)].map((m) => m[1]!));
    const alerts = readFileSync(path.join(repoRoot, 'deploy/prometheus/alerts.yml'), 'utf8');
    for (const text of [...exprs, alerts]) {
      for (const [name] of text.matchAll(/\b(?:parley|process|nodejs)_[a-z0-9_]+/g)) {
        assert.ok(exported.has(name.replace(/_(bucket|count|sum)$/, '')), `${name} is exported`);
      }
    }
    for (const expr of exprs) {
      const concrete = expr.replaceAll('$__rate_interval', '1m').replaceAll('$job', '.*').replaceAll('$instance', '.*');
      const body = (await (await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(concrete)}`)).json()) as { status: string; error?: string };
      assert.equal(body.status, 'success', `${expr}: ${body.error}`);
    }
  });

  it('the alert rules pass promtool and load into Prometheus', async () => {
    const check = spawnSync('promtool', ['check', 'rules', path.join(repoRoot, 'deploy/prometheus/alerts.yml')], { encoding: 'utf8' });
    assert.equal(check.status, 0, check.stdout + check.stderr);
    const rules = (await (await fetch(`${promUrl}/api/v1/rules`)).json()) as { data: { groups: Array<{ rules: Array<{ name: string; health: string }> }> } };
    const loaded = rules.data.groups.flatMap((g) => g.rules);
    for (const name of ['ParleyInferenceRestarting', 'ParleyQueueSaturated', 'ParleyWebhookFailuresRising', 'ParleyDatabaseUnreachable']) {
      assert.ok(loaded.some((r) => r.name === name), `${name} is loaded`);
    }
  });
});
