/**
 * What today's service sends on /waves/v1 and under the product names, over real HTTP and real
 * sockets on the real eSpeak NG engine, replaying the exact requests of its clients:
 * - Python SDK smallest-inc/smallest-python-sdk@86842be (5.5.0), src/smallestai/waves/raw_client.py:
 *   synthesize_tts posts {text, voice_id, model, sample_rate, speed, language,
 *   number_pronunciation_language, output_format, pronunciation_dicts, word_timestamps, session_id,
 *   request_id} (fields not given are left out) with `Accept: audio/wav` to waves/v1/tts;
 *   synthesize_sse_tts posts the same body to waves/v1/tts/live and reads it with an EventSource.
 * - Vercel AI SDK provider smallest-inc/smallest-ai-vercel-provider@579628e,
 *   src/smallestai-speech-model.ts doGenerate: {text, voice_id, model, sample_rate: 44100, speed: 1,
 *   language: 'auto', output_format} to /waves/v1/tts.
 * - LiveKit Agents' plugin livekit/agents@da6af86ac640a3bc54585764e64321d7048c1c16,
 *   livekit-plugins/livekit-plugins-smallestai/livekit/plugins/smallestai/tts.py: SynthesizeStream's
 *   token frames ({..._base_payload, text, continue: true, flush: false}) on /waves/v1/tts/live.
 * - Pipecat pipecat-ai/pipecat@acead0507d7de44e216d24533964106ca1d1d044,
 *   src/pipecat/services/smallest/tts.py _build_msg: {text, voice_id, model, language, sample_rate,
 *   word_timestamps: true, output_format}.
 * Frames, headers and fields as documented by smallest-inc/smallest-ai-documentation@bfc4ef1:
 * fern/apis/waves/openapi/tts-openapi.yaml and fern/apis/waves/asyncapi/tts-ws.yaml.
 */
import assert from 'node:assert/strict';
import { Ajv } from 'ajv';
import { after, before, describe, it } from 'node:test';
import { decodeALaw } from '../../../src/audio/g711.js';
import { parseWav } from '../../../src/audio/wav.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { allSseEvents } from '../../helpers/sse.js';
import { connect, wsUrl, type TestSocket } from '../../helpers/websocket.js';

const VOICE = 'espeak-en-us-female';

let s: TestServer;

before(async () => {
  s = await startTestServer({ engines: true, config: { rateLimits: { synthesis: { perMinute: 0 } } } });
});
after(() => s?.close());

/** The Python SDK's body for synthesize_tts / synthesize_sse_tts, with the fields a caller gave. */
const pythonSdkBody = (fields: Record<string, unknown>) => ({ voice_id: VOICE, model: 'lightning_v3.1', sample_rate: 24000, speed: 1, language: 'en', output_format: 'pcm', ...fields });

const int16s = (bytes: Uint8Array) => new Int16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));

/** RMS of each 10 ms frame. */
function envelope(samples: ArrayLike<number>, rate: number): number[] {
  const frame = rate / 100;
  const out: number[] = [];
  for (let at = 0; at + frame <= samples.length; at += frame) {
    let sum = 0;
    for (let i = at; i < at + frame; i++) sum += samples[i]! ** 2;
    out.push(Math.sqrt(sum / frame));
  }
  return out;
}

function pearson(a: number[], b: number[]): number {
  const n = Math.min(a.length, b.length);
  const mean = (x: number[]) => x.slice(0, n).reduce((t, v) => t + v, 0) / n;
  const [ma, mb] = [mean(a), mean(b)];
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < n; i++) {
    ab += (a[i]! - ma) * (b[i]! - mb);
    aa += (a[i]! - ma) ** 2;
    bb += (b[i]! - mb) ** 2;
  }
  return ab / Math.sqrt(aa * bb);
}

/**
 * The A-law bytes, decoded (by the decoder that agrees with ffmpeg on all 256 codes), are the
 * speech the PCM request gave: one byte a sample, the same loudness frame by frame. eSpeak NG's
 * noise sources differ from one rendering to the next, so two requests are compared by their
 * envelopes; the codec's per-sample error is checked on a fixed signal in test/audio/encode.test.ts.
 */
function assertALawOf(alaw: Uint8Array, pcm: Int16Array, rate: number): void {
  assert.equal(alaw.length, pcm.length, 'one byte a sample');
  const heard = envelope(Array.from(decodeALaw(alaw), (v) => v * 32768), rate);
  const said = envelope(pcm, rate);
  assert.ok(pearson(heard, said) > 0.95, `envelope correlation ${pearson(heard, said)}`);
  const level = (e: number[]) => Math.sqrt(e.reduce((t, v) => t + v * v, 0) / e.length);
  assert.ok(Math.abs(Math.log10(level(heard) / level(said))) * 20 < 1, `levels ${level(heard)} and ${level(said)}`);
  assert.ok(level(said) > 300, 'speech, not silence');
}

describe('output_format alaw', () => {
  it("POST /waves/v1/tts (the Vercel provider's body): raw G.711 A-law, audio/x-alaw, that decodes to the speech PCM gives", async () => {
    const body = { text: 'Your table for two is ready.', voice_id: VOICE, model: 'lightning_v3.1', sample_rate: 44100, speed: 1, language: 'auto' };
    const res = await s.api('/waves/v1/tts', { method: 'POST', json: { ...body, output_format: 'alaw' } });
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(res.headers.get('content-type'), 'audio/x-alaw');
    assert.equal(res.headers.get('x-sample-rate'), '44100');
    const pcm = await s.api('/waves/v1/tts', { method: 'POST', json: { ...body, output_format: 'pcm' } });
    assertALawOf(new Uint8Array(await res.arrayBuffer()), int16s(new Uint8Array(await pcm.arrayBuffer())), 44100);
  });

  it('a product name\'s get_speech answers a WAV file of format tag 6 (A-law, 8-bit); add_wav_header: false the raw bytes', async () => {
    const body = { text: 'Press one for sales.', voice_id: VOICE, sample_rate: 8000 };
    const wav = await s.api('/waves/v1/lightning-v3.1/get_speech', { method: 'POST', json: { ...body, output_format: 'alaw' } });
    assert.equal(wav.status, 200);
    assert.equal(wav.headers.get('content-type'), 'audio/wav');
    const file = new Uint8Array(await wav.arrayBuffer());
    const view = new DataView(file.buffer, file.byteOffset);
    assert.equal(view.getUint16(20, true), 6, 'format tag: A-law');
    assert.equal(view.getUint16(34, true), 8, 'bits per sample');
    assert.equal(parseWav(file).sampleRate, 8000);
    const raw = await s.api('/api/v1/lightning-v2/get_speech', { method: 'POST', json: { ...body, output_format: 'alaw', add_wav_header: false } });
    assert.equal(raw.headers.get('content-type'), 'audio/x-alaw');
    const pcm = await s.api('/api/v1/lightning-v2/get_speech', { method: 'POST', json: { ...body, output_format: 'pcm', add_wav_header: false } });
    assertALawOf(new Uint8Array(await raw.arrayBuffer()), int16s(new Uint8Array(await pcm.arrayBuffer())), 8000);
  });

  it('ulaw is accepted by the product names too (mu-law, the service\'s spelling)', async () => {
    const res = await s.api('/waves/v1/lightning-v2/get_speech', { method: 'POST', json: { text: 'Hi.', voice_id: VOICE, sample_rate: 8000, output_format: 'ulaw', add_wav_header: false } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'audio/x-mulaw');
  });
});

describe('POST /waves/v1/tts and /tts/live: correlation headers', () => {
  it("echo the Python SDK's session_id and request_id as X-External-*, beside our own X-Session-Id and X-Request-Id", async () => {
    for (const path of ['/waves/v1/tts', '/waves/v1/tts/live']) {
      const res = await s.api(path, { method: 'POST', headers: { accept: 'audio/wav' }, json: pythonSdkBody({ text: 'Hello.', session_id: 'call-42.a', request_id: 'turn_7-b' }) });
      assert.equal(res.status, 200, path);
      assert.equal(res.headers.get('x-external-session-id'), 'call-42.a', path);
      assert.equal(res.headers.get('x-external-request-id'), 'turn_7-b', path);
      assert.match(res.headers.get('x-session-id') ?? '', /\S/, path);
      assert.match(res.headers.get('x-request-id') ?? '', /\S/, path);
      await res.arrayBuffer();
    }
  });

  it('send the external headers empty when the body has no ids', async () => {
    const res = await s.api('/waves/v1/tts', { method: 'POST', json: pythonSdkBody({ text: 'Hello.' }) });
    assert.equal(res.headers.get('x-external-session-id'), '');
    assert.equal(res.headers.get('x-external-request-id'), '');
    await res.arrayBuffer();
  });

  it('refuse an id outside the documented pattern, naming the field', async () => {
    const res = await s.api('/waves/v1/tts', { method: 'POST', json: pythonSdkBody({ text: 'Hello.', session_id: 'has space' }) });
    assert.equal(res.status, 400);
    assert.match((await res.json()).message, /session_id/);
  });
});

describe('SSE frames', () => {
  it('POST /waves/v1/tts/live (synthesize_sse_tts): event: audio {"audio", "done": false, "status": "206"} chunks, then data {"status": "200", "done": true}', async () => {
    const res = await s.api('/waves/v1/tts/live', { method: 'POST', json: pythonSdkBody({ text: 'Streaming this sentence chunk by chunk.' }) });
    assert.equal(res.status, 200);
    const events = await allSseEvents(res);
    const chunks = events.slice(0, -1);
    assert.ok(chunks.length > 1);
    for (const e of chunks) {
      assert.deepEqual(e.fields.map(([name]) => name), ['event', 'data']);
      assert.equal(e.event, 'audio');
      const data = JSON.parse(e.data);
      assert.deepEqual(Object.keys(data), ['audio', 'done', 'status']);
      assert.equal(data.done, false);
      assert.equal(data.status, '206');
      assert.ok(Buffer.from(data.audio, 'base64').length > 0);
    }
    assert.deepEqual(events.at(-1)!.fields, [['data', '{"status":"200","done":true}']]);
  });

  it('a product name\'s /stream sends the same frames under both prefixes; a neutral name keeps the original API\'s', async () => {
    for (const path of ['/api/v1/lightning-v3.1/stream', '/waves/v1/lightning-v2/stream']) {
      const events = await allSseEvents(await s.api(path, { method: 'POST', json: { text: 'Hello there.', voice_id: VOICE } }));
      assert.ok(events.slice(0, -1).every((e) => e.event === 'audio' && JSON.parse(e.data).status === '206'), path);
      assert.deepEqual(JSON.parse(events.at(-1)!.data), { status: '200', done: true }, path);
    }
    const neutral = await allSseEvents(await s.api('/api/v1/tts-v2/stream', { method: 'POST', json: { text: 'Hello there.', voice_id: VOICE } }));
    assert.equal(neutral[0]!.event, 'chunk');
    assert.equal(neutral.at(-1)!.event, 'complete');
  });
});

function open(path = '/waves/v1/tts/live'): Promise<TestSocket> {
  return connect(wsUrl(s.url, path), { authorization: `Bearer ${s.key}` });
}

const livekitBase = { model: 'lightning_v3.1_pro', voice_id: VOICE, sample_rate: 24000, speed: 1.0, language: 'en', max_buffer_flush_ms: 0 };
const pipecatMessage = (text: string, extra: object = {}) => ({ text, voice_id: VOICE, model: 'lightning_v3.1_pro', language: 'en', sample_rate: 16000, word_timestamps: true, output_format: 'pcm', ...extra });

const until = (socket: TestSocket, n: number, from = 0) =>
  socket.until((all) => all.slice(from).filter((m) => m.status === 'complete').length >= n || all.slice(from).some((m) => m.status === 'error'));

describe('WebSocket frames on /waves/v1/tts/live and the product names', () => {
  it('every message carries session_id, our request_id, and the client\'s ids as external_session_id / external_request_id', async () => {
    const socket = await open();
    socket.send(pipecatMessage('First one.', { request_id: 'turn-1', session_id: 'agent.7' }));
    socket.send(pipecatMessage('Second one.'));
    const all = await until(socket, 2);
    assert.deepEqual(all.filter((m) => m.status === 'error'), []);
    const sessions = new Set(all.map((m) => m.session_id));
    assert.equal(sessions.size, 1, 'one session id for the connection');
    assert.match([...sessions][0], /\S/);
    const first = all.filter((m) => m.external_request_id === 'turn-1');
    const second = all.filter((m) => m.external_request_id === undefined);
    assert.equal(first.length + second.length, all.length);
    assert.ok(first.every((m) => m.external_session_id === 'agent.7'));
    assert.ok(second.every((m) => !('external_session_id' in m)), 'omitted when not given');
    assert.equal(new Set(first.map((m) => m.request_id)).size, 1);
    assert.equal(new Set(second.map((m) => m.request_id)).size, 1);
    assert.notEqual(first[0].request_id, 'turn-1', 'request_id is ours');
    assert.notEqual(first[0].request_id, second[0].request_id);
    for (const m of all) assert.deepEqual(Object.keys(m).slice(0, 2), ['session_id', 'request_id']);
    socket.close();
  });

  it('every message it sent matches the message of /asyncapi.json its status names', async () => {
    const doc = await (await fetch(`${s.url}/asyncapi.json`)).json();
    const ajv = new Ajv({ strict: false });
    const messages = doc.channels['tts-live'].messages;
    const check = Object.fromEntries(
      Object.entries({ chunk: 'chunk', word_timestamp: 'wordTimestamp', complete: 'complete', error: 'error' }).map(([status, name]) => [status, ajv.compile(messages[name].payload)]),
    );
    const socket = await open();
    socket.send(pipecatMessage('Checked against the document.', { request_id: 'doc-1', session_id: 'doc' }));
    socket.send(pipecatMessage('Nobody speaks.', { voice_id: 'nobody' }));
    socket.send({ text: 'Not a voice.' });
    await socket.until((all) => all.filter((m) => m.status === 'complete' || m.status === 'error').length === 3);
    assert.deepEqual(new Set(socket.messages.map((m) => m.status)), new Set(['chunk', 'word_timestamp', 'complete', 'error']));
    for (const m of socket.messages) assert.ok(check[m.status]!(m), `${JSON.stringify(m).slice(0, 200)}: ${ajv.errorsText(check[m.status]!.errors)}`);
    socket.close();
  });

  it("word_timestamp data is {id, word, start, end}, id counting the request's words across its sentences", async () => {
    const socket = await open('/api/v1/lightning-v3.1/get_speech/stream');
    const text = 'One two. Three four five.';
    for (const [i, word] of text.split(' ').entries()) socket.send({ ...livekitBase, model: 'lightning_v3.1', word_timestamps: true, text: i === 0 ? word : ` ${word}`, continue: true, flush: false });
    socket.send({ ...livekitBase, model: 'lightning_v3.1', text: '', continue: false, flush: true });
    const all = await until(socket, 1);
    const words = all.filter((m) => m.status === 'word_timestamp').map((m) => m.data);
    assert.deepEqual(words.map((w) => w.id), [0, 1, 2, 3, 4]);
    assert.deepEqual(words.map((w) => Object.keys(w)), words.map(() => ['id', 'word', 'start', 'end']));
    socket.close();
  });

  it('an error is {session_id, external ids, status: "error", message, error: {code, message}}, and the socket goes on', async () => {
    const socket = await open();
    socket.send(pipecatMessage('Hello.', { voice_id: 'nobody', request_id: 'r-1', session_id: 'sess-1' }));
    await socket.until((all) => all.length === 1);
    const error = socket.messages[0];
    assert.equal(error.status, 'error');
    assert.match(error.session_id, /\S/);
    assert.equal(error.external_request_id, 'r-1');
    assert.equal(error.external_session_id, 'sess-1');
    assert.match(error.message, /nobody/);
    assert.deepEqual(error.error, { code: 'InvalidRequest', message: error.message });
    socket.send(pipecatMessage('Still here.'));
    assert.equal((await until(socket, 1, 1)).at(-1).status, 'complete');
    socket.close();
  });

  it('an idle socket is told {"status": "error", "message": "Connection timed out after N seconds of inactivity"} before it closes; a neutral socket just closes', async () => {
    const socket = await open('/waves/v1/tts/live?timeout=1');
    assert.equal((await socket.untilClosed(5_000)).code, 1000);
    assert.equal(socket.messages.length, 1);
    assert.deepEqual({ ...socket.messages[0], session_id: undefined }, { session_id: undefined, status: 'error', message: 'Connection timed out after 1 seconds of inactivity' });
    assert.match(socket.messages[0].session_id, /\S/);
    const neutral = await open('/api/v1/tts-v3.1/get_speech/stream?timeout=1');
    assert.equal((await neutral.untilClosed(5_000)).code, 1000);
    assert.deepEqual(neutral.messages, []);
  });
});

describe('complete_backoff_ms', () => {
  /** LiveKit's token frames for `text` without the flush that would end the request. */
  function sendTokensWithoutFlush(socket: TestSocket, text: string, extra: object = {}): void {
    for (const [i, word] of text.split(' ').entries()) socket.send({ ...livekitBase, ...extra, text: i === 0 ? word : ` ${word}`, continue: true, flush: false });
  }

  it('an open request completes once its audio is out and no text came for complete_backoff_ms; text in between keeps it open', async () => {
    const socket = await open();
    sendTokensWithoutFlush(socket, 'Your order has shipped. ', { complete_backoff_ms: 1500 });
    await socket.until((all) => all.some((m) => m.status === 'chunk'));
    // More text within the backoff: the same request goes on.
    await new Promise((r) => setTimeout(r, 700));
    sendTokensWithoutFlush(socket, 'It arrives Monday. ');
    const all = await until(socket, 1);
    assert.equal(all.at(-1).status, 'complete');
    assert.equal(new Set(all.map((m) => m.request_id)).size, 1, 'one request');
    const whole = (await (await s.api('/waves/v1/tts', { method: 'POST', json: { text: 'Your order has shipped. It arrives Monday.', voice_id: VOICE, sample_rate: 24000 } })).arrayBuffer()).byteLength;
    const spoken = all.filter((m) => m.status === 'chunk').reduce((n, m) => n + Buffer.from(m.data.audio, 'base64').length, 0);
    assert.ok(Math.abs(spoken - whole) < 0.1 * whole, `${spoken} bytes spoken vs ${whole} for both sentences at once`);
    socket.close();
  });

  it('defaults to 4000 ms on /waves/v1/tts/live; a neutral socket waits for the flush unless the client asks', async () => {
    const socket = await open();
    sendTokensWithoutFlush(socket, 'Hello there. ');
    await socket.until((all) => all.some((m) => m.status === 'chunk'));
    let last = Date.now();
    await socket.until((all) => {
      if (all.at(-1)?.status === 'chunk') last = Date.now();
      return all.some((m) => m.status === 'complete' || m.status === 'error');
    }, 10_000);
    const waited = Date.now() - last;
    assert.equal(socket.messages.at(-1).status, 'complete');
    assert.ok(waited >= 3_800 && waited < 6_000, `complete ${waited} ms after the last chunk`);
    socket.close();

    const neutral = await open('/api/v1/tts-v3.1/get_speech/stream');
    sendTokensWithoutFlush(neutral, 'Hello there. ', { model: 'tts-v3.1' });
    await neutral.until((all) => all.some((m) => m.status === 'chunk'));
    await new Promise((r) => setTimeout(r, 4_500));
    assert.ok(!neutral.messages.some((m) => m.status === 'complete'), 'still open');
    sendTokensWithoutFlush(neutral, 'Bye. ', { model: 'tts-v3.1', complete_backoff_ms: 200 });
    assert.equal((await until(neutral, 1)).at(-1).status, 'complete');
    neutral.close();
  });

  it('is refused above 10000 ms, naming the field', async () => {
    const socket = await open();
    socket.send(pipecatMessage('Hello.', { complete_backoff_ms: 10_001 }));
    await socket.until((all) => all.length === 1);
    assert.equal(socket.messages[0].status, 'error');
    assert.match(socket.messages[0].message, /complete_backoff_ms/);
    socket.close();
  });
});
