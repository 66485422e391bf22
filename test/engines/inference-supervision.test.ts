/**
 * Native inference runs in supervised processes: killing one with SIGKILL in the middle of a
 * request fails only what it held — a transcription with 503 + Retry-After and the transcription
 * error body, an SSE synthesis with its error event, a webhook job with a retry and, after its
 * third death, the failure payload — while the server process lives on and serves the next request.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startReceiver } from '../jobs/fixtures/receiver.js';
import { REAL_TEST_MODELS, corpusFile, needs, sharedModel } from '../helpers/models.js';
import { inferenceProcess, startServerProcess, type ServerProcess } from '../helpers/server-process.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH], corpus: true });

const VAD = 'silero-vad-v5';
const ZIPFORMER = 'sherpa-onnx-kws-zipformer-gigaspeech-3.3M-2024-01-01-mobile';
const PIPER = 'fake-piper-tones-en_US-22k-2spk';

/** Processes already killed: the server may still list one until it has seen it go. */
const killed = new Set<number>();

/**
 * Waits until the named process holds a task, then kills it. SIGSTOP first freezes it, so the
 * task cannot finish between the look and the kill. Returns the pid killed.
 */
async function killWhenBusy(server: ServerProcess, name: string, timeoutMs = 60_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const status = await inferenceProcess(server, name);
    if (status?.pid && !killed.has(status.pid) && status.state === 'ready' && status.tasks.running > 0) {
      process.kill(status.pid, 'SIGSTOP');
      const again = await inferenceProcess(server, name);
      if (again?.pid === status.pid && again.tasks.running > 0) {
        process.kill(status.pid, 'SIGKILL');
        killed.add(status.pid);
        return status.pid;
      }
      process.kill(status.pid, 'SIGCONT');
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`process ${name} never held a task within ${timeoutMs} ms`);
}

/** Reads an SSE response to its end and returns its events; `onFirstChunk` runs once the first audio arrived. */
async function sseEvents(response: Response, onFirstChunk?: () => Promise<unknown>): Promise<Array<{ event: string; data: string }>> {
  let text = '';
  const decoder = new TextDecoder();
  for await (const bytes of response.body as unknown as AsyncIterable<Uint8Array>) {
    text += decoder.decode(bytes, { stream: true });
    if (onFirstChunk && text.includes('event: chunk')) {
      const run = onFirstChunk;
      onFirstChunk = undefined;
      await run();
    }
  }
  return text
    .split('\n\n')
    .filter((block) => block.trim())
    .map((block) => {
      const fields = Object.fromEntries(block.split('\n').map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)]));
      return { event: fields.event ?? '', data: fields.data ?? '' };
    });
}

describe('supervised inference processes', { skip: NEEDS }, () => {
  let server: ServerProcess;
  const meeting = readFileSync(corpusFile('diarization/ami-meeting-mixture-60s.wav'));
  const short = readFileSync(corpusFile('en/librivox-sense-and-sensibility-0890.wav'));
  const api = (pathname: string, init: RequestInit = {}) =>
    fetch(server.url + pathname, { ...init, headers: { authorization: `Bearer ${server.key}`, ...(init.headers as Record<string, string>) } });
  const transcribe = (bytes: Buffer, query = 'language=en') =>
    api(`/api/v1/stt/get_text?${query}`, { method: 'POST', headers: { 'content-type': 'audio/wav' }, body: new Uint8Array(bytes) });

  before(async () => {
    server = await startServerProcess([VAD, ZIPFORMER, PIPER], {
      // A process per capability, so each kill below hits one kind of request.
      PARLEY_INFERENCE__LAYOUT: 'by-capability',
      PARLEY_INFERENCE__RESTART_DELAY_MS: '100',
      PARLEY_WEBHOOKS__POLL_MS: '50',
      PARLEY_WEBHOOKS__BACKOFF_BASE_MS: '50',
    });
  });
  after(() => server?.stop());

  it('a transcription whose process is killed gets 503 with Retry-After and the transcription body; the next one succeeds', async () => {
    assert.equal((await transcribe(short)).status, 200, 'warm-up');
    const pending = transcribe(meeting);
    const killed = await killWhenBusy(server, 'transcription');
    const response = await pending;
    assert.equal(response.status, 503);
    assert.match(response.headers.get('retry-after') ?? '', /^\d+$/);
    const body = (await response.json()) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body).sort(), ['error', 'request_id']);
    assert.match(String(body.error), /inference process was killed by SIGKILL/);

    const next = await transcribe(short);
    assert.equal(next.status, 200);
    assert.match(((await next.json()) as { transcription: string }).transcription.toLowerCase(), /selfish/);
    const status = await inferenceProcess(server, 'transcription');
    assert.notEqual(status?.pid, killed, 'a new process took over');
    assert.equal(status?.restarts, 1);
    assert.equal(server.child.exitCode, null, 'the server process lives on');
  });

  it('an SSE synthesis whose process is killed ends with the error event; the next stream completes', async () => {
    const { voices } = (await (await api('/api/v1/tts-v2/get_voices')).json()) as { voices: Array<{ voiceId: string }> };
    const voice = voices.map((v) => v.voiceId).find((id) => id.startsWith(PIPER));
    assert.ok(voice, 'the Piper fixture voice is listed');
    const text = Array.from({ length: 200 }, (_, i) => `This is sentence number ${i + 1} of a long text.`).join(' ');
    const body = JSON.stringify({ text, voice_id: voice, output_format: 'pcm' });
    const response = await api('/api/v1/tts-v2/stream', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    assert.equal(response.status, 200);
    const events = await sseEvents(response, () => killWhenBusy(server, 'synthesis'));
    assert.ok(events.some((e) => e.event === 'chunk'), 'audio began before the kill');
    const last = events.at(-1)!;
    assert.equal(last.event, 'error');
    const error = JSON.parse(last.data) as Record<string, unknown>;
    assert.equal(error.error, 'ServiceUnavailable');
    assert.equal(error.status, '503');
    assert.match(String(error.message), /inference process was killed by SIGKILL/);
    assert.ok(Number(error.retry_after) >= 1);
    assert.ok(!events.some((e) => e.event === 'complete'));

    const again = await api('/api/v1/tts-v2/stream', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Back again. Fine.', voice_id: voice, output_format: 'pcm' }),
    });
    assert.equal((await sseEvents(again)).at(-1)?.event, 'complete');
    assert.equal(server.child.exitCode, null);
  });

  it('a webhook job whose process dies is taken up again, and fails with the failure payload after its third death', async () => {
    const receiver = await startReceiver();
    try {
      const submitted = await api(`/api/v1/stt/get_text?language=en&webhook_url=${encodeURIComponent(receiver.url)}`, {
        method: 'POST',
        headers: { 'content-type': 'audio/wav', 'x-request-id': 'poison-job-1' },
        body: new Uint8Array(meeting),
      });
      assert.equal(submitted.status, 200);
      for (let death = 1; death <= 3; death++) await killWhenBusy(server, 'transcription');

      const deadline = Date.now() + 60_000;
      while (receiver.forRequest('poison-job-1').length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      const [delivery, ...more] = receiver.forRequest('poison-job-1');
      assert.ok(delivery, 'the failure was delivered');
      assert.equal(more.length, 0);
      assert.equal(delivery.json.status, 'failed');
      assert.equal(delivery.json.request_id, 'poison-job-1');
      assert.match(String(delivery.json.error), /inference process died in 3 runs/);

      const job = (await (await api('/api/v1/stt/jobs/poison-job-1')).json()) as Record<string, unknown>;
      assert.equal(job.state, 'failed');
      // The server lives on and transcribes the next file.
      assert.equal((await transcribe(short)).status, 200);
      assert.equal(server.child.exitCode, null);
    } finally {
      await receiver.close();
    }
  });

  it('a reload during a 60-second transcription does not fail it; the replaced recogniser goes when it is done', async () => {
    const pending = transcribe(meeting);
    const deadline = Date.now() + 30_000;
    while (!((await inferenceProcess(server, 'transcription'))?.tasks.running ?? 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    // The same recogniser, as new files: a changed pack.
    const dir = path.join(server.modelsDir, ZIPFORMER);
    rmSync(dir);
    mkdirSync(dir);
    for (const file of readdirSync(sharedModel(ZIPFORMER))) copyFileSync(path.join(sharedModel(ZIPFORMER), file), path.join(dir, file));
    const reload = await api('/api/v1/admin/models/reload', { method: 'POST' });
    assert.equal(reload.status, 200);
    const report = (await reload.json()) as { started: string[]; kept: string[] };
    assert.deepEqual(report.started, [ZIPFORMER]);
    assert.deepEqual([...report.kept].sort(), [PIPER, VAD].sort());

    const response = await pending;
    assert.equal(response.status, 200);
    const result = (await response.json()) as { transcription: string; duration: number };
    assert.ok(result.transcription.split(' ').length > 20, 'the whole meeting was transcribed');
    assert.ok(result.duration > 59);

    // The old recogniser is unloaded once the request that held it is done; one remains, the new one.
    assert.equal((await transcribe(short)).status, 200);
    const recognizers = async () => ((await inferenceProcess(server, 'transcription'))?.models ?? []).filter((m) => m.includes('/online-asr@'));
    const until = Date.now() + 10_000;
    while ((await recognizers()).length !== 1 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    assert.equal((await recognizers()).length, 1);
  });

  it('a reload with no change loads nothing again and keeps every process', async () => {
    const before = (await server.readiness()).inference!.detail.processes;
    const reload = await api('/api/v1/admin/models/reload', { method: 'POST' });
    const report = (await reload.json()) as { started: string[]; kept: string[] };
    assert.deepEqual(report.started, []);
    assert.deepEqual([...report.kept].sort(), [PIPER, VAD, ZIPFORMER].sort());
    const after = (await server.readiness()).inference!.detail.processes;
    assert.deepEqual(
      after.map((p) => [p.name, p.pid, p.restarts, p.models.length]),
      before.map((p) => [p.name, p.pid, p.restarts, p.models.length]),
    );
  });
});
