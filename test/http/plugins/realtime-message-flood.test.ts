/**
 * A client that floods a socket with tiny malformed frames ("x": one byte, not JSON, a frame none
 * of the socket protocols takes) must not hold the event loop: while 20,000 of them arrive on each
 * socket kind (OpenAI Realtime, both synthesis socket paths, both streaming transcription paths),
 * /healthz asked again and again on another connection still answers within 3 s (before the fix:
 * 7–48 s; with it, 10–200 ms on an idle machine, up to about 1 s beside a full test run). The server
 * runs as its own process, so the test's own sending and reading are not counted in that figure.
 * - With the default limits the socket is closed (1008) once malformed frames pass
 *   realtime.maxMalformedMessagesPerSecond, after an error message in the route's own shape.
 * - With that limit out of the way every frame is answered: what is measured is then the cost of
 *   each frame and the socket's back-pressure on message count alone.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { WebSocket } from 'ws';
import { loadConfig } from '../../../src/config.js';
import { needs, REAL_TEST_MODELS } from '../../helpers/models.js';
import { startServerProcess, type ServerProcess } from '../../helpers/server-process.js';
import { wsUrl } from '../../helpers/websocket.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH] });
const FRAMES = 20_000;
/** Far below anything the bug left (7 s and more), far above a loaded machine's worst answer with the fix (about 1 s). */
const MAX_STALL_MS = 3_000;
const MALFORMED_LIMIT = loadConfig({}).realtime.maxMalformedMessagesPerSecond;

const TRANSCRIPTION_TEXT_ERROR = { type: 'error', message: 'Text frames must be {"type":"finalize"} or {"type":"close_stream"}; audio goes in binary frames' };
/** The service's synthesis sockets name the connection's session_id (checked apart: it differs per connection), and no request of a frame that is not one. */
const SYNTHESIS_JSON_ERROR = { status: 'error', message: 'Request body is not valid JSON', error: { code: 'InvalidRequest', message: 'Request body is not valid JSON' } };

interface SocketKind {
  path: string;
  /** The answer to one malformed frame, as the route has always sent it (`event_id` aside). */
  answer: object;
  /** The answer's shape, for the error that closes the socket. */
  sameShape(message: any): boolean;
}

const openAiShape = (m: any) => m.type === 'error' && m.error?.type === 'invalid_request_error' && typeof m.error.code === 'string' && typeof m.error.message === 'string';
const synthesisShape = (m: any) => m.status === 'error' && m.error?.code === 'InvalidRequest' && m.message === m.error.message;
const transcriptionShape = (m: any) => m.type === 'error' && typeof m.message === 'string' && Object.keys(m).length === 2;

const KINDS: SocketKind[] = [
  {
    path: '/v1/realtime?intent=transcription',
    answer: { type: 'error', error: { type: 'invalid_request_error', code: 'invalid_json', message: 'The event is not a JSON object', param: null, event_id: null } },
    sameShape: openAiShape,
  },
  { path: '/waves/v1/tts/live', answer: SYNTHESIS_JSON_ERROR, sameShape: synthesisShape },
  { path: '/api/v1/lightning-v3.1/get_speech/stream', answer: SYNTHESIS_JSON_ERROR, sameShape: synthesisShape },
  { path: '/waves/v1/stt/live', answer: TRANSCRIPTION_TEXT_ERROR, sameShape: transcriptionShape },
  { path: '/api/v1/stt/get_text', answer: TRANSCRIPTION_TEXT_ERROR, sameShape: transcriptionShape },
];

interface Flooded {
  /** The slowest /healthz answer while the flood was handled, ms. */
  stallMs: number;
  /** Messages the server sent besides OpenAI's session.created. */
  answered: number;
  first: any;
  last: any;
  closed?: { code: number; reason: string };
}

/**
 * Sends FRAMES one-byte text frames at once, then asks /healthz back to back until the server has
 * dealt with them (answered each, or closed the socket) and a little after (frames that arrive
 * after a close are still read).
 */
async function flood(server: ServerProcess, path: string): Promise<Flooded> {
  const ws = new WebSocket(wsUrl(server.url, path), { headers: { authorization: `Bearer ${server.key}` } });
  const result: Flooded = { stallMs: 0, answered: 0, first: undefined, last: undefined };
  let ready!: () => void;
  const opened = new Promise<void>((resolve, reject) => {
    ready = resolve;
    ws.once('error', reject);
  });
  ws.on('message', (data) => {
    const message = JSON.parse(data.toString());
    if (message.type === 'session.created') return;
    result.answered++;
    result.first ??= message;
    result.last = message;
  });
  ws.on('close', (code, reason) => (result.closed = { code, reason: reason.toString() }));
  // OpenAI's socket speaks first; the others are ready once open.
  if (path.startsWith('/v1/realtime')) ws.once('message', () => ready());
  else ws.once('open', () => ready());
  await opened;
  for (let i = 0; i < FRAMES; i++) ws.send('x');
  const deadline = Date.now() + 300_000;
  let settledAt: number | undefined;
  while (settledAt === undefined || Date.now() - settledAt < 500) {
    const started = performance.now();
    const res = await fetch(`${server.url}/healthz`);
    assert.equal(res.status, 200);
    await res.arrayBuffer();
    result.stallMs = Math.max(result.stallMs, performance.now() - started);
    if (settledAt === undefined && (result.closed || result.answered >= FRAMES)) settledAt = Date.now();
    assert.ok(Date.now() < deadline, `the flood was not dealt with in time (${result.answered} answered)`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  ws.terminate();
  return result;
}

/** The answer without the ids that differ per connection: OpenAI's event_id, the synthesis sockets' session_id (a string). */
const stripEventId = (message: any) => {
  if (message?.event_id === undefined && message?.session_id === undefined) return message;
  const { event_id: _, session_id: sessionId, ...rest } = message;
  if (message.session_id !== undefined) assert.equal(typeof sessionId, 'string', 'session_id is a string');
  return rest;
};

describe(`${FRAMES} one-byte malformed frames, default limits`, { skip: NEEDS }, () => {
  let server: ServerProcess;
  before(async () => {
    server = await startServerProcess([REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH], { PARLEY_SYNTHESIS__WARM_UP_ROUNDS: '0' });
  });
  after(() => server?.stop());

  for (const kind of KINDS) {
    it(`${kind.path}: /healthz answers within ${MAX_STALL_MS} ms; the socket is closed with 1008 after an error in the route's shape`, async (t) => {
      const got = await flood(server, kind.path);
      t.diagnostic(`/healthz stall with ${FRAMES} frames on ${kind.path}: ${Math.round(got.stallMs)} ms (${got.answered} answered, closed ${got.closed?.code ?? 'no'})`);
      assert.ok(got.stallMs < MAX_STALL_MS, `/healthz took ${Math.round(got.stallMs)} ms`);
      assert.deepEqual(stripEventId(got.first), kind.answer, 'a malformed frame is answered as before');
      assert.equal(got.closed?.code, 1008);
      assert.match(got.closed?.reason ?? '', /malformed/);
      assert.ok(kind.sameShape(got.last), `the last message is the route's error: ${JSON.stringify(got.last)}`);
      assert.match(JSON.stringify(got.last), new RegExp(`more than ${MALFORMED_LIMIT} malformed messages`));
      assert.ok(got.answered <= 2 * MALFORMED_LIMIT + 1, `${got.answered} frames answered`);
    });
  }
});

describe(`${FRAMES} one-byte malformed frames, every one answered (no malformed-message limit)`, { skip: NEEDS }, () => {
  let server: ServerProcess;
  before(async () => {
    server = await startServerProcess([REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH], {
      PARLEY_SYNTHESIS__WARM_UP_ROUNDS: '0',
      PARLEY_REALTIME__MAX_MALFORMED_MESSAGES_PER_SECOND: String(10 * FRAMES),
    });
  });
  after(() => server?.stop());

  for (const kind of KINDS) {
    it(`${kind.path}: /healthz answers within ${MAX_STALL_MS} ms while each frame is answered`, async (t) => {
      const got = await flood(server, kind.path);
      t.diagnostic(`/healthz stall with ${FRAMES} frames on ${kind.path}, all answered: ${Math.round(got.stallMs)} ms`);
      assert.ok(got.stallMs < MAX_STALL_MS, `/healthz took ${Math.round(got.stallMs)} ms`);
      assert.equal(got.answered, FRAMES);
      assert.deepEqual(stripEventId(got.last), kind.answer);
      assert.equal(got.closed, undefined);
    });
  }
});
