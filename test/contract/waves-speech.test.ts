/**
 * The hosted service's published speech contract, walked against a running server: every
 * operation, parameter, enum value, response field, header, frame field and error body of
 * test/contract/waves-speech.json, derived by scripts/contract/derive.mjs from
 * smallest-inc/smallest-ai-documentation@bfc4ef1588a82979f7f6a7ff2cc4b6e3dac900e3
 * (fern/apis/waves/openapi/{tts,get-voices,voice-catalog,voice-cloning,waves-api}-openapi.yaml with
 * their overrides, fern/apis/waves/asyncapi/tts-ws.yaml with its overrides; the operations of
 * electron-, pca-, waves-analytics-openapi.yaml and asyncapi/hydra-ws.yaml as not offered).
 *
 * Each item's Parley status drives what is checked, so a feature landing flips one word in the list:
 * - served: the request with it answers as documented (status, content type, fields with their
 *   types and value spaces), and what the document rules out (out of bounds, out of the enum, the
 *   wrong type, a missing required field) is refused with a 4xx naming it;
 * - partial: the request with it answers as documented (the item's `missing` says what is not done);
 * - not-served: the request with it is refused in the route family's error shape with a message
 *   naming it; a response field or header so marked is absent.
 * Speech uses the built-in eSpeak NG voice (no model packs); creating a clone needs the VAD pack.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { parseWav } from '../../src/audio/wav.js';
import { WavesErrorBody } from '../../src/http/schemas/common.js';
import { loadContract, statusCounts, allJudgedItems, judgedItems, STATUSES, type Answer, type Field, type Operation, type Parameter, type Status } from '../../scripts/contract/contract.js';
import { corpusFile, modelsDirWith, needs, REAL_TEST_MODELS } from '../helpers/models.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { allSseEvents } from '../helpers/sse.js';
import { openSocket, TestSocket, wsUrl } from '../helpers/websocket.js';
import { womanSample } from '../http/routes/voice-cloning-helpers.js';

const contract = loadContract();
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

/** A request as the test builds it: the operation, its path, headers and body fields. */
interface Call {
  path: string;
  pathParams: Record<string, string>;
  headers: Record<string, string>;
  fields: Record<string, unknown>;
  query: Record<string, string>;
}

/** What came back, whatever the protocol. */
interface Outcome {
  status: number;
  contentType: string;
  headers: Headers | undefined;
  /** JSON body, SSE events' JSON data, or a WebSocket's messages. */
  json: any;
  bytes: Uint8Array;
  events: { event: string; data: any }[];
  frames: any[];
}

const dictItems = [{ word: 'parley', pronunciation: 'par lee' }];

async function freshDictId(): Promise<string> {
  const res = await s.api('/waves/v1/pronunciation-dicts', { method: 'POST', json: { items: dictItems } });
  assert.equal(res.status, 200);
  return ((await res.json()) as { id: string }).id;
}

/** A value the document allows for a parameter, one a working request can carry. */
async function sampleValue(p: Parameter): Promise<unknown> {
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
  // A flag is sent on: off is what leaving it out already asks.
  if (p.type === 'boolean') return true;
  if (p.default !== undefined) return p.default;
  if (p.values?.length) return p.values[0]!.value;
  if (p.type === 'integer' || p.type === 'number') return p.minimum ?? 1;
  if (p.type === 'array') return [];
  return 'contract';
}

/** The working request of an operation: its required parameters, with values it allows. */
async function baseCall(op: Operation): Promise<Call> {
  const call: Call = { path: op.path, pathParams: {}, headers: {}, fields: {}, query: {} };
  for (const p of op.parameters ?? []) if (p.required || p.in === 'path') await put(call, p, await sampleValue(p));
  return call;
}

async function put(call: Call, p: Parameter, value: unknown): Promise<Call> {
  if (p.in === 'header') call.headers[p.name] = String(value);
  else if (p.in === 'query') call.query[p.name] = String(value);
  else if (p.in === 'path') call.pathParams[p.name] = String(value);
  else call.fields[p.name] = value;
  return call;
}

function without(call: Call, p: Parameter): Call {
  const copy: Call = { path: call.path, pathParams: { ...call.pathParams }, headers: { ...call.headers }, fields: { ...call.fields }, query: { ...call.query } };
  delete copy.headers[p.name];
  delete copy.fields[p.name];
  delete copy.query[p.name];
  return copy;
}

const empty = (status: number, contentType = ''): Outcome => ({ status, contentType, headers: undefined, json: undefined, bytes: new Uint8Array(), events: [], frames: [] });

async function send(op: Operation, call: Call, auth = true): Promise<Outcome> {
  const query = new URLSearchParams(call.query).toString();
  const path = call.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(call.pathParams[name] ?? name));
  const url = path + (query ? `?${query}` : '');
  if (op.protocol === 'websocket') return sendSocket(url, call, auth);
  const headers = new Headers(call.headers);
  let body: BodyInit | undefined;
  if (op.requestContentType === 'multipart/form-data') {
    const form = new FormData();
    for (const [name, value] of Object.entries(call.fields)) {
      if (name === 'file') form.set('file', new Blob([readFileSync(String(value))], { type: 'audio/wav' }), 'sample.wav');
      else form.set(name, String(value));
    }
    body = form;
  } else if (op.requestContentType) {
    headers.set('content-type', 'application/json');
    body = JSON.stringify(call.fields);
  }
  const res = await (auth ? s.api(url, { method: op.method, headers, body }) : fetch(s.url + url, { method: op.method, headers: dropAuth(headers), body }));
  const contentType = res.headers.get('content-type') ?? '';
  const out = empty(res.status, contentType);
  out.headers = res.headers;
  if (contentType.startsWith('text/event-stream')) {
    out.events = (await allSseEvents(res)).map((e) => ({ event: e.event, data: parseMaybe(e.data) }));
  } else if (contentType.includes('json')) {
    out.json = await res.json();
  } else {
    out.bytes = new Uint8Array(await res.arrayBuffer());
  }
  return out;
}

function dropAuth(headers: Headers): Headers {
  headers.delete('authorization');
  return headers;
}

function parseMaybe(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    return data;
  }
}

/** One message on a fresh socket, and every frame up to `complete`, an error, or the close. */
async function sendSocket(url: string, call: Call, auth: boolean): Promise<Outcome> {
  const headers = { ...call.headers };
  if (!auth) delete headers.Authorization;
  else headers.Authorization ??= `Bearer ${s.key}`;
  const opened = await openSocket(wsUrl(s.url, url), headers);
  if (!(opened instanceof TestSocket)) return { ...empty(opened.status, 'application/json'), json: opened.body };
  try {
    opened.send(call.fields);
    // A message saying more text follows is finished by a flush, as clients do.
    if (call.fields.continue === true) opened.send({ ...call.fields, text: '', continue: false, flush: true });
    await opened.until((all) => all.some((m) => m.status === 'complete' || m.status === 'error'), 30_000).catch(() => undefined);
    return { ...empty(101, 'application/json'), frames: [...opened.messages] };
  } finally {
    opened.close();
  }
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

/** Refused in the route family's error shape, the message naming what was refused. */
function assertRefused(op: Operation, out: Outcome, names: string[], what: string): void {
  const mentions = (message: unknown) => names.some((n) => String(message).toLowerCase().includes(n.toLowerCase()));
  if (op.protocol === 'websocket' && out.status === 101) {
    const error = out.frames.find((m) => m.status === 'error');
    assert.ok(error, `${what}: an error frame, got ${JSON.stringify(out.frames.slice(0, 3)).slice(0, 300)}`);
    assert.equal(typeof error.message, 'string');
    assert.ok(mentions(error.message), `${what}: the message names ${names.join(' or ')}: ${error.message}`);
    return;
  }
  assert.ok((out.status >= 400 && out.status < 500) || out.status === 501, `${what}: refused, got ${out.status}`);
  assert.equal(out.json?.status, 'error', `${what}: ${JSON.stringify(out.json)}`);
  assert.equal(typeof out.json.error, 'string');
  assert.equal(typeof out.json.message, 'string');
  assert.ok(mentions(out.json.message), `${what}: the message names ${names.join(' or ')}: ${out.json.message}`);
}

function assertBy(status: Status, op: Operation, out: Outcome, names: string[], what: string): void {
  if (status === 'not-served') assertRefused(op, out, names, what);
  else assertAnswered(op, out, what);
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

/** Values outside what a parameter allows, each to be refused when it is served. */
function ruledOut(p: Parameter): { value: unknown; why: string }[] {
  const out: { value: unknown; why: string }[] = [];
  if (p.in === 'header' || p.in === 'path') return p.values ? [{ value: 'not-a-documented-value', why: 'outside the enum' }] : [];
  if (p.values) out.push({ value: p.type === 'string' ? 'not-a-documented-value' : 12345, why: 'outside the enum' });
  if (p.minimum !== undefined) out.push({ value: p.type === 'integer' ? p.minimum - 1 : p.minimum - 0.01, why: 'below the minimum' });
  if (p.maximum !== undefined) out.push({ value: p.type === 'integer' ? p.maximum + 1 : p.maximum + 0.01, why: 'above the maximum' });
  if (p.maxLength !== undefined) out.push({ value: 'a'.repeat(p.maxLength + 1), why: 'longer than maxLength' });
  if (p.minLength) out.push({ value: '', why: 'shorter than minLength' });
  if (p.pattern) out.push({ value: 'not allowed!', why: 'not matching the pattern' });
  if (p.in === 'form') return out;
  const wrongType: Record<string, unknown> = { string: 12345, integer: 'fast', number: 'fast', boolean: 'yes', array: 'not-an-array', object: 'not-an-object' };
  if (p.type in wrongType && p.format !== 'binary') out.push({ value: wrongType[p.type], why: `not a${p.type === 'integer' || p.type === 'array' || p.type === 'object' ? 'n' : ''} ${p.type}` });
  return out;
}

/** Values inside a parameter's bounds, each to be answered when it is served. */
function withinBounds(p: Parameter): unknown[] {
  const out: unknown[] = [];
  if (p.minimum !== undefined) out.push(p.minimum);
  if (p.maximum !== undefined) out.push(p.maximum);
  if (p.maxLength !== undefined && p.pattern) out.push('a'.repeat(p.maxLength));
  return out;
}

/** Creating a clone needs the VAD pack: without it the operation's answers cannot be checked here. */
const answersNeed = (op: Operation) => (op.id === 'POST /waves/v1/voice-cloning' ? CLONING : false);

function describeParameter(op: Operation, p: Parameter): void {
  const label = `${p.in} ${p.name}`;
  describe(`${label} (${p.status})`, () => {
    if (p.status === 'not-served') {
      it('is refused, naming it', async () => {
        const call = await put(await baseCall(op), p, await sampleValue(p));
        assertRefused(op, await send(op, call), [p.name], label);
      });
      return;
    }
    for (const v of p.values ?? []) {
      it(`${JSON.stringify(v.value)} (${v.status})`, { skip: v.status !== 'not-served' && answersNeed(op) }, async () => {
        const out = await send(op, await withModelFor(op, p, v.value, await put(await baseCall(op), p, v.value)));
        assertBy(v.status as Status, op, out, [p.name, String(v.value)], `${label}=${String(v.value)}`);
        if (v.status !== 'not-served' && p.name === 'sample_rate' && out.contentType === 'audio/wav') {
          assert.equal(parseWav(out.bytes).sampleRate, v.value, 'the WAV is at the asked rate');
        }
      });
    }
    if (!p.values) {
      it('a documented value is answered', { skip: answersNeed(op) }, async () => {
        assertAnswered(op, await send(op, await put(await baseCall(op), p, await sampleValue(p))), label);
      });
    }
    if (p.status !== 'served') return;
    for (const value of withinBounds(p)) {
      it(`${JSON.stringify(value).slice(0, 40)} (within bounds) is answered`, { skip: answersNeed(op) }, async () => {
        assertAnswered(op, await send(op, await put(await baseCall(op), p, value)), `${label}=${String(value).slice(0, 40)}`);
      });
    }
    for (const { value, why } of ruledOut(p)) {
      it(`${JSON.stringify(value).slice(0, 40)} (${why}) is refused`, async () => {
        // A path names no field: its message names the path instead.
        const names = p.in === 'path' ? [p.name, String(value)] : [p.name];
        assertRefused(op, await send(op, await put(await baseCall(op), p, value)), names, `${label} ${why}`);
      });
    }
    if (p.required && p.in !== 'path') {
      it('missing is refused', async () => {
        const out = await send(op, without(await baseCall(op), p), p.name !== 'Authorization');
        if (p.name === 'Authorization') assert.equal(out.status, 401, `${label} missing`);
        else assertRefused(op, out, [p.name], `${label} missing`);
      });
    }
  });
}

/** `a[].b.c` read from a body: every value at that path (arrays walked), or none when absent. */
function valuesAt(body: unknown, name: string): { present: boolean; value: unknown }[] {
  let nodes: { present: boolean; value: unknown }[] = [{ present: true, value: body }];
  for (const part of name.split('.')) {
    const key = part.replace(/\[\]$/, '');
    nodes = nodes.flatMap((n) => {
      if (!n.present || n.value === null || typeof n.value !== 'object') return [{ present: false, value: undefined }];
      const present = Object.hasOwn(n.value as object, key);
      const value = (n.value as Record<string, unknown>)[key];
      if (part.endsWith('[]')) return Array.isArray(value) ? value.map((v) => ({ present: true, value: v })) : [{ present: false, value: undefined }];
      return [{ present, value }];
    });
  }
  return nodes;
}

function typeOf(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

const hasType = (value: unknown, type: string) => typeOf(value) === type || (type === 'number' && typeOf(value) === 'integer');

/** A field of the bodies (or frames) checked by its status: served with its type and value space, partial present, not-served absent. */
function assertField(f: Field, bodies: unknown[], what: string): void {
  const found = bodies.flatMap((b) => valuesAt(b, f.name));
  const present = found.filter((n) => n.present);
  if (f.status === 'not-served') {
    assert.equal(present.length, 0, `${what}: ${f.name} is marked not served, yet answered ${JSON.stringify(present[0]?.value)}`);
    return;
  }
  assert.ok(present.length > 0, `${what}: ${f.name} is answered`);
  if (f.status === 'partial') return;
  if (f.required) assert.equal(present.length, found.length, `${what}: ${f.name} is on every one`);
  for (const { value } of present) {
    assert.ok(hasType(value, f.type), `${what}: ${f.name} is a ${f.type}, got ${JSON.stringify(value)}`);
    if (f.type === 'array' && f.items && f.items !== 'object') for (const item of value as unknown[]) assert.ok(hasType(item, f.items), `${what}: ${f.name} holds ${f.items}s`);
    if (f.const !== undefined) assert.equal(value, f.const, `${what}: ${f.name}`);
    if (f.values) assert.ok(f.values.some((v) => v.value === value), `${what}: ${f.name} is one of the documented values, got ${JSON.stringify(value)}`);
    if (f.format === 'date-time') assert.ok(!Number.isNaN(Date.parse(String(value))), `${what}: ${f.name} is a date-time`);
  }
}

/** The request whose answer shows every field: the echoed ids and word timestamps asked for, when they are accepted. */
async function showingCall(op: Operation): Promise<Call> {
  const call = await baseCall(op);
  for (const p of op.parameters ?? []) {
    if (p.status !== 'not-served' && ['session_id', 'request_id', 'word_timestamps'].includes(p.name)) await put(call, p, await sampleValue(p));
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

function describeAnswer(op: Operation, answer: Answer): void {
  const label = `answer ${answer.code}${answer.name ? ` ${answer.name}` : ''} (${answer.status})`;
  it(label, { skip: answersNeed(op) }, async () => {
    if (op.id === 'GET /waves/v1/voice-cloning' && !CLONING) await createClone();
    if (op.path === '/waves/v1/pronunciation-dicts' && op.method === 'GET') await freshDictId();
    const out = await send(op, await showingCall(op));
    assertAnswered(op, out, label);
    for (const h of answer.headers ?? []) {
      const value = out.headers?.get(h.name);
      if (h.status === 'not-served') assert.equal(value, null, `${label}: header ${h.name} is marked not served, yet sent`);
      else assert.equal(typeof value, 'string', `${label}: header ${h.name}`);
      if (h.status === 'served' && h.const !== undefined) assert.equal(value, h.const, `${label}: header ${h.name}`);
    }
    for (const f of answer.fields) {
      // A frame's status value is served when some frame carries it.
      if (f.name === 'status' && answer.code === 'frame') {
        for (const v of f.values ?? []) {
          const seen = out.frames.some((m) => m.status === v.value);
          assert.equal(seen, v.status !== 'not-served', `${label}: a ${String(v.value)} frame (${v.status})`);
        }
      }
      assertField(f, bodiesOf(answer, out, f.frames), label);
    }
  });
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
async function causing(op: Operation, code: string): Promise<Outcome | undefined> {
  if (code === '401') return send(op, await baseCall(op), false);
  if (code !== '400' && code !== 'frame') return undefined;
  let call = await baseCall(op);
  const required = (op.parameters ?? []).filter((p) => p.required && p.in !== 'header' && p.in !== 'path');
  for (const p of required) call = without(call, p);
  const pathParam = op.parameters?.find((p) => p.in === 'path');
  if (required.length === 0 && pathParam) call = await put(call, pathParam, 'not-a-documented-value');
  return send(op, call);
}

function describeError(op: Operation, answer: Answer): void {
  const label = `error ${answer.code}${answer.name ? ` ${answer.name}` : ''} (${answer.status})`;
  const code = Number(answer.code);
  if (code >= 500) {
    // A 5xx cannot be caused from outside: its body is the family's declared error schema.
    it(`${label}: the declared error body`, () => {
      const declared = WavesErrorBody.properties as unknown as Record<string, { type: string }>;
      for (const f of answer.fields) {
        if (f.status === 'not-served') assert.equal(declared[f.name], undefined, `${f.name} is marked not served`);
        else if (f.status === 'served') assert.equal(declared[f.name]?.type, f.type, f.name);
      }
    });
    return;
  }
  it(label, async () => {
    const out = await causing(op, answer.code);
    assert.ok(out, `${label}: the test knows how to cause it`);
    if (answer.code === 'frame') {
      const error = out.frames.find((m) => m.status === 'error');
      assert.ok(error, `${label}: an error frame`);
      for (const f of answer.fields) assertField(f, [error], label);
      return;
    }
    if (answer.status === 'served') assert.equal(String(out.status), answer.code, `${label}: ${JSON.stringify(out.json)}`);
    else assert.ok(out.status >= 400 && out.status < 500, `${label}: refused, got ${out.status}`);
    if (answer.contentType) assert.ok(out.contentType.startsWith(answer.contentType), `${label}: ${answer.contentType}`);
    for (const f of answer.fields) assertField(f, [out.json], label);
  });
}

describe(`the speech contract of ${contract.source.repository}@${contract.source.commit.slice(0, 7)}`, () => {
  it('every item has a status, and every partly served one says what it lacks', () => {
    const items = allJudgedItems(contract);
    const unjudged = items.filter(({ item }) => !STATUSES.includes(item.status as Status)).map(({ key }) => key);
    assert.deepEqual(unjudged, [], 'items without a status (served, partial or not-served)');
    const unexplained = items.filter(({ item, parent }) => item.status === 'partial' && !item.missing && !parent?.missing).map(({ key }) => key);
    assert.deepEqual(unexplained, [], 'partial items without `missing`');
  });

  it('an operation marked served serves everything in it', () => {
    const served = contract.operations.filter((op) => op.status === 'served');
    const short = served.flatMap((op) => judgedItems(op).filter(({ item }) => item.status !== 'served').map(({ key }) => key));
    assert.deepEqual(short, [], 'items not served in an operation marked served: mark the operation partial');
  });

  for (const op of contract.operations) {
    describe(`${op.id} (${op.status})`, () => {
      if (op.status === 'not-served') {
        it('is refused, naming the route', async () => {
          const out = await send({ ...op, protocol: 'http', requestContentType: undefined }, await baseCall({ ...op, parameters: (op.parameters ?? []).filter((p) => p.in === 'path') }));
          assertRefused({ ...op, protocol: 'http' }, out, [op.path.replace(/\{[^}]+\}.*/, ''), 'not offered'], op.id);
        });
        it('so is everything in it', () => {
          const served = allJudgedItems({ ...contract, operations: [op], notOffered: [] }).filter(({ item }) => item.status !== 'not-served');
          assert.deepEqual(served.map(({ key }) => key), []);
        });
        return;
      }
      it('answers a request with what the document requires', { skip: answersNeed(op) }, async () => {
        assertAnswered(op, await send(op, await baseCall(op)), op.id);
      });
      for (const p of op.parameters ?? []) describeParameter(op, p);
      for (const answer of op.responses ?? []) describeAnswer(op, answer);
      for (const answer of op.errors ?? []) describeError(op, answer);
    });
  }

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

  it('counts', (t) => {
    const counts = statusCounts(contract);
    t.diagnostic(`served ${counts.served}, partial ${counts.partial}, not-served ${counts['not-served']}`);
    assert.equal(counts.unreviewed, 0);
  });
});
