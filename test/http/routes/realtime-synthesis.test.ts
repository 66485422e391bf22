/**
 * WebSocket synthesis through real sockets on the real eSpeak NG engine: the audio, the request
 * protocol (continue, flush, order, errors), authentication before the upgrade, and the limits.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { connect, openSocket, TestSocket, wsUrl } from '../../helpers/websocket.js';

const VOICE = 'espeak-en-us-female';
const SENTENCE = 'The quick brown fox jumps over the lazy dog.';

let s: TestServer;

before(async () => {
  s = await startTestServer({
    engines: true,
    config: {
      realtime: { maxSocketsPerAccount: 4, maxMessageBytes: 64 * 1024, maxBufferedBytes: 64 * 1024 },
      http: { writeStallTimeoutMs: 1_000 },
    },
  });
});
after(() => s?.close());

function socketUrl(model = 'tts-v2', query = ''): string {
  return wsUrl(s.url, `/api/v1/${model}/get_speech/stream${query}`);
}

function open(model = 'tts-v2', query = ''): Promise<TestSocket> {
  return connect(socketUrl(model, query), { authorization: `Bearer ${s.key}` });
}

/** Every message of request `id` up to its complete (or error) message. */
async function requestMessages(socket: TestSocket, id: string): Promise<any[]> {
  await socket.until((all) => all.some((m) => m.request_id === id && (m.status === 'complete' || m.status === 'error')));
  return socket.messages.filter((m) => m.request_id === id);
}

function audioOf(messages: any[]): Buffer {
  return Buffer.concat(messages.filter((m) => m.status === 'chunk').map((m) => Buffer.from(m.data.audio, 'base64')));
}

async function restSpeech(body: Record<string, unknown>): Promise<Buffer> {
  const res = await s.api('/api/v1/tts-v2/get_speech', { method: 'POST', json: { add_wav_header: false, ...body } });
  assert.equal(res.status, 200);
  return Buffer.from(await res.arrayBuffer());
}

async function readiness(): Promise<any> {
  const res = await s.api('/readyz');
  return (await res.json()).realtime.detail;
}

/** Drops the sockets and waits until the server has let go of them (they count against the account until then). */
async function closeAll(sockets: TestSocket[]): Promise<void> {
  for (const socket of sockets) socket.close();
  for (;;) {
    const { open } = await readiness();
    if (open.synthesis === 0) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('authentication', () => {
  it('refuses a socket without a key with 401 before the upgrade', async () => {
    const result = await openSocket(socketUrl());
    assert.ok(!(result instanceof TestSocket), 'the upgrade must not happen');
    assert.equal(result.status, 401);
    assert.deepEqual(result.body, { error: 'Unauthorized', message: 'Bearer token is missing' });
  });

  it('refuses a bad key, in the header or in ?token=, with 401', async () => {
    for (const [query, headers] of [['', { authorization: 'Bearer sk_nope' }], ['?token=sk_nope', {}]] as const) {
      const result = await openSocket(socketUrl('tts-v2', query), headers);
      assert.ok(!(result instanceof TestSocket));
      assert.equal(result.status, 401);
      assert.deepEqual(result.body, { error: 'Unauthorized', message: 'Bearer token is invalid' });
    }
  });

  it('accepts the key as ?token= (for browsers)', async () => {
    const socket = await connect(socketUrl('tts-v3.1', `?token=${s.key}`));
    socket.send({ voice_id: VOICE, text: 'Hi.', request_id: 'r' });
    const messages = await requestMessages(socket, 'r');
    assert.equal(messages.at(-1).status, 'complete');
    await closeAll([socket]);
  });
});

describe('audio', () => {
  it('sends chunks that concatenate into the same audio as get_speech, at the requested rate', async () => {
    const socket = await open();
    socket.send({ voice_id: VOICE, text: SENTENCE, sample_rate: 16000, request_id: 'one' });
    const messages = await requestMessages(socket, 'one');
    const complete = messages.at(-1);
    assert.equal(complete.status, 'complete');
    const audio = audioOf(messages);
    assert.equal(complete.chunks, messages.length - 1);
    // 16-bit mono at 16 kHz: the duration the completion reports is what the bytes hold.
    assert.equal(complete.audio_seconds, Math.round((audio.length / 2 / 16000) * 1000) / 1000);
    // Nine words take a speaker roughly 2-5 s.
    assert.ok(complete.audio_seconds > 1.5 && complete.audio_seconds < 6, `duration ${complete.audio_seconds}`);
    // eSpeak NG's output wobbles from run to run (two get_speech calls differ too), its length does not.
    const rest = await restSpeech({ voice_id: VOICE, text: SENTENCE, sample_rate: 16000 });
    assert.equal(audio.length, rest.length, 'as long as the same text from get_speech');
    assert.ok(audio.some((byte) => byte !== 0), 'not silence');
    await closeAll([socket]);
  });

  it('makes one complete audio of text sent in parts with continue and flush', async () => {
    const socket = await open();
    socket.send({ voice_id: VOICE, text: 'The quick brown fox ', continue: true, output_format: 'wav', request_id: 'parts' });
    socket.send({ voice_id: VOICE, text: 'jumps over the lazy dog. It was ', continue: true, request_id: 'parts' });
    socket.send({ voice_id: VOICE, text: 'not amused.', continue: true, request_id: 'parts' });
    socket.send({ voice_id: VOICE, flush: true, request_id: 'parts' });
    const messages = await requestMessages(socket, 'parts');
    assert.equal(messages.at(-1).status, 'complete', JSON.stringify(messages.at(-1)));
    const audio = audioOf(messages);
    // One stream: one WAV header at the start, none later.
    assert.equal(audio.subarray(0, 4).toString('latin1'), 'RIFF');
    assert.equal(audio.indexOf('RIFF', 4, 'latin1'), -1);
    const whole = await restSpeech({ voice_id: VOICE, text: 'The quick brown fox jumps over the lazy dog. It was not amused.' });
    const seconds = (audio.length - 44) / 2 / 24000;
    const wholeSeconds = whole.length / 2 / 24000;
    assert.ok(Math.abs(seconds - wholeSeconds) < 0.25 * wholeSeconds, `${seconds} s in parts vs ${wholeSeconds} s at once`);
    await closeAll([socket]);
  });

  it('finishes a request whose last message leaves continue out, and speaks text before the flush', async () => {
    const socket = await open();
    socket.send({ voice_id: VOICE, text: 'First sentence here. ', continue: true });
    // A sentence has ended: its audio comes before anything else is sent.
    await socket.until((all) => all.some((m) => m.status === 'chunk'));
    socket.send({ voice_id: VOICE, text: 'And the end.' });
    await socket.until((all) => all.some((m) => m.status === 'complete'));
    const ids = new Set(socket.messages.map((m) => m.request_id));
    assert.equal(ids.size, 1, 'all parts belong to one request');
    await closeAll([socket]);
  });
});

describe('several requests on one socket', () => {
  it('completes them in the order they were sent', async () => {
    const socket = await open();
    socket.send({ voice_id: VOICE, text: `${SENTENCE} ${SENTENCE} ${SENTENCE}`, request_id: 'a' });
    socket.send({ voice_id: VOICE, text: 'Short.', request_id: 'b' });
    socket.send({ voice_id: VOICE, text: 'Also short.', request_id: 'c' });
    await socket.until((all) => all.filter((m) => m.status === 'complete').length === 3);
    const order = socket.messages.map((m) => m.request_id);
    const firstOf = (id: string) => order.indexOf(id);
    const lastOf = (id: string) => order.lastIndexOf(id);
    assert.ok(lastOf('a') < firstOf('b') && lastOf('b') < firstOf('c'), `order: ${order.join(',')}`);
    await closeAll([socket]);
  });
});

describe('errors', () => {
  it('answers an unknown voice with an error message, like REST, and the socket stays usable', async () => {
    const socket = await open();
    socket.send({ voice_id: 'nobody', text: SENTENCE, request_id: 'bad' });
    const [error] = await requestMessages(socket, 'bad');
    const rest = await s.api('/api/v1/tts-v2/get_speech', { method: 'POST', json: { voice_id: 'nobody', text: SENTENCE } });
    assert.equal(rest.status, 400);
    const restBody = await rest.json();
    assert.deepEqual(error, { status: 'error', request_id: 'bad', message: restBody.message, error: { code: restBody.error, message: restBody.message } });
    socket.send({ voice_id: VOICE, text: 'Still here.', request_id: 'good' });
    assert.equal((await requestMessages(socket, 'good')).at(-1).status, 'complete');
    await closeAll([socket]);
  });

  it('checks fields with the REST rules and sentences', async () => {
    const socket = await open();
    const cases: [Record<string, unknown>, string][] = [
      [{ voice_id: VOICE, text: 'x', speed: 5 }, 'speed must be between 0.5 and 2'],
      [{ voice_id: VOICE, text: 'x', output_format: 'flac' }, 'output_format must be one of pcm, wav, mp3, mulaw, alaw, ulaw'],
      [{ text: 'x' }, 'voice_id is required'],
      [{ voice_id: VOICE }, 'text is required'],
    ];
    for (const [i, [body, sentence]] of cases.entries()) {
      socket.send({ ...body, request_id: `e${i}` });
      const [error] = await requestMessages(socket, `e${i}`);
      assert.equal(error.message, sentence);
      assert.equal(error.error.code, 'InvalidRequest');
      if (body.text !== undefined) {
        const rest = await s.api('/api/v1/tts-v2/get_speech', { method: 'POST', json: body });
        assert.equal((await rest.json()).message, sentence, 'the same sentence as the REST route');
      }
    }
    socket.send('{not json');
    socket.send('[1, 2]');
    socket.send(Buffer.from([1, 2, 3]));
    await socket.until((all) => all.length === cases.length + 3);
    assert.deepEqual(
      socket.messages.slice(-3).map((m) => [m.status, m.request_id, m.message]),
      [
        ['error', null, 'Request body is not valid JSON'],
        ['error', null, 'Request body must be a JSON object'],
        ['error', null, 'Messages must be JSON text frames'],
      ],
    );
    await closeAll([socket]);
  });
});

describe('limits', () => {
  it('refuses ?timeout= beyond 600 s with 400 before the upgrade, and closes an idle socket after ?timeout=', async () => {
    const refused = await openSocket(socketUrl('tts-v2', '?timeout=601'), { authorization: `Bearer ${s.key}` });
    assert.ok(!(refused instanceof TestSocket));
    assert.equal(refused.status, 400);
    assert.deepEqual(refused.body, { error: 'InvalidRequest', message: 'timeout must be between 1 and 600' });

    const socket = await open('tts-v2', '?timeout=1');
    const started = Date.now();
    const closed = await socket.untilClosed(5_000);
    assert.equal(closed.code, 1000);
    assert.match(closed.reason, /idle/);
    assert.ok(Date.now() - started >= 900);
  });

  it('closes sockets beyond the account limit with 1008 and a reason, and counts it', async () => {
    const before = (await readiness()).limitHits.socketsPerAccount;
    const sockets = await Promise.all([1, 2, 3, 4].map(() => open()));
    const extra = await open();
    const closed = await extra.untilClosed();
    assert.equal(closed.code, 1008);
    assert.match(closed.reason, /too many open sockets for this account \(at most 4\)/);
    assert.equal((await readiness()).limitHits.socketsPerAccount, before + 1);
    await closeAll([...sockets, extra]);
  });

  it('closes a socket whose message is too large with 1009, and counts it', async () => {
    const socket = await open();
    socket.send({ voice_id: VOICE, text: 'x'.repeat(70 * 1024) });
    assert.equal((await socket.untilClosed()).code, 1009);
    assert.equal((await readiness()).limitHits.messageSize, 1);
  });

  it('pauses for a client that stops reading, then closes it, without holding its audio', async () => {
    const socket = await open('tts-v3.1');
    const raw = (socket.ws as unknown as { _socket: import('node:net').Socket })._socket;
    // About ten minutes of 44.1 kHz audio: some 70 MB of base64 if it were all queued.
    const text = Array.from({ length: 200 }, () => SENTENCE).join(' ');
    socket.send({ voice_id: VOICE, text, request_id: 'flood' });
    raw.pause();
    // The kernel's socket buffers fill first; then the server's queue passes its limit, synthesis
    // waits, and after the stall time (1 s here) the server gives up on the client.
    const deadline = Date.now() + 60_000;
    while ((await readiness()).limitHits.backPressure === 0) {
      assert.ok(Date.now() < deadline, 'the server never noticed that the client stopped reading');
      await new Promise((r) => setTimeout(r, 200));
    }
    raw.resume();
    const closed = await socket.untilClosed(10_000);
    assert.equal(closed.code, 1008);
    assert.equal(closed.reason, 'client is not reading its messages');
    const received = socket.messages.reduce((n, m) => n + (m.data?.audio.length ?? 0), 0);
    assert.ok(received < 12 * 2 ** 20, `received ${received} bytes of base64 before the close`);
    assert.equal((await readiness()).limitHits.backPressure, 1);
  });
});

describe('description', () => {
  it('the OpenAPI document links to an AsyncAPI description of both sockets', async () => {
    const openapi = await (await fetch(`${s.url}/openapi.json`)).json();
    assert.equal(openapi.externalDocs.url, '/asyncapi.json');
    const asyncapi = await (await fetch(`${s.url}/asyncapi.json`)).json();
    assert.equal(asyncapi.asyncapi, '3.0.0');
    const addresses = new Set(Object.values(asyncapi.channels).map((c: any) => c.address));
    // Each one a route of the server.
    for (const address of addresses) assert.ok(s.server.app.hasRoute({ method: 'GET', url: address }), address);
    for (const address of ['/api/v1/stt/get_text', '/api/v1/tts-v2/get_speech/stream', '/api/v1/lightning-v3.1/get_speech/stream', '/waves/v1/lightning-large/get_speech/stream', '/waves/v1/pulse/get_text', '/waves/v1/tts/live', '/waves/v1/stt/live', '/waves/v1/streaming-tts/stream']) {
      assert.ok(addresses.has(address), address);
    }
    assert.equal(addresses.size, 7 * 2 + 2 * 2 + 3);
    assert.ok(asyncapi.channels['tts-live'].messages.wordTimestamp);
    assert.equal(asyncapi.channels['stt-live'].messages.transcription.payload.properties.words.items.properties.speaker.type, 'integer');
    assert.deepEqual(asyncapi.channels['tts-v2'].messages.speechRequest.payload.properties.speed, { minimum: 0.5, maximum: 2, default: 1, type: 'number' });
  });
});
