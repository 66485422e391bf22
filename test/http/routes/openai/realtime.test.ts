/**
 * GET /v1/realtime transcription sessions driven by the official `openai` package's own realtime
 * WebSocket client (`openai/realtime/ws`, unchanged), over WSS with a self-signed certificate the
 * client trusts through its `ca` option (verification stays on). A corpus recording streams at
 * real-time pace in 50 ms PCM16 frames at 24 kHz, as LiveKit's OpenAI STT plugin sends it; with
 * server VAD it comes back as deltas and completed turns within 5 WER points of POST
 * /v1/audio/transcriptions on the same file; with turn detection off each commit gives one
 * completed item. Also: G.711 µ-law, the browser's subprotocol key, and the error events.
 * This is the client and the LiveKit set-up of docs/openai.md's realtime examples.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import { WebSocket } from 'ws';
import { encodeInt16 } from '../../../../src/audio/encode.js';
import { encodeMuLaw } from '../../../../src/audio/g711.js';
import { resample } from '../../../../src/audio/resample.js';
import { parseWav } from '../../../../src/audio/wav.js';
import { corpusFile, modelsDirWith, needs, REAL_TEST_MODELS } from '../../../helpers/models.js';
import { startTestServer, type TestServer } from '../../../helpers/server.js';
import { makeSelfSignedCertificate, type TestCertificate } from '../../../helpers/tls.js';
import { corpusEntries } from '../../../engines/stt-fixtures.js';
import { wordErrorRate } from '../../../helpers/transcript-accuracy.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH], corpus: true });
const FILE = 'en/jfk-inaugural-1961.wav';
const FRAME_MS = 50;

type ServerEvent = { type: string; [field: string]: any };

/** A session of the openai package's client, with every server event it received, in order. */
class Session {
  readonly events: ServerEvent[] = [];
  private waiters: { test: (e: ServerEvent) => boolean; resolve: (e: ServerEvent) => void }[] = [];

  constructor(readonly rt: OpenAIRealtimeWS) {
    rt.on('event', (event) => {
      this.events.push(event as ServerEvent);
      for (const w of [...this.waiters]) if (w.test(event as ServerEvent)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(event as ServerEvent);
      }
    });
    // The client raises `error` events here (instead of throwing): they are read from this.events.
    rt.on('error', () => undefined);
  }

  static async open(client: OpenAI, ca: Buffer, model = 'gpt-4o-transcribe'): Promise<Session> {
    const rt = await OpenAIRealtimeWS.create(client, { model, options: { ca } });
    const session = new Session(rt);
    await new Promise<void>((resolve, reject) => {
      rt.socket.once('open', () => resolve());
      rt.socket.once('error', reject);
    });
    return session;
  }

  next(type: string, timeoutMs = 30_000, after = 0): Promise<ServerEvent> {
    const found = this.events.slice(after).find((e) => e.type === type);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${type} within ${timeoutMs} ms; got ${this.events.map((e) => e.type).join(', ')}`)), timeoutMs);
      this.waiters.push({ test: (e) => e.type === type, resolve: (e) => (clearTimeout(timer), resolve(e)) });
    });
  }

  of(type: string): ServerEvent[] {
    return this.events.filter((e) => e.type === type);
  }

  async sendAudio(bytes: Uint8Array, bytesPerMs: number, paced: boolean): Promise<void> {
    const frame = Math.round(FRAME_MS * bytesPerMs);
    const t0 = Date.now();
    for (let at = 0, i = 0; at < bytes.length; at += frame, i++) {
      this.rt.send({ type: 'input_audio_buffer.append', audio: Buffer.from(bytes.subarray(at, at + frame)).toString('base64') });
      if (paced) {
        const due = t0 + (i + 1) * FRAME_MS;
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - Date.now())));
      }
    }
  }

  close(): void {
    this.rt.close();
  }
}

/** 16-bit PCM scaled by `gain`. */
function quieter(pcm: Uint8Array, gain: number): Uint8Array {
  const samples = new Int16Array(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.byteLength));
  for (let i = 0; i < samples.length; i++) samples[i] = Math.round(samples[i]! * gain);
  return new Uint8Array(samples.buffer);
}

describe('GET /v1/realtime?intent=transcription over WSS', { skip: NEEDS }, () => {
  let s: TestServer;
  let cert: TestCertificate;
  let client: OpenAI;
  let pcm24k: Uint8Array;
  let restText: string;

  before(async () => {
    cert = makeSelfSignedCertificate();
    s = await startTestServer({
      engines: true,
      config: {
        modelsDir: modelsDirWith([REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH]),
        logLevel: 'warn',
        tls: { certFile: cert.certFile, keyFile: cert.keyFile },
        rateLimits: { transcription: { perMinute: 0 } },
      },
    });
    const wav = parseWav(readFileSync(corpusFile(FILE)));
    pcm24k = encodeInt16(await resample(wav.samples, wav.sampleRate, 24_000));
    client = new OpenAI({ apiKey: s.key, baseURL: `${s.url}/v1`, maxRetries: 0 });
    // The REST result on the same file, fetched over the same TLS (node:https with the test's CA).
    restText = await restTranscript(s, cert.ca, readFileSync(corpusFile(FILE)));
    assert.match(restText, /country/i);
  });
  after(() => s?.close());

  /** The transcript's word error rate against the corpus label is within `points` of the REST transcript's. */
  function assertWithinRest(transcript: string, points = 0.05): void {
    const label = corpusLabel(FILE);
    const rest = wordErrorRate(label, restText);
    const realtime = wordErrorRate(label, transcript);
    assert.ok(realtime <= rest + points, `realtime "${transcript}" (WER ${(realtime * 100).toFixed(1)}) vs REST "${restText}" (WER ${(rest * 100).toFixed(1)})`);
  }

  it('server VAD: speech_started, deltas, speech_stopped, committed and completed, within 5 WER points of the REST transcript', async () => {
    const session = await Session.open(client, cert.ca);
    const created = await session.next('session.created');
    assert.equal(created.session.type, 'transcription');
    assert.deepEqual(created.session.audio.input.format, { type: 'audio/pcm', rate: 24000 });
    session.rt.send({
      type: 'session.update',
      session: {
        type: 'transcription',
        audio: {
          input: {
            format: { type: 'audio/pcm', rate: 24000 },
            transcription: { model: 'gpt-4o-transcribe', language: 'en' },
            turn_detection: { type: 'server_vad', threshold: 0.5, prefix_padding_ms: 600, silence_duration_ms: 350 },
          },
        },
      },
    });
    const updated = await session.next('session.updated');
    assert.deepEqual(updated.session.audio.input.turn_detection, { type: 'server_vad', threshold: 0.5, prefix_padding_ms: 600, silence_duration_ms: 350 });
    await session.sendAudio(pcm24k, 48, true);
    // A second of silence after the speech: the last turn ends by itself.
    await session.sendAudio(new Uint8Array(48_000), 48, true);
    const deadline = Date.now() + 15_000;
    while (session.of('conversation.item.input_audio_transcription.completed').length < Math.max(1, session.of('input_audio_buffer.speech_started').length) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    session.close();

    const started = session.of('input_audio_buffer.speech_started');
    const stopped = session.of('input_audio_buffer.speech_stopped');
    const completed = session.of('conversation.item.input_audio_transcription.completed');
    const committed = session.of('input_audio_buffer.committed');
    const deltas = session.of('conversation.item.input_audio_transcription.delta');
    assert.ok(started.length >= 1, 'speech was detected');
    assert.equal(completed.length, started.length, 'each turn is completed');
    assert.deepEqual(committed.map((e) => e.item_id), started.map((e) => e.item_id));
    assert.deepEqual(completed.map((e) => e.item_id), started.map((e) => e.item_id));
    assert.deepEqual(stopped.map((e) => e.item_id), started.map((e) => e.item_id));
    assert.equal(committed[0]!.previous_item_id, null);
    for (let i = 1; i < committed.length; i++) assert.equal(committed[i]!.previous_item_id, committed[i - 1]!.item_id);
    assert.ok(deltas.length >= 3, `${deltas.length} deltas`);
    for (const d of deltas) assert.ok(started.some((e) => e.item_id === d.item_id), 'a delta belongs to a turn');
    // Deltas come while the turn is spoken, before it ends.
    const firstDelta = session.events.findIndex((e) => e.type === 'conversation.item.input_audio_transcription.delta');
    assert.ok(firstDelta < session.events.findIndex((e) => e.type === 'input_audio_buffer.speech_stopped'));
    for (const c of completed) {
      assert.equal(c.content_index, 0);
      assert.equal(c.usage.type, 'duration');
      assert.ok(c.usage.seconds > 0 && c.usage.seconds <= 12.5, JSON.stringify(c.usage));
    }
    for (const e of session.events) assert.match(e.event_id, /^event_/);
    for (const [a, b] of started.map((e, i) => [e.audio_start_ms, stopped[i]!.audio_end_ms])) assert.ok(a >= 0 && a < b && b <= 12_100, `${a}-${b}`);
    assertWithinRest(completed.map((e) => e.transcript).join(' '));
  });

  it("server VAD's threshold decides what counts as speech: quiet speech starts no turn at 0.9, and the same audio does at 0.5", async () => {
    const session = await Session.open(client, cert.ca);
    await session.next('session.created');
    const update = (threshold: number) =>
      session.rt.send({
        type: 'session.update',
        session: { type: 'transcription', audio: { input: { transcription: { model: 'gpt-4o-transcribe', language: 'en' }, turn_detection: { type: 'server_vad', threshold } } } },
      });
    update(0.9);
    assert.equal((await session.next('session.updated')).session.audio.input.turn_detection.threshold, 0.9);
    // The first 4 s at -30 dB: Silero gives it a probability between 0.5 and 0.9.
    const speech = quieter(pcm24k.subarray(0, 4 * 48_000), 0.03);
    await session.sendAudio(speech, 48, false);
    await session.sendAudio(new Uint8Array(48_000), 48, false);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    assert.equal(session.of('input_audio_buffer.speech_started').length, 0, 'no speech at threshold 0.9');
    const seen = session.events.length;
    update(0.5);
    await session.next('session.updated', 5_000, seen);
    await session.sendAudio(speech, 48, false);
    await session.next('input_audio_buffer.speech_started', 15_000, seen);
    session.close();
  });

  it('turn detection off: each commit gives exactly one completed item, and nothing is completed without one', async () => {
    const session = await Session.open(client, cert.ca);
    session.rt.send({
      type: 'session.update',
      session: { type: 'transcription', audio: { input: { transcription: { model: 'gpt-4o-mini-transcribe', language: 'en' }, turn_detection: null } } },
    });
    assert.equal((await session.next('session.updated')).session.audio.input.turn_detection, null);
    // The recording in two commits, cut at 5.5 s, sent faster than real time (the socket keeps up).
    const cut = 5.5 * 48_000;
    await session.sendAudio(pcm24k.subarray(0, cut), 48, false);
    session.rt.send({ type: 'input_audio_buffer.commit' });
    const first = await session.next('conversation.item.input_audio_transcription.completed');
    await session.sendAudio(pcm24k.subarray(cut), 48, false);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    assert.equal(session.of('conversation.item.input_audio_transcription.completed').length, 1, 'no turn ends without a commit');
    assert.equal(session.of('input_audio_buffer.speech_started').length, 0, 'no VAD events when turn detection is off');
    session.rt.send({ type: 'input_audio_buffer.commit' });
    const seen = session.events.length;
    const second = await session.next('conversation.item.input_audio_transcription.completed', 30_000, seen);
    session.close();

    const committed = session.of('input_audio_buffer.committed');
    assert.equal(committed.length, 2);
    assert.deepEqual([first.item_id, second.item_id], committed.map((e) => e.item_id));
    assert.equal(committed[1]!.previous_item_id, committed[0]!.item_id);
    assert.ok(first.transcript && second.transcript, JSON.stringify([first.transcript, second.transcript]));
    assertWithinRest(`${first.transcript} ${second.transcript}`);
    assert.ok(Math.abs(first.usage.seconds - 5.5) < 0.05 && Math.abs(second.usage.seconds - 5.5) < 0.1, JSON.stringify([first.usage, second.usage]));
  });

  it('G.711 µ-law at 8 kHz through transcription_session.update', async () => {
    const session = await Session.open(client, cert.ca);
    session.rt.send({
      type: 'transcription_session.update',
      session: { input_audio_format: 'g711_ulaw', input_audio_transcription: { model: 'whisper-1', language: 'en' }, turn_detection: null },
    } as never);
    const updated = await session.next('transcription_session.updated');
    assert.equal(updated.session.input_audio_format, 'g711_ulaw');
    const wav = parseWav(readFileSync(corpusFile(FILE)));
    await session.sendAudio(encodeMuLaw(await resample(wav.samples, wav.sampleRate, 8_000)), 8, false);
    session.rt.send({ type: 'input_audio_buffer.commit' });
    const completed = await session.next('conversation.item.input_audio_transcription.completed');
    session.close();
    // Telephone audio (8 kHz, 8 bits) loses what the recogniser's 16 kHz hears: a looser bound.
    assertWithinRest(completed.transcript, 0.15);
  });

  it("errors are OpenAI's error events and the session goes on", async () => {
    const session = await Session.open(client, cert.ca);
    const errors = () => session.of('error').map((e) => e.error);
    session.rt.send({ type: 'response.create', event_id: 'evt_1' } as never);
    session.rt.send({ type: 'input_audio_buffer.commit', event_id: 'evt_2' });
    session.rt.send({ type: 'session.update', event_id: 'evt_3', session: { type: 'transcription', audio: { input: { format: { type: 'audio/pcm', rate: 16000 } } } } } as never);
    session.rt.send({ type: 'session.update', event_id: 'evt_4', session: { type: 'realtime' } } as never);
    session.rt.send({ type: 'session.update', event_id: 'evt_5', session: { type: 'transcription', audio: { input: { transcription: { model: 'gpt-9' } } } } } as never);
    session.rt.socket.send('not json');
    session.rt.send({ type: 'input_audio_buffer.append', audio: Buffer.from(pcm24k.subarray(0, 4800)).toString('base64') });
    session.rt.send({ type: 'input_audio_buffer.clear' });
    await session.next('input_audio_buffer.cleared');
    session.close();
    const got = errors();
    assert.deepEqual(
      got.map((e) => [e.type, e.code, e.param, e.event_id]),
      [
        ['invalid_request_error', 'invalid_value', 'type', 'evt_1'],
        ['invalid_request_error', 'input_audio_buffer_commit_empty', null, 'evt_2'],
        ['invalid_request_error', 'invalid_value', 'session.audio.input.format.rate', 'evt_3'],
        ['invalid_request_error', 'invalid_value', 'session.type', 'evt_4'],
        ['invalid_request_error', 'invalid_value', 'session.audio.input.transcription.model', 'evt_5'],
        ['invalid_request_error', 'invalid_json', null, null],
      ],
    );
    for (const e of got) assert.ok(typeof e.message === 'string' && e.message.length > 10);
  });

  it("semantic_vad's eagerness: names every object inherits (constructor, toString, __proto__) are refused as any bad value is; high still works", async (t) => {
    const session = await Session.open(client, cert.ca);
    const update = (eventId: string, eagerness: string) =>
      session.rt.send({ type: 'session.update', event_id: eventId, session: { type: 'transcription', audio: { input: { turn_detection: { type: 'semantic_vad', eagerness } } } } } as never);
    const inherited = ['constructor', 'toString', '__proto__'];
    for (const name of inherited) update(`evt_${name}`, name);
    update('evt_loud', 'loud');
    update('evt_high', 'high');
    const updated = await session.next('session.updated');
    session.close();
    const errors = session.of('error').map((e) => e.error);
    const refusedInherited = errors.filter((e) => inherited.some((name) => e.event_id === `evt_${name}`)).length;
    t.diagnostic(`inherited eagerness names refused: ${refusedInherited} of ${inherited.length}`);
    const param = 'session.audio.input.turn_detection.eagerness';
    assert.deepEqual(
      errors.map((e) => [e.type, e.code, e.param, e.event_id, e.message]),
      [...inherited, 'loud'].map((name) => ['invalid_request_error', 'invalid_value', param, `evt_${name}`, `${param} must be low, medium, high or auto`]),
    );
    assert.equal(session.of('session.updated').length, 1, 'only the valid update is applied');
    assert.deepEqual(updated.session.audio.input.turn_detection, { type: 'server_vad', threshold: 0.5, prefix_padding_ms: 300, silence_duration_ms: 250 });
  });

  it("the browser's form: the key as subprotocol openai-insecure-api-key.<key>, and \"realtime\" chosen (the key never echoed)", async () => {
    const url = `${s.url.replace('https:', 'wss:')}/v1/realtime?intent=transcription`;
    const ws = new WebSocket(url, ['realtime', `openai-insecure-api-key.${s.key}`], { ca: cert.ca });
    const first = await new Promise<ServerEvent>((resolve, reject) => {
      ws.once('message', (data) => resolve(JSON.parse(data.toString())));
      ws.once('error', reject);
    });
    assert.equal(ws.protocol, 'realtime');
    assert.equal(first.type, 'session.created');
    ws.close();
  });

  it('refused before the upgrade in OpenAI shape: a wrong key (401), a model that is not for transcription (400)', async () => {
    const status = (url: string, headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const ws = new WebSocket(url, { headers, ca: cert.ca });
        ws.once('unexpected-response', (_req, res) => resolve(res.statusCode!));
        ws.once('open', () => reject(new Error('opened')));
        ws.once('error', () => undefined);
      });
    const base = `${s.url.replace('https:', 'wss:')}/v1/realtime`;
    assert.equal(await status(`${base}?intent=transcription`, { authorization: 'Bearer sk_wrong' }), 401);
    assert.equal(await status(`${base}?model=gpt-realtime`, { authorization: `Bearer ${s.key}` }), 400);
    assert.equal(await status(`${base}?intent=conversation`, { authorization: `Bearer ${s.key}` }), 400);
  });
});

function corpusLabel(file: string): string {
  const text = corpusEntries().find((e) => e.file === file)?.text;
  assert.ok(text, `${file} has a transcript in the corpus manifest`);
  return text;
}

/** POST /v1/audio/transcriptions over HTTPS with the test's CA; the text. */
async function restTranscript(s: TestServer, ca: Buffer, wav: Buffer): Promise<string> {
  const { request } = await import('node:https');
  const boundary = 'parleyboundary';
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n--${boundary}\r\nContent-Disposition: form-data; name="language"\r\n\r\nen\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n`),
    wav,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return new Promise((resolve, reject) => {
    const req = request(`${s.url}/v1/audio/transcriptions`, {
      method: 'POST',
      ca,
      headers: { authorization: `Bearer ${s.key}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': body.length },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => (res.statusCode === 200 ? resolve((JSON.parse(text) as { text: string }).text) : reject(new Error(`${res.statusCode} ${text}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}
