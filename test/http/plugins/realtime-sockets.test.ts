/**
 * The limits every WebSocket is held to, through real sockets on a server with short limits: the
 * session length (a socket is closed with 1008 when it is reached, however busy, while pings keep
 * an answering client alive until then), and ping/pong keep-alive (a client that stops answering
 * pings is dropped). Each shows in the readiness report's limit hits, and the AsyncAPI document
 * states them as configured.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { WebSocket } from 'ws';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { connect, TestSocket, wsUrl } from '../../helpers/websocket.js';

const SESSION_SECONDS = 3;
const PING_INTERVAL_MS = 100;

let s: TestServer;

before(async () => {
  s = await startTestServer({ engines: true, config: { logLevel: 'warn', realtime: { maxSessionSeconds: SESSION_SECONDS, pingIntervalMs: PING_INTERVAL_MS } } });
});
after(() => s?.close());

const socketUrl = () => wsUrl(s.url, '/api/v1/tts-v2/get_speech/stream');

async function limitHits(): Promise<Record<string, number>> {
  return (await (await s.api('/readyz')).json()).realtime.detail.limitHits;
}

describe('session length', () => {
  it('closes a socket at the maximum session length with 1008 and the reason, though it answers pings and keeps asking', async () => {
    const socket = await connect(socketUrl(), { authorization: `Bearer ${s.key}` });
    let pings = 0;
    socket.ws.on('ping', () => pings++);
    // Busy all along: a request every half second, each answered.
    let sent = 0;
    const deadline = Date.now() + SESSION_SECONDS * 1000 + 10_000;
    while (!socket.closed) {
      assert.ok(Date.now() < deadline, 'the session outlived its limit');
      socket.send({ voice_id: 'espeak-en-us-female', text: 'Still here.', request_id: `r${sent++}` });
      await new Promise((r) => setTimeout(r, 500));
    }
    assert.deepEqual(socket.closed, { code: 1008, reason: `session length limit of ${SESSION_SECONDS} s reached` });
    assert.ok(socket.messages.filter((m) => m.status === 'complete').length >= 2, 'requests were answered until the end');
    assert.ok(pings >= 2, `the server pinged (${pings}) and the answers kept the socket open`);
    assert.equal((await limitHits()).sessionLength, 1);
  });
});

describe('ping/pong keep-alive', () => {
  it('drops a client that stops answering pings, and counts it', async () => {
    const before = (await limitHits()).unansweredPing;
    // A client whose WebSocket stack does not answer pings (as one whose peer vanished).
    const ws = new WebSocket(socketUrl(), { headers: { authorization: `Bearer ${s.key}` }, autoPong: false });
    const socket = new TestSocket(ws);
    let pings = 0;
    ws.on('ping', () => pings++);
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const closed = await socket.untilClosed(SESSION_SECONDS * 1000 - 500);
    // Dropped without a closing handshake: the client sees an abnormal closure, not the session limit's 1008.
    assert.equal(closed.code, 1006);
    assert.ok(pings >= 1, 'the server pinged before dropping it');
    assert.equal((await limitHits()).unansweredPing, before + 1);
  });
});

describe('description', () => {
  it('the AsyncAPI document states the limits as configured', async () => {
    const { description } = (await (await fetch(`${s.url}/asyncapi.json`)).json()).info;
    assert.match(description, /at most 100 open sockets per account, counted across every server sharing the database/);
    assert.match(description, new RegExp(`closed with 1008 after ${SESSION_SECONDS} s, with 1009 on a message over 1 MiB`));
    assert.match(description, /pings every 0\.1 s and drops a client that did not answer the previous ping/);
  });
});
