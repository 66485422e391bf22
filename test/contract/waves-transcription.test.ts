/**
 * The hosted service's published transcription contract, walked against a running server: every
 * operation, parameter, enum value, response field, frame field and error body of
 * test/contract/waves-transcription.json, derived by scripts/contract/derive.mjs from
 * smallest-inc/smallest-ai-documentation@bfc4ef1588a82979f7f6a7ff2cc4b6e3dac900e3
 * (fern/apis/waves/openapi/stt-openapi.yaml, pulse-stt-openapi.yaml with its overrides,
 * fern/apis/waves/asyncapi/stt-live-ws.yaml, pulse-stt-ws.yaml with its overrides).
 *
 * Each item's status drives what is checked (test/contract/walk.ts). Transcriptions are real: the
 * tiny English streaming zipformer and Silero VAD on labelled corpus speech, one request per shape
 * (identical requests share their answer). A language value is answered when an installed
 * recogniser speaks it; otherwise it is refused at once naming it, and when served, naming the
 * pack to pull.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe } from 'node:test';
import { encodeInt16 } from '../../src/audio/encode.js';
import { encodeALaw, encodeMuLaw } from '../../src/audio/g711.js';
import { resample } from '../../src/audio/resample.js';
import { parseWav } from '../../src/audio/wav.js';
import { loadContract, type Answer, type Operation, type Parameter } from '../../scripts/contract/contract.js';
import { corpusFile, modelsDirWith, needs, REAL_TEST_MODELS, sttTestPacks } from '../helpers/models.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import type { TestSocket } from '../helpers/websocket.js';
import { startReceiver } from '../jobs/fixtures/receiver.js';
import { assertRefused, baseCall, describeJudgements, documentedValue, describeOperations, isErrorFrame, put, send, type Call, type ContractFamily, type Outcome } from './walk.js';

const contract = loadContract('transcription');
const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH], corpus: true });
/** Labelled English speech, 3.5 s at 16 kHz. */
const SPEECH = 'en/cmu-arctic-aew-a0003.wav';
/** The same kind of speech as Ogg Opus, for the opus encodings. */
const OPUS_SPEECH = 'formats/jfk.opus';
/** A small upload cap, so that a body over it (413) is cheap to send. */
const MAX_UPLOAD_BYTES = 1024 * 1024;

let s: TestServer;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let audioServer: http.Server;
let audioUrl: string;
let wav: Uint8Array;

before(async () => {
  if (NEEDS) return;
  wav = new Uint8Array(readFileSync(corpusFile(SPEECH)));
  audioServer = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'audio/wav' }).end(wav));
  await new Promise<void>((resolve) => audioServer.listen(0, '127.0.0.1', resolve));
  audioUrl = `http://127.0.0.1:${(audioServer.address() as AddressInfo).port}/speech.wav`;
  [s, receiver] = await Promise.all([
    startTestServer({
      engines: true,
      config: { modelsDir: modelsDirWith(sttTestPacks), limits: { maxUploadBytes: MAX_UPLOAD_BYTES }, rateLimits: { transcription: { perMinute: 0 } } },
    }),
    startReceiver(),
  ]);
});
after(async () => {
  await s?.close();
  await receiver?.close();
  audioServer?.close();
});

async function sampleValue(_op: Operation, p: Parameter): Promise<unknown> {
  switch (p.name) {
    case 'model':
      return 'pulse';
    case 'language':
      return 'en';
    case 'Authorization':
      return `Bearer ${s.key}`;
    case 'webhook_url':
      return receiver.url;
    case 'webhook_extra':
      return 'contract:1';
    case 'url':
      return audioUrl;
    case 'keywords':
      return 'Blackwell:1,Jensen Huang:2';
    case 'external_session_id':
      return 'contract-1.a_b';
    case 'eou_timeout_ms':
      // Where a document states no value, the service's default on its other socket.
      return p.default ?? 800;
  }
  if (p.in === 'content') return p.name;
  return documentedValue(p);
}

/** A file upload carries the corpus WAV as raw bytes; a socket starts empty (its audio is sent by `converse`). */
function startCall(op: Operation): Call {
  const call: Call = { path: op.path, pathParams: {}, headers: {}, fields: {}, query: {} };
  if (op.protocol === 'http') call.bytes = wav;
  return call;
}

/** What a value needs to be taken: a JSON body gives the audio's URL; webhook options go with a webhook. */
async function withValue(_op: Operation, p: Parameter, value: unknown, call: Call): Promise<Call> {
  if ((p.in === 'content' && value === 'application/json') || p.contentType === 'application/json') {
    call.contentType = 'application/json';
    if (!Object.hasOwn(call.fields, 'url')) call.fields.url = audioUrl;
  }
  if (p.name.startsWith('webhook_') && p.name !== 'webhook_url') call.query.webhook_url ??= receiver.url;
  return call;
}

const socketAudio = new Map<string, Promise<Uint8Array>>();

/** The corpus speech as a socket sends it: in the call's encoding, at its sample rate (the service does not resample). */
function audioFor(encoding: string, sampleRate: number): Promise<Uint8Array> {
  const key = `${encoding}@${sampleRate}`;
  if (!socketAudio.has(key)) {
    socketAudio.set(
      key,
      (async () => {
        if (encoding === 'opus' || encoding === 'ogg_opus') return new Uint8Array(readFileSync(corpusFile(OPUS_SPEECH)));
        const { samples, sampleRate: rate } = parseWav(wav);
        const at = await resample(samples, rate, sampleRate);
        if (encoding === 'linear32') return new Uint8Array(new Float32Array(at).buffer);
        if (encoding === 'mulaw') return encodeMuLaw(at);
        if (encoding === 'alaw') return encodeALaw(at);
        return encodeInt16(at);
      })(),
    );
  }
  return socketAudio.get(key)!;
}

/** Audio in binary frames, the call's control message, then close_stream; every frame until the last transcript or an error. */
async function converse(socket: TestSocket, call: Call): Promise<void> {
  const audio = await audioFor(call.query.encoding ?? 'linear16', Number(call.query.sample_rate ?? 16_000));
  for (let i = 0; i < audio.length; i += 3200) socket.send(Buffer.from(audio.subarray(i, i + 3200)));
  socket.send(call.fields);
  if (call.fields.type !== 'close_stream') socket.send({ type: 'close_stream' });
  await socket.until((all) => all.some((m) => m.is_last === true || isErrorFrame(m)), 60_000).catch(() => undefined);
}

function assertAnswered(op: Operation, out: Outcome, what: string): void {
  if (op.protocol === 'websocket') {
    assert.equal(out.status, 101, `${what}: the upgrade is accepted (${JSON.stringify(out.json)})`);
    const error = out.frames.find(isErrorFrame);
    assert.equal(error, undefined, `${what}: no error frame (${JSON.stringify(error)})`);
    assert.ok(out.frames.some((m) => m.type === 'transcription' && m.is_last === true), `${what}: ends with the last transcript`);
    return;
  }
  assert.equal(out.status, 200, `${what}: ${JSON.stringify(out.json ?? '')}`);
  assert.match(out.contentType, /^application\/json/, what);
  if (out.json.status === 'processing') {
    assert.equal(typeof out.json.request_id, 'string', `${what}: a job`);
    return;
  }
  assert.equal(out.json.status, 'success', what);
  assert.ok(typeof out.json.transcription === 'string' && out.json.transcription.length > 0, `${what}: a transcript of the speech`);
}

/** A language no installed recogniser speaks is refused at once, naming it (and, once served, the pack to pull). */
function assertValue(status: string, op: Operation, p: Parameter, value: unknown, out: Outcome, what: string): void {
  if (status === 'not-served') return assertRefused(op, out, [p.name, String(value)], what);
  if (p.name === 'language' && out.status >= 400) {
    assertRefused(op, out, [String(value)], what);
    if (status === 'served') assert.match(String(out.json.message), /\bpull\b/i, `${what}: names the pack to pull`);
    return;
  }
  assertAnswered(op, out, what);
}

/**
 * What an answer says, without what differs between two runs of one request: request and session
 * ids, and a socket's partial transcripts (they depend on when the audio arrived).
 */
function sayings(out: Outcome): unknown {
  // Voice-activity events and finals may cross on the wire: compared as a set.
  if (out.status === 101) return out.frames.filter((m) => m.is_final || m.type !== 'transcription').map(({ session_id: _, ...m }) => JSON.stringify(m)).sort();
  const { request_id: _, ...body } = out.json ?? {};
  return { status: out.status, body };
}

function assertSameAnswer(left: Outcome, right: Outcome, what: string): void {
  assert.deepEqual(sayings(left), sayings(right), what);
}

/** Flags that make fields appear in an answer. */
const SHOWING = ['word_timestamps', 'diarize', 'sentence_timestamps', 'full_transcript', 'vad_events', 'emotion_detection', 'gender_detection', 'redact_pii', 'redact_pci'];

async function showingCall(op: Operation, answer: Answer): Promise<Call> {
  const call = await baseCall(transcription, op);
  for (const p of op.parameters ?? []) if (p.status !== 'not-served' && SHOWING.includes(p.name)) await put(call, p, 'true');
  // The answer to a request with a webhook is the job's acknowledgement.
  if (answer.name === 'AsyncAccepted') call.query.webhook_url = receiver.url;
  return call;
}

/** A frame answer's fields are read from the frames of its `type` (a transcript when the document gives none). */
function bodiesOf(answer: Answer, out: Outcome): unknown[] {
  if (answer.code !== 'frame') return [out.json];
  const type = answer.fields.find((f) => f.name === 'type')?.values?.[0]?.value ?? 'transcription';
  return out.frames.filter((m) => m.type === type);
}

/**
 * How a documented error is caused: 401 without a key (or, for the shape the document gives a
 * wrong key, with one); 400 with a query value outside its enum; an error frame with a control
 * message lacking its type; 413 with a body one byte over the upload cap.
 */
async function cause(op: Operation, answer: Answer): Promise<Outcome | undefined> {
  const call = await baseCall(transcription, op);
  if (answer.code === '401') {
    if (answer.name && !/missing/i.test(answer.name)) return send(transcription, op, { ...call, headers: { ...call.headers, Authorization: 'Bearer not-a-key' } });
    return send(transcription, op, call, false);
  }
  if (answer.code === 'frame') return send(transcription, op, { ...call, fields: {} });
  if (answer.code === '413') return send(transcription, op, { ...call, bytes: new Uint8Array(MAX_UPLOAD_BYTES + 1) });
  if (answer.code !== '400') return undefined;
  const enumerated = op.parameters?.find((p) => p.in === 'query' && p.values);
  return enumerated ? send(transcription, op, await put(call, enumerated, 'not-a-documented-value')) : undefined;
}

const transcription: ContractFamily = {
  server: () => s,
  sampleValue,
  startCall,
  withValue,
  converse,
  assertAnswered,
  assertValue,
  assertSameAnswer,
  showingCall,
  bodiesOf,
  cause,
  // Plans (403), the rate limit (429) and failures (5xx) cannot be caused by a request alone.
  uncausable: (code) => code >= 500 || code === 403 || code === 429,
  reuseAnswers: true,
  concurrency: 3,
};

describe(`the transcription contract of ${contract.source.repository}@${contract.source.commit.slice(0, 7)}`, { skip: NEEDS }, () => {
  describeJudgements(contract);
  describeOperations(transcription, contract);
});
