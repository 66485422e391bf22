/**
 * With OTEL_EXPORTER_OTLP_ENDPOINT set, a running Parley (its own process) sends OTLP/HTTP spans
 * to a loopback collector: for a synthesis and a transcription, a server span per request with
 * the request id as an attribute, the inference task as its child, and the task's run inside the
 * inference process as the task's child (its context crossed the IPC channel).
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { REAL_TEST_MODELS, corpusFile, needs } from '../helpers/models.js';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.js';

const PIPER = 'fake-piper-tones-en_US-16k';
const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH, PIPER], corpus: true });

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Array<{ key: string; value: { stringValue?: string; intValue?: string | number } }>;
  service: string;
}

const attr = (span: OtlpSpan, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value?.stringValue ?? (value?.intValue === undefined ? undefined : String(value.intValue));
};

/** A collector that takes OTLP/HTTP JSON exports on /v1/traces, as the OpenTelemetry Collector does. */
async function startCollector(): Promise<{ url: string; spans: OtlpSpan[]; contentTypes: Set<string>; server: Server }> {
  const spans: OtlpSpan[] = [];
  const contentTypes = new Set<string>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      if (request.method !== 'POST' || request.url !== '/v1/traces') {
        response.writeHead(404).end();
        return;
      }
      contentTypes.add(request.headers['content-type'] ?? '');
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: Array<{ resource: { attributes: OtlpSpan['attributes'] }; scopeSpans: Array<{ spans: Omit<OtlpSpan, 'service'>[] }> }>;
      };
      for (const rs of body.resourceSpans) {
        const service = rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
        for (const ss of rs.scopeSpans) for (const span of ss.spans) spans.push({ ...span, service });
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, contentTypes, server };
}

describe('OpenTelemetry traces over OTLP/HTTP', { skip: NEEDS }, () => {
  let server: ServerProcess;
  let collector: Awaited<ReturnType<typeof startCollector>>;
  const api = (pathname: string, init: RequestInit = {}) =>
    fetch(server.url + pathname, { ...init, headers: { authorization: `Bearer ${server.key}`, ...(init.headers as Record<string, string>) } });

  async function spansOf(requestId: string, timeoutMs = 15_000): Promise<{ request: OtlpSpan; tasks: OtlpSpan[]; runs: OtlpSpan[] }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const request = collector.spans.find((s) => attr(s, 'parley.request_id') === requestId);
      const tasks = request ? collector.spans.filter((s) => s.parentSpanId === request.spanId) : [];
      const runs = collector.spans.filter((s) => tasks.some((t) => s.parentSpanId === t.spanId));
      if (request && tasks.length > 0 && runs.length >= tasks.length) return { request, tasks, runs };
      if (Date.now() > deadline) assert.fail(`no complete trace for request ${requestId}; spans seen: ${collector.spans.map((s) => s.name).join(', ')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  before(async () => {
    collector = await startCollector();
    // The built server, as users run it: the inference process imports the compiled exporter set-up.
    server = await startServerProcess(
      [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH, PIPER],
      { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, PARLEY_INFERENCE__LAYOUT: 'by-capability' },
      { built: true },
    );
  });
  after(async () => {
    await server?.stop();
    collector?.server.close();
  });

  it('a synthesis: the request span carries the request id, the TTS task is its child, and the run in the inference process is the task\'s child', async () => {
    const { voices } = (await (await api('/api/v1/tts-v2/get_voices')).json()) as { voices: Array<{ voiceId: string }> };
    const voice = voices.map((v) => v.voiceId).find((id) => id.startsWith(PIPER));
    assert.ok(voice);
    const response = await api('/api/v1/tts-v2/get_speech', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Tracing one sentence.', voice_id: voice, output_format: 'wav' }),
    });
    assert.equal(response.status, 200);
    await response.arrayBuffer();
    const requestId = response.headers.get('x-request-id')!;
    const { request, tasks, runs } = await spansOf(requestId);
    assert.equal(request.name, 'POST /api/v1/tts-v2/get_speech');
    assert.equal(request.kind, 2, 'a server span');
    assert.equal(attr(request, 'http.response.status_code'), '200');
    assert.equal(request.service, 'parley');
    const task = tasks.find((t) => t.name === 'inference tts');
    assert.ok(task, `a TTS task under the request: ${tasks.map((t) => t.name).join(', ')}`);
    assert.equal(task.traceId, request.traceId);
    assert.equal(attr(task, 'parley.inference.process'), 'synthesis');
    assert.equal(attr(task, 'parley.task.outcome'), 'ok');
    const run = runs.find((r) => r.parentSpanId === task.spanId);
    assert.ok(run, 'the inference process traced its run of the task');
    assert.equal(run.name, 'inference run tts');
    assert.equal(run.traceId, request.traceId);
    assert.equal(run.service, 'parley-inference');
    assert.ok(collector.contentTypes.has('application/json'), `OTLP/HTTP JSON (got ${[...collector.contentTypes].join(', ')})`);
  });

  it('a transcription: its inference tasks (speech detection, recognition) are children of its request span', async () => {
    const wav = readFileSync(corpusFile('en/librivox-sense-and-sensibility-0890.wav'));
    const response = await api('/api/v1/stt/get_text?language=en', { method: 'POST', headers: { 'content-type': 'audio/wav' }, body: new Uint8Array(wav) });
    assert.equal(response.status, 200);
    const requestId = ((await response.json()) as { request_id: string }).request_id;
    assert.equal(response.headers.get('x-request-id'), requestId);
    const { request, tasks, runs } = await spansOf(requestId);
    assert.equal(request.name, 'POST /api/v1/stt/get_text');
    assert.ok(tasks.every((t) => t.traceId === request.traceId && attr(t, 'parley.inference.process') === 'transcription'));
    assert.ok(tasks.length >= 2, `speech detection and recognition tasks: ${tasks.map((t) => t.name).join(', ')}`);
    assert.ok(runs.every((r) => r.traceId === request.traceId && r.service === 'parley-inference'));
  });
});
