/**
 * The current layout's synthesis socket (GET /waves/v1/tts/live) and the legacy socket paths under
 * the product names, driven over real sockets with the exact frames real clients send, on the real
 * eSpeak NG engine:
 * - LiveKit Agents' plugin, livekit/agents@da6af86ac640a3bc54585764e64321d7048c1c16,
 *   livekit-plugins/livekit-plugins-smallestai/livekit/plugins/smallestai/tts.py
 *   (SynthesizeStream._base_payload and _send_task: one frame per token with continue: true,
 *   flush: false, then {"text": "", "continue": false, "flush": true}; it waits for complete and
 *   reuses the socket for the next segment).
 * - Pipecat's service, pipecat-ai/pipecat@acead0507d7de44e216d24533964106ca1d1d044,
 *   src/pipecat/services/smallest/tts.py (_build_msg: whole sentences without continue;
 *   _send_keepalive: {"text": " ", "voice_id", "model", "language"} every 30 s).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { WebSocket } from 'ws';
import { connect, wsUrl, type TestSocket } from '../../helpers/websocket.js';

const VOICE = 'espeak-en-us-female';

let s: TestServer;

before(async () => {
  s = await startTestServer({ engines: true, config: { rateLimits: { synthesis: { perMinute: 0 } } } });
});
after(() => s?.close());

function open(path = '/waves/v1/tts/live'): Promise<TestSocket> {
  return connect(wsUrl(s.url, path), { authorization: `Bearer ${s.key}`, 'x-source': 'livekit' });
}

const audioOf = (messages: any[]) => Buffer.concat(messages.filter((m) => m.status === 'chunk').map((m) => Buffer.from(m.data.audio, 'base64')));

/** LiveKit's payload fields, as _base_payload writes them with the plugin's defaults and our voice. */
const livekitBase = { model: 'lightning_v3.1_pro', voice_id: VOICE, sample_rate: 24000, speed: 1.0, language: 'en', max_buffer_flush_ms: 0 };

/** An LLM's tokens: the first word bare, every next one with its leading space (as LLM tokenisers cut text). */
function tokens(text: string): string[] {
  return text.split(' ').map((word, i) => (i === 0 ? word : ` ${word}`));
}

/** Sends one LiveKit segment: its tokens, then the empty flush. */
function sendLivekitSegment(socket: TestSocket, text: string, base: object = livekitBase): void {
  for (const token of tokens(text)) socket.send({ ...base, text: token, continue: true, flush: false });
  socket.send({ ...base, text: '', continue: false, flush: true });
}

/** The messages from `from` on, up to the n-th complete or an error. */
async function untilComplete(socket: TestSocket, from: number, n = 1): Promise<any[]> {
  await socket.until((all) => all.slice(from).filter((m) => m.status === 'complete').length >= n || all.slice(from).some((m) => m.status === 'error'));
  return socket.messages.slice(from);
}

/** Seconds of 16-bit mono PCM. */
const seconds = (pcm: Buffer, rate: number) => pcm.length / 2 / rate;

async function restSeconds(text: string, rate: number): Promise<number> {
  const res = await s.api('/api/v1/tts-v3.1/get_speech', { method: 'POST', json: { voice_id: VOICE, text, sample_rate: rate, add_wav_header: false } });
  assert.equal(res.status, 200);
  return seconds(Buffer.from(await res.arrayBuffer()), rate);
}

const SEGMENT_ONE =
  'Thanks for calling the help desk today. I can see your order was shipped on Monday. It should reach your front door within two days, so keep an eye out.';
const SEGMENT_TWO = 'Is there anything else I can help you with?';

describe("LiveKit's token stream on /waves/v1/tts/live", () => {
  it('speaks a segment of 30 one-word tokens ended by the empty flush, all of it, then completes; a second segment follows on the same socket', async () => {
    assert.equal(tokens(SEGMENT_ONE).length, 30);
    const socket = await open();
    sendLivekitSegment(socket, SEGMENT_ONE);
    const first = await untilComplete(socket, 0);
    assert.deepEqual(first.filter((m) => m.status === 'error'), []);
    const complete = first.at(-1);
    assert.equal(complete.status, 'complete');
    const ids = new Set(first.map((m) => m.request_id));
    assert.equal(ids.size, 1, 'one request for the segment');
    assert.deepEqual(new Set(first.map((m) => m.status)), new Set(['chunk', 'complete']));
    const audio = audioOf(first);
    assert.equal(complete.audio_seconds, Math.round(seconds(audio, 24000) * 1000) / 1000);
    // All of the text is spoken: as long as the same text at once from get_speech (eSpeak's
    // pauses between separately made sentences differ a little).
    const whole = await restSeconds(SEGMENT_ONE, 24000);
    assert.ok(Math.abs(seconds(audio, 24000) - whole) < 0.1 * whole, `${seconds(audio, 24000)} s by tokens vs ${whole} s at once`);

    const from = socket.messages.length;
    sendLivekitSegment(socket, SEGMENT_TWO);
    const second = await untilComplete(socket, from);
    assert.equal(second.at(-1).status, 'complete', JSON.stringify(second.at(-1)));
    assert.notEqual(second[0].request_id, complete.request_id, 'a new request');
    const again = await restSeconds(SEGMENT_TWO, 24000);
    assert.ok(Math.abs(seconds(audioOf(second), 24000) - again) < 0.1 * again);
    assert.equal(socket.closed, undefined, 'the socket stays open');
    socket.close();
  });

  it('speaks each sentence as soon as it completes, before the flush', async () => {
    const socket = await open();
    // The first sentence, and the first token of the next one (which shows the sentence has ended).
    for (const token of tokens('Your order has shipped. It')) socket.send({ ...livekitBase, text: token, continue: true, flush: false });
    await socket.until((all) => all.some((m) => m.status === 'chunk'));
    assert.ok(!socket.messages.some((m) => m.status === 'complete'));
    for (const token of tokens('will arrive soon.')) socket.send({ ...livekitBase, text: ` ${token.trim()}`, continue: true, flush: false });
    socket.send({ ...livekitBase, text: '', continue: false, flush: true });
    const all = await untilComplete(socket, 0);
    assert.equal(all.at(-1).status, 'complete');
    assert.equal(new Set(all.map((m) => m.request_id)).size, 1);
    socket.close();
  });

  it('with max_buffer_flush_ms, speaks text that waits without a sentence end once that time has passed; without it, waits for the flush', async () => {
    const waiting = await open();
    for (const token of tokens('so the parcel with your new')) waiting.send({ ...livekitBase, text: token, continue: true, flush: false });
    await new Promise((r) => setTimeout(r, 800));
    assert.deepEqual(waiting.messages, [], 'nothing spoken while the text waits for a sentence end');
    waiting.send({ ...livekitBase, text: '', continue: false, flush: true });
    assert.equal((await untilComplete(waiting, 0)).at(-1).status, 'complete');
    waiting.close();

    const bounded = await open();
    const base = { ...livekitBase, max_buffer_flush_ms: 200 };
    for (const token of tokens('so the parcel with your new')) bounded.send({ ...base, text: token, continue: true, flush: false });
    await bounded.until((all) => all.some((m) => m.status === 'chunk'), 10_000);
    assert.ok(!bounded.messages.some((m) => m.status === 'complete'), 'the request goes on');
    bounded.send({ ...base, text: ' shoes', continue: true, flush: false });
    bounded.send({ ...base, text: '', continue: false, flush: true });
    const all = await untilComplete(bounded, 0);
    assert.equal(all.at(-1).status, 'complete');
    bounded.close();
  });

  it('the same protocol holds on the legacy socket paths under the product names', async () => {
    for (const path of ['/api/v1/lightning-v3.1/get_speech/stream', '/waves/v1/lightning-v2/get_speech/stream', '/api/v1/lightning/get_speech/stream']) {
      const socket = await open(path);
      const base = { ...livekitBase, model: path.includes('v3.1') ? 'lightning_v3.1' : 'lightning_v2', sample_rate: 16000 };
      sendLivekitSegment(socket, 'One. Two three', base);
      const all = await untilComplete(socket, 0);
      assert.equal(all.at(-1).status, 'complete', `${path}: ${JSON.stringify(all.at(-1))}`);
      socket.send({ voice_id: VOICE, text: ' ' });
      sendLivekitSegment(socket, 'Four.', base);
      const next = await untilComplete(socket, all.length);
      assert.equal(next.at(-1).status, 'complete', path);
      assert.ok(!next.some((m) => m.status === 'error'), path);
      socket.close();
    }
  });

  it('answers the upgrade on a deprecated name with Deprecation: true, and on a current one without', async () => {
    const deprecationOf = (path: string) =>
      new Promise<string | undefined>((resolve, reject) => {
        const ws = new WebSocket(wsUrl(s.url, path), { headers: { authorization: `Bearer ${s.key}` } });
        ws.once('upgrade', (res) => {
          resolve(res.headers.deprecation as string | undefined);
          ws.terminate();
        });
        ws.once('error', reject);
      });
    assert.equal(await deprecationOf('/api/v1/lightning/get_speech/stream'), 'true');
    assert.equal(await deprecationOf('/waves/v1/lightning-large/get_speech/stream'), 'true');
    assert.equal(await deprecationOf('/waves/v1/lightning-v3.1/get_speech/stream'), undefined);
    assert.equal(await deprecationOf('/waves/v1/tts/live'), undefined);
  });

  it('names the rule for a model no client sends, and keeps the socket', async () => {
    const socket = await open();
    socket.send({ ...livekitBase, model: 'lightning_v9', text: 'Hello.' });
    await socket.until((all) => all.length === 1);
    assert.equal(socket.messages[0].status, 'error');
    assert.match(socket.messages[0].message, /^model must be one of .*lightning_v3\.1_pro/);
    assert.equal(socket.messages[0].error.code, 'InvalidRequest');
    socket.send({ ...livekitBase, text: 'Hello.' });
    assert.equal((await untilComplete(socket, 1)).at(-1).status, 'complete');
    socket.close();
  });
});

describe("Pipecat's sentences and keep-alive on /waves/v1/tts/live", () => {
  /** _build_msg with the service's defaults (word_timestamps on, pcm) and our voice. */
  const sentence = (text: string) => ({ text, voice_id: VOICE, model: 'lightning_v3.1_pro', language: 'en', sample_rate: 16000, word_timestamps: true, output_format: 'pcm' });
  const keepalive = { text: ' ', voice_id: VOICE, model: 'lightning_v3.1_pro', language: 'en' };

  it('keep-alives hold a socket open past its ?timeout=; without them it closes', async () => {
    const socket = await open('/waves/v1/tts/live?timeout=1');
    for (let i = 0; i < 5; i++) {
      socket.send(keepalive);
      await new Promise((r) => setTimeout(r, 400));
    }
    assert.equal(socket.closed, undefined, 'open 2 s into a 1 s idle timeout');
    assert.deepEqual(socket.messages, []);
    assert.equal((await socket.untilClosed(5_000)).code, 1000);
  });

  it('answers the keep-alive with nothing, before and between sentences, and speaks each sentence with its word timestamps', async () => {
    const socket = await open();
    socket.send(keepalive);
    socket.send(sentence('Hello from Parley.'));
    socket.send(keepalive);
    socket.send(sentence('Goodbye.'));
    await socket.until((all) => all.filter((m) => m.status === 'complete').length === 2 || all.some((m) => m.status === 'error'));
    // A keep-alive sent after the last complete would answer after it: give it the time to.
    socket.send(keepalive);
    await new Promise((r) => setTimeout(r, 300));
    const all = socket.messages;
    assert.deepEqual(all.filter((m) => m.status === 'error'), []);
    assert.equal(all.at(-1).status, 'complete', 'nothing after the last complete');
    const ids = [...new Set(all.map((m) => m.request_id))];
    assert.equal(ids.length, 2, 'two requests, and nothing for the keep-alives');
    const words = all.filter((m) => m.status === 'word_timestamp');
    assert.deepEqual(
      words.map((m) => m.data.word.replace(/[^\w]/g, '').toLowerCase()),
      ['hello', 'from', 'parley', 'goodbye'],
    );
    // data: {id, word, start, end}, id the word's place in its request's text (asyncapi/tts-ws.yaml at smallest-inc/smallest-ai-documentation@bfc4ef1).
    assert.deepEqual(
      words.map((m) => m.data.id),
      [0, 1, 2, 0],
    );
    for (const m of words) {
      assert.deepEqual(Object.keys(m.data).sort(), ['end', 'id', 'start', 'word']);
      assert.ok(m.data.start >= 0 && m.data.end > m.data.start);
    }
    socket.close();
  });
});
