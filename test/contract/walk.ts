/**
 * The walk of a published contract (test/contract/waves-*.json) against a running server, shared
 * by the speech and the transcription contract tests. Each item's Parley status drives what is
 * checked, so a feature landing flips one word in the list:
 * - served: the request with it answers as documented (status, content type, fields with their
 *   types and value spaces), and what the document rules out (out of bounds, out of the enum, the
 *   wrong type, a missing required field) is refused with a 4xx naming it;
 * - partial: the request with it answers as documented (the item's `missing` says what is not done);
 * - not-served: the request with it is refused in the route family's error shape with a message
 *   naming it; a response field or header so marked is absent.
 * What differs between the families (the values a working request carries, how a socket
 * conversation goes, what "answered" means, how an error is caused) is the family's {@link ContractFamily}.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { WavesErrorBody } from '../../src/http/schemas/common.js';
import { allJudgedItems, judgedItems, statusCounts, STATUSES, type Answer, type Contract, type Field, type Operation, type Parameter, type Status } from '../../scripts/contract/contract.js';
import type { TestServer } from '../helpers/server.js';
import { allSseEvents } from '../helpers/sse.js';
import { openSocket, TestSocket, wsUrl } from '../helpers/websocket.js';

/** A request as the test builds it: the operation, its path, headers, query and body. */
export interface Call {
  path: string;
  pathParams: Record<string, string>;
  headers: Record<string, string>;
  /** Body fields (JSON or form), or a socket's message. */
  fields: Record<string, unknown>;
  query: Record<string, string>;
  /** The body's content type, when not the operation's first documented one. */
  contentType?: string;
  /** A raw body (audio bytes). */
  bytes?: Uint8Array;
}

/** What came back, whatever the protocol. */
export interface Outcome {
  status: number;
  contentType: string;
  headers: Headers | undefined;
  /** JSON body, or a refused upgrade's body. */
  json: any;
  bytes: Uint8Array;
  events: { event: string; data: any }[];
  /** A WebSocket's messages. */
  frames: any[];
}

/** What one family of routes brings to the walk. */
export interface ContractFamily {
  /** The running server (started in `before`). */
  server(): TestServer;
  /** A value the document allows for a parameter, one a working request can carry. */
  sampleValue(op: Operation, p: Parameter): Promise<unknown>;
  /** The call every request of an operation starts from (a raw body...), before its required parameters. */
  startCall?(op: Operation): Call;
  /** A call carrying `value` for `p`, with whatever else the value needs to be taken. */
  withValue?(op: Operation, p: Parameter, value: unknown, call: Call): Promise<Call>;
  /** Sends what a call carries on an open socket, and waits until the server is done with it. */
  converse(socket: TestSocket, call: Call): Promise<void>;
  /** The request answered as the document says: its success status and content, for the protocol. */
  assertAnswered(op: Operation, out: Outcome, what: string): void;
  /** An enum value checked by its status (default: refused when not served, else answered). */
  assertValue?(status: Status, op: Operation, p: Parameter, value: unknown, out: Outcome, what: string): void;
  /** The request whose answer shows an answer's fields. */
  showingCall(op: Operation, answer: Answer): Promise<Call>;
  /** Run before an operation's answers are asked for (something for a list to show). */
  prepareAnswer?(op: Operation): Promise<void>;
  /** The bodies an answer's fields are read from. */
  bodiesOf(answer: Answer, out: Outcome, frames?: string): unknown[];
  /** Causes a documented error; undefined when the test cannot. */
  cause(op: Operation, answer: Answer): Promise<Outcome | undefined>;
  /** Errors that cannot be caused from outside: their bodies are checked against the declared error schema. */
  uncausable(code: number): boolean;
  /** Why an operation's answers cannot be checked on this machine (a `skip`), or false. */
  answersNeed?(op: Operation): string | false;
  /** More checks of a value's answer (the WAV is at the asked rate...). */
  checkValue?(op: Operation, p: Parameter, value: unknown, out: Outcome): void;
  /**
   * Whether two answers say the same (what may differ between two runs of one request left out).
   * With it, a served parameter's documented default is checked: leaving it out answers as giving it does.
   */
  assertSameAnswer?(left: Outcome, right: Outcome, what: string): void;
  /** Identical requests share one answer (they cost a real transcription each, and answer the same). */
  reuseAnswers?: boolean;
  /** How many checks of one parameter run at once. */
  concurrency?: number;
}

/** A value the document gives or allows for a parameter, when the family has none of its own. */
export function documentedValue(p: Parameter): unknown {
  // A flag is sent on: off is what leaving it out already asks.
  if (p.type === 'boolean') return true;
  if (p.default !== undefined) return p.default;
  if (p.values?.length) return p.values[0]!.value;
  if (p.type === 'integer' || p.type === 'number') return p.minimum ?? 1;
  if (p.type === 'array') return [];
  return 'contract';
}

export const empty = (status: number, contentType = ''): Outcome => ({ status, contentType, headers: undefined, json: undefined, bytes: new Uint8Array(), events: [], frames: [] });

export function copyCall(call: Call): Call {
  return { ...call, pathParams: { ...call.pathParams }, headers: { ...call.headers }, fields: { ...call.fields }, query: { ...call.query } };
}

export async function put(call: Call, p: Parameter, value: unknown): Promise<Call> {
  if (p.in === 'header') call.headers[p.name] = String(value);
  else if (p.in === 'query') call.query[p.name] = String(value);
  else if (p.in === 'path') call.pathParams[p.name] = String(value);
  else if (p.in === 'content') call.contentType = String(value);
  else call.fields[p.name] = value;
  return call;
}

export function without(call: Call, p: Parameter): Call {
  const copy = copyCall(call);
  delete copy.headers[p.name];
  delete copy.fields[p.name];
  delete copy.query[p.name];
  return copy;
}

/** The working request of an operation: its required parameters, with values it allows. */
export async function baseCall(family: ContractFamily, op: Operation): Promise<Call> {
  const call: Call = family.startCall?.(op) ?? { path: op.path, pathParams: {}, headers: {}, fields: {}, query: {} };
  for (const p of op.parameters ?? []) {
    // A field of one of several body types is asked for with that type only.
    if ((p.required || p.in === 'path') && !p.contentType) await put(call, p, await family.sampleValue(op, p));
  }
  return call;
}

/** A fresh working request carrying `value` for `p`. */
export async function callWith(family: ContractFamily, op: Operation, p: Parameter, value: unknown): Promise<Call> {
  const call = await put(await baseCall(family, op), p, value);
  return family.withValue ? family.withValue(op, p, value, call) : call;
}

const answers = new Map<string, Promise<Outcome>>();

export function send(family: ContractFamily, op: Operation, call: Call, auth = true): Promise<Outcome> {
  if (!family.reuseAnswers) return sendNow(family, op, call, auth);
  const key = JSON.stringify([op.id, auth, { ...call, bytes: call.bytes?.byteLength }]);
  if (!answers.has(key)) answers.set(key, sendNow(family, op, call, auth));
  return answers.get(key)!;
}

async function sendNow(family: ContractFamily, op: Operation, call: Call, auth: boolean): Promise<Outcome> {
  const s = family.server();
  const query = new URLSearchParams(call.query).toString();
  const path = call.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(call.pathParams[name] ?? name));
  const url = path + (query ? `?${query}` : '');
  if (op.protocol === 'websocket') return sendSocket(family, url, call, auth);
  const headers = new Headers(call.headers);
  let body: BodyInit | undefined;
  const contentType = call.contentType ?? op.requestContentType;
  if (contentType === 'multipart/form-data') {
    const form = new FormData();
    for (const [name, value] of Object.entries(call.fields)) {
      if (name === 'file') form.set('file', new Blob([readFileSync(String(value))], { type: 'audio/wav' }), 'sample.wav');
      else form.set(name, String(value));
    }
    body = form;
  } else if (contentType === 'application/json') {
    headers.set('content-type', 'application/json');
    body = JSON.stringify(call.fields);
  } else if (contentType) {
    headers.set('content-type', contentType);
    body = (call.bytes ?? new Uint8Array()) as Uint8Array<ArrayBuffer>;
  }
  if (!auth) headers.delete('authorization');
  const res = await (auth ? s.api(url, { method: op.method, headers, body }) : fetch(s.url + url, { method: op.method, headers, body }));
  const answered = res.headers.get('content-type') ?? '';
  const out = empty(res.status, answered);
  out.headers = res.headers;
  if (answered.startsWith('text/event-stream')) {
    out.events = (await allSseEvents(res)).map((e) => ({ event: e.event, data: parseMaybe(e.data) }));
  } else if (answered.includes('json')) {
    out.json = await res.json();
  } else {
    out.bytes = new Uint8Array(await res.arrayBuffer());
  }
  return out;
}

function parseMaybe(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    return data;
  }
}

/** A fresh socket: the conversation a call carries, and every frame until the server is done. */
async function sendSocket(family: ContractFamily, url: string, call: Call, auth: boolean): Promise<Outcome> {
  const s = family.server();
  const headers = { ...call.headers };
  if (!auth) delete headers.Authorization;
  else headers.Authorization ??= `Bearer ${s.key}`;
  const opened = await openSocket(wsUrl(s.url, url), headers);
  if (!(opened instanceof TestSocket)) return { ...empty(opened.status, 'application/json'), json: opened.body };
  try {
    await family.converse(opened, call);
    return { ...empty(101, 'application/json'), frames: [...opened.messages] };
  } finally {
    opened.close();
  }
}

/** A socket's error message: the speech sockets' `status: "error"`, the transcription sockets' `type: "error"`. */
export const isErrorFrame = (m: any): boolean => m?.status === 'error' || m?.type === 'error';

/** Refused in the route family's error shape, the message naming what was refused. */
export function assertRefused(op: Operation, out: Outcome, names: string[], what: string): void {
  const mentions = (message: unknown) => names.some((n) => String(message).toLowerCase().includes(n.toLowerCase()));
  if (op.protocol === 'websocket' && out.status === 101) {
    const error = out.frames.find(isErrorFrame);
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

/** Values outside what a parameter allows, each to be refused when it is served. */
export function ruledOut(p: Parameter): { value: unknown; why: string }[] {
  const out: { value: unknown; why: string }[] = [];
  if (p.in === 'header' || p.in === 'path') return p.values ? [{ value: 'not-a-documented-value', why: 'outside the enum' }] : [];
  if (p.in === 'content' || p.format === 'binary') return [];
  if (p.values) out.push({ value: p.type === 'string' ? 'not-a-documented-value' : 12345, why: 'outside the enum' });
  if (p.minimum !== undefined) out.push({ value: p.type === 'integer' ? p.minimum - 1 : p.minimum - 0.01, why: 'below the minimum' });
  if (p.maximum !== undefined) out.push({ value: p.type === 'integer' ? p.maximum + 1 : p.maximum + 0.01, why: 'above the maximum' });
  if (p.maxLength !== undefined) out.push({ value: 'a'.repeat(p.maxLength + 1), why: 'longer than maxLength' });
  if (p.minLength) out.push({ value: '', why: 'shorter than minLength' });
  if (p.pattern) out.push({ value: 'not allowed!', why: 'not matching the pattern' });
  if (p.maxItems !== undefined) out.push({ value: entries(p, p.maxItems + 1), why: 'more entries than maxItems' });
  // A form field or a query parameter is text whatever it says: only its other types can be wrong.
  if (p.in === 'form' || (p.in === 'query' && p.type === 'string')) return out;
  const wrongType: Record<string, unknown> = { string: 12345, integer: 'fast', number: 'fast', boolean: 'yes', array: 'not-an-array', object: 'not-an-object' };
  if (p.type in wrongType) out.push({ value: wrongType[p.type], why: `not a${p.type === 'integer' || p.type === 'array' || p.type === 'object' ? 'n' : ''} ${p.type}` });
  return out;
}

/** Values inside a parameter's bounds, each to be answered when it is served. */
function withinBounds(p: Parameter): unknown[] {
  const out: unknown[] = [];
  if (p.minimum !== undefined) out.push(p.minimum);
  if (p.maximum !== undefined) out.push(p.maximum);
  if (p.maxLength !== undefined && p.pattern) out.push('a'.repeat(p.maxLength));
  if (p.maxItems !== undefined) out.push(entries(p, p.maxItems));
  return out;
}

/** `count` distinct entries: an array, or for a string a comma-separated list. */
function entries(p: Parameter, count: number): unknown {
  const list = Array.from({ length: count }, (_, i) => `entry${i}`);
  return p.type === 'string' ? list.join(',') : list;
}

function assertValue(family: ContractFamily, status: Status, op: Operation, p: Parameter, value: unknown, out: Outcome, what: string): void {
  if (family.assertValue) family.assertValue(status, op, p, value, out, what);
  else if (status === 'not-served') assertRefused(op, out, [p.name, String(value)], what);
  else family.assertAnswered(op, out, what);
}

function describeParameter(family: ContractFamily, op: Operation, p: Parameter): void {
  const label = `${p.in} ${p.name}`;
  const skip = family.answersNeed?.(op) ?? false;
  describe(`${label} (${p.status})`, { concurrency: family.concurrency ?? 1 }, () => {
    if (p.status === 'not-served') {
      it('is refused, naming it', async () => {
        assertRefused(op, await send(family, op, await callWith(family, op, p, await family.sampleValue(op, p))), [p.name], label);
      });
      return;
    }
    for (const v of p.values ?? []) {
      it(`${JSON.stringify(v.value)} (${v.status})`, { skip: v.status !== 'not-served' && skip }, async () => {
        const out = await send(family, op, await callWith(family, op, p, v.value));
        assertValue(family, v.status as Status, op, p, v.value, out, `${label}=${String(v.value)}`);
        if (v.status !== 'not-served') family.checkValue?.(op, p, v.value, out);
      });
    }
    if (!p.values) {
      it('a documented value is answered', { skip }, async () => {
        family.assertAnswered(op, await send(family, op, await callWith(family, op, p, await family.sampleValue(op, p))), label);
      });
    }
    if (p.status !== 'served') return;
    if (family.assertSameAnswer && p.default !== undefined && !p.required && p.in !== 'content') {
      it(`left out, answers as ${JSON.stringify(p.default)} (the default) does`, { skip }, async () => {
        // The same request without it: what the value needs to be taken (a webhook for webhook_method) stays.
        const given = await callWith(family, op, p, p.default);
        const [left, right] = await Promise.all([send(family, op, without(given, p)), send(family, op, given)]);
        family.assertAnswered(op, right, `${label}=${String(p.default)}`);
        family.assertSameAnswer!(left, right, `${label} left out`);
      });
    }
    for (const value of withinBounds(p)) {
      it(`${JSON.stringify(value).slice(0, 40)} (within bounds) is answered`, { skip }, async () => {
        family.assertAnswered(op, await send(family, op, await callWith(family, op, p, value)), `${label}=${String(value).slice(0, 40)}`);
      });
    }
    for (const { value, why } of ruledOut(p)) {
      it(`${JSON.stringify(value).slice(0, 40)} (${why}) is refused`, async () => {
        // A path names no field: its message names the path instead.
        const names = p.in === 'path' ? [p.name, String(value)] : [p.name];
        assertRefused(op, await send(family, op, await callWith(family, op, p, value)), names, `${label} ${why}`);
      });
    }
    if (p.required && p.in !== 'path') {
      it('missing is refused', async () => {
        // The request it would be in (a field of a JSON body is missing from a JSON body).
        const call = without(await callWith(family, op, p, await family.sampleValue(op, p)), p);
        const out = await send(family, op, call, p.name !== 'Authorization');
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
export function assertField(f: Field, bodies: unknown[], what: string): void {
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

/** An answer, then each of its headers and fields on its own (one request for them all). */
function describeAnswer(family: ContractFamily, op: Operation, answer: Answer): void {
  const label = `answer ${answer.code}${answer.name ? ` ${answer.name}` : ''} (${answer.status})`;
  const skip = family.answersNeed?.(op) ?? false;
  let answered: Promise<Outcome> | undefined;
  const outcome = () =>
    (answered ??= (async () => {
      await family.prepareAnswer?.(op);
      return send(family, op, await family.showingCall(op, answer));
    })());
  describe(label, { concurrency: family.concurrency ?? 1 }, () => {
    it('is answered', { skip }, async () => family.assertAnswered(op, await outcome(), label));
    for (const h of answer.headers ?? []) {
      it(`header ${h.name} (${h.status})`, { skip }, async () => {
        const value = (await outcome()).headers?.get(h.name);
        if (h.status === 'not-served') assert.equal(value, null, `${label}: header ${h.name} is marked not served, yet sent`);
        else assert.equal(typeof value, 'string', `${label}: header ${h.name}`);
        if (h.status === 'served' && h.const !== undefined) assert.equal(value, h.const, `${label}: header ${h.name}`);
      });
    }
    for (const f of answer.fields) {
      it(`${f.name} (${f.status})`, { skip }, async () => {
        const out = await outcome();
        // A frame's status value is served when some frame carries it.
        if (f.name === 'status' && answer.code === 'frame') {
          for (const v of f.values ?? []) {
            const seen = out.frames.some((m) => m.status === v.value);
            assert.equal(seen, v.status !== 'not-served', `${label}: a ${String(v.value)} frame (${v.status})`);
          }
        }
        assertField(f, family.bodiesOf(answer, out, f.frames), label);
      });
    }
  });
}

function describeError(family: ContractFamily, op: Operation, answer: Answer): void {
  const label = `error ${answer.code}${answer.name ? ` ${answer.name}` : ''} (${answer.status})`;
  if (family.uncausable(Number(answer.code))) {
    // An error that cannot be caused from outside: its body is the family's declared error schema.
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
    const out = await family.cause(op, answer);
    assert.ok(out, `${label}: the test knows how to cause it`);
    if (answer.code === 'frame') {
      const error = out.frames.find(isErrorFrame);
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

/** The checks of the list itself: every item judged, partial ones explained, served operations whole, and the counts. */
export function describeJudgements(contract: Contract): void {
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

  it('counts', (t) => {
    const counts = statusCounts(contract);
    t.diagnostic(`served ${counts.served}, partial ${counts.partial}, not-served ${counts['not-served']}`);
    assert.equal(counts.unreviewed, 0);
  });
}

/** Every offered operation's items, walked against the server. */
export function describeOperations(family: ContractFamily, contract: Contract): void {
  for (const op of contract.operations) {
    describe(`${op.id} (${op.status})`, () => {
      if (op.status === 'not-served') {
        it('is refused, naming the route', async () => {
          const out = await send(family, { ...op, protocol: 'http', requestContentType: undefined }, await baseCall(family, { ...op, parameters: (op.parameters ?? []).filter((p) => p.in === 'path') }));
          assertRefused({ ...op, protocol: 'http' }, out, [op.path.replace(/\{[^}]+\}.*/, ''), 'not offered'], op.id);
        });
        it('so is everything in it', () => {
          const served = allJudgedItems({ ...contract, operations: [op], notOffered: [] }).filter(({ item }) => item.status !== 'not-served');
          assert.deepEqual(served.map(({ key }) => key), []);
        });
        return;
      }
      it('answers a request with what the document requires', { skip: family.answersNeed?.(op) ?? false }, async () => {
        family.assertAnswered(op, await send(family, op, await baseCall(family, op)), op.id);
      });
      for (const p of op.parameters ?? []) describeParameter(family, op, p);
      for (const answer of op.responses ?? []) describeAnswer(family, op, answer);
      for (const answer of op.errors ?? []) describeError(family, op, answer);
    });
  }
}
