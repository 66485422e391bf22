/**
 * The hosted service's published speech contract, walked against a running server: every
 * operation, parameter, enum value, response field, header, frame field and error body of
 * test/contract/waves-speech.json, derived by scripts/contract/derive.mjs from
 * smallest-inc/smallest-ai-documentation@bfc4ef1588a82979f7f6a7ff2cc4b6e3dac900e3
 * (fern/apis/waves/openapi/{tts,get-voices,voice-catalog,voice-cloning,waves-api}-openapi.yaml with
 * their overrides, fern/apis/waves/asyncapi/tts-ws.yaml with its overrides; the operations of
 * electron-, pca-, waves-analytics-openapi.yaml and asyncapi/hydra-ws.yaml as not offered).
 *
 * Each item's status drives what is checked (test/contract/walk.ts). Speech uses the built-in eSpeak NG voice (no model packs); creating a clone needs the VAD pack.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { parseWav } from '../../src/audio/wav.js';
import { loadContract, type Answer, type Operation, type Parameter } from '../../scripts/contract/contract.js';
import { corpusFile, modelsDirWith, needs, REAL_TEST_MODELS } from '../helpers/models.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { openSocket, TestSocket, wsUrl } from '../helpers/websocket.js';
import { womanSample } from '../http/routes/voice-cloning-helpers.js';
import { baseCall, describeJudgements, documentedValue, describeOperations, put, send, without, type Call, type ContractFamily, type Outcome } from './walk.js';

const contract = loadContract('speech');
const VOICE = 'espeak-en-us-female';
const TEXT = 'Hi there.';
const CLONING = needs({ models: [REAL_TEST_MODELS.VAD], corpus: true });

let s: TestServer;

before(async () => {
  const modelsDir = CLONING ? undefined : modelsDirWith([REAL_TEST_MODELS.VAD]);
  const off = { perMinute: 0 };
  s = await startTestServer({
    engines: true,
    config: { ...(modelsDir ? { modelsDir } : {}), rateLimits: { synthesis: off, transcription: off, management: off } },
  });
});
after(() => s?.close());

const dictItems = [{ word: 'parley', pronunciation: 'par lee' }];

async function freshDictId(): Promise<string> {
  const res = await s.api('/waves/v1/pronunciation-dicts', { method: 'POST', json: { items: dictItems } });
  assert.equal(res.status, 200);
  return ((await res.json()) as { id: string }).id;
}

/** A value the document allows for a parameter, one a working request can carry. */
async function sampleValue(_op: Operation, p: Parameter): Promise<unknown> {
  switch (p.name) {
    case 'text':
      return TEXT;
    case 'voice_id':
      return VOICE;
    case 'items':
      return dictItems;
    case 'id':
      return freshDictId();
    case 'pronunciation_dicts':
      return [await freshDictId()];
    case 'session_id':
    case 'request_id':
      return 'contract-1.a_b';
    case 'Authorization':
      return `Bearer ${s.key}`;
    case 'displayName':
      return 'contract voice';
    case 'file':
      return corpusFile(womanSample());
    case 'tags':
      return 'en, friendly';
    case 'language':
      if (p.in === 'form') return 'en';
  }
  return documentedValue(p);
}

/** One message, and every frame up to `complete`, an error, or the close. */
async function converse(socket: TestSocket, call: Call): Promise<void> {
  socket.send(call.fields);
  // A message saying more text follows is finished by a flush, as clients do.
  if (call.fields.continue === true) socket.send({ ...call.fields, text: '', continue: false, flush: true });
  await socket.until((all) => all.some((m) => m.status === 'complete' || m.status === 'error'), 30_000).catch(() => undefined);
}

/** The request answered as the document says: its success status and content, for the protocol. */
function assertAnswered(op: Operation, out: Outcome, what: string): void {
  if (op.protocol === 'websocket') {
    const error = out.frames.find((m) => m.status === 'error');
    assert.equal(out.status, 101, `${what}: the upgrade is accepted (${JSON.stringify(out.json)})`);
    assert.equal(error, undefined, `${what}: no error frame (${JSON.stringify(error)})`);
    assert.ok(out.frames.some((m) => m.status === 'chunk' && typeof m.data?.audio === 'string' && m.data.audio.length > 0), `${what}: audio chunks`);
    assert.equal(out.frames.at(-1)?.status, 'complete', `${what}: ends with complete`);
    return;
  }
  assert.equal(out.status, 200, `${what}: ${JSON.stringify(out.json ?? '')}`);
  const documented = op.responses?.find((r) => r.code === '200' && !r.name)?.contentType;
  if (documented?.startsWith('audio/') || (!documented && /get_speech$/.test(op.path))) {
    assert.match(out.contentType, /^audio\//, `${what}: audio`);
    assert.ok(out.bytes.length > 100, `${what}: audio bytes`);
  } else if (documented === 'text/event-stream' || (!documented && /stream$/.test(op.path))) {
    assert.match(out.contentType, /^text\/event-stream/, `${what}: an event stream`);
    assert.ok(out.events.length > 1, `${what}: events`);
  } else if (documented) {
    assert.ok(out.contentType.startsWith(documented), `${what}: ${documented}, got ${out.contentType}`);
  }
}

/**
 * The documents list one language enum for both pools, and say in prose that lightning_v3.1 takes
 * 20 of its codes (10 European, 10 Indic) while Lightning v3.1 Pro takes all 31: a code only Pro
 * takes is asked of Pro.
 */
const V31_LANGUAGES: ReadonlySet<unknown> = new Set(['auto', 'en', 'es', 'fr', 'de', 'it', 'nl', 'sv', 'pt', 'pl', 'ru', 'hi', 'mr', 'gu', 'pa', 'bn', 'or', 'ta', 'te', 'kn', 'ml']);
const PRO_MODEL = 'lightning_v3.1_pro';

async function withModelFor(op: Operation, p: Parameter, value: unknown, call: Call): Promise<Call> {
  const model = op.parameters?.find((q) => q.name === 'model' && q.values?.some((v) => v.value === PRO_MODEL));
  return p.name === 'language' && model && !V31_LANGUAGES.has(value) ? put(call, model, PRO_MODEL) : call;
}

/** The request whose answer shows every field: the echoed ids and word timestamps asked for, when they are accepted. */
async function showingCall(op: Operation): Promise<Call> {
  const call = await baseCall(speech, op);
  for (const p of op.parameters ?? []) {
    if (p.status !== 'not-served' && ['session_id', 'request_id', 'word_timestamps'].includes(p.name)) await put(call, p, await sampleValue(op, p));
  }
  return call;
}

/** The bodies an answer's fields are read from: the JSON body, one kind of SSE event, or WebSocket frames. */
function bodiesOf(answer: Answer, out: Outcome, frames?: string): unknown[] {
  if (answer.contentType === 'text/event-stream') {
    if (answer.name?.endsWith('(last)')) return out.events.slice(-1).map((e) => e.data);
    const event = answer.name?.replace(/^event /, '');
    return out.events.filter((e) => e.event === event).map((e) => e.data);
  }
  if (answer.code === 'frame') return out.frames.filter((m) => m.status !== 'error' && (!frames || m.status === frames));
  return [out.json];
}

/** A clone with every optional field given, so the listing shows them. */
async function createClone(): Promise<void> {
  const form = new FormData();
  for (const [name, value] of Object.entries({ displayName: 'contract voice', description: 'a voice of the contract test', accent: 'general', tags: 'en, friendly', language: 'en' })) form.set(name, value);
  form.set('file', new Blob([readFileSync(corpusFile(womanSample()))], { type: 'audio/wav' }), 'sample.wav');
  const res = await s.api('/waves/v1/voice-cloning', { method: 'POST', body: form });
  assert.equal(res.status, 200);
}

/** How a documented error is caused: 401 without a key; 400 (or an error frame) with what the document requires left out or ruled out. */
async function cause(op: Operation, answer: Answer): Promise<Outcome | undefined> {
  if (answer.code === '401') return send(speech, op, await baseCall(speech, op), false);
  if (answer.code !== '400' && answer.code !== 'frame') return undefined;
  let call = await baseCall(speech, op);
  const required = (op.parameters ?? []).filter((p) => p.required && p.in !== 'header' && p.in !== 'path');
  for (const p of required) call = without(call, p);
  const pathParam = op.parameters?.find((p) => p.in === 'path');
  if (required.length === 0 && pathParam) call = await put(call, pathParam, 'not-a-documented-value');
  return send(speech, op, call);
}

const speech: ContractFamily = {
  server: () => s,
  sampleValue,
  withValue: withModelFor,
  converse,
  assertAnswered,
  showingCall,
  async prepareAnswer(op) {
    if (op.id === 'GET /waves/v1/voice-cloning' && !CLONING) await createClone();
    if (op.path === '/waves/v1/pronunciation-dicts' && op.method === 'GET') await freshDictId();
  },
  bodiesOf,
  cause,
  // A 5xx cannot be caused from outside.
  uncausable: (code) => code >= 500,
  // Creating a clone needs the VAD pack: without it the operation's answers cannot be checked here.
  answersNeed: (op) => (op.id === 'POST /waves/v1/voice-cloning' ? CLONING : false),
  checkValue(_op, p, value, out) {
    if (p.name === 'sample_rate' && out.contentType === 'audio/wav') assert.equal(parseWav(out.bytes).sampleRate, value, 'the WAV is at the asked rate');
  },
};

describe(`the speech contract of ${contract.source.repository}@${contract.source.commit.slice(0, 7)}`, () => {
  describeJudgements(contract);
  describeOperations(speech, contract);

  describe('the operations of products this server does not offer', () => {
    for (const op of contract.notOffered) {
      it(`${op.id} — ${op.product} (${op.status})`, async () => {
        assert.equal(op.status, 'not-served', 'an offered operation moves to operations, with its parameters');
        const path = op.path.replace(/\{[^}]+\}/g, 'x');
        const res = await s.api(path, { method: op.method, ...(op.method === 'POST' ? { json: {} } : {}) });
        const body = (await res.json()) as Record<string, unknown>;
        assert.equal(res.status, 501, JSON.stringify(body));
        assert.deepEqual(Object.keys(body).sort(), ['error', 'message', 'request_id', 'status']);
        assert.equal(body.error, 'NotImplemented');
        assert.match(String(body.message), new RegExp(`${op.method} ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\) is not offered by this server`));
      });
    }
    it('a speech-to-speech socket is refused at the upgrade', async () => {
      const refused = await openSocket(wsUrl(s.url, '/waves/v1/s2s?model=hydra-v1.1'), { authorization: `Bearer ${s.key}` });
      assert.ok(!(refused instanceof TestSocket), 'the upgrade is refused');
      assert.equal(refused.status, 501);
      assert.match(refused.body.message, /Speech-to-speech \(Hydra\) \(GET \/waves\/v1\/s2s\) is not offered by this server/);
    });
  });
});
