/**
 * The real names and the current layout over plain HTTP, as clients of the hosted service call
 * them: every synthesis and voice route of the route table under /api/v1 and /waves/v1 (with
 * `Deprecation: true` on retired names), every `model` spelling of POST /waves/v1/tts, the SSE
 * framing of POST /waves/v1/tts/live, the current layout's error body beside the legacy one, the
 * clone list with `modelIds`, and the OpenAPI document listing all of it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { parseWav } from '../../../src/audio/wav.js';
import { SPEECH_MODEL_SPELLINGS, speechModelOf, SPEECH_ROUTE_NAMES, ROUTE_PREFIXES, isDeprecatedSpeechModelValue, isProductName } from '../../../src/http/routes/product-names.js';
import { corpusFile, modelsDirWith, needs, REAL_TEST_MODELS } from '../../helpers/models.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { allSseEvents } from '../../helpers/sse.js';

const VOICE = 'espeak-en-us-female';
const SHORT = 'Hi there.';
const defaultRate = { 'tts-large': 24000, 'tts-v2': 24000, 'tts-v3.1': 44100 } as const;

let s: TestServer;

before(async () => {
  s = await startTestServer({ engines: true });
});
after(() => s?.close());

/** The current layout's error body: its status, and the request id the header carries. */
async function expectWavesError(res: Response, status: number, message: RegExp): Promise<void> {
  const body = (await res.json()) as Record<string, unknown>;
  assert.equal(res.status, status, JSON.stringify(body));
  assert.deepEqual(Object.keys(body).sort(), ['error', 'message', 'request_id', 'status']);
  assert.equal(body.status, 'error');
  assert.equal(typeof body.error, 'string');
  assert.match(String(body.message), message);
  assert.equal(body.request_id, res.headers.get('x-request-id'));
}

describe('the route table under both prefixes', () => {
  for (const prefix of ROUTE_PREFIXES) {
    for (const { path, model, deprecated, operations } of SPEECH_ROUTE_NAMES) {
      it(`${prefix}/${path}: ${operations.join(', ')} (${model})${deprecated ? ', deprecated' : ''}`, async () => {
        const checkDeprecation = (res: Response) => assert.equal(res.headers.get('deprecation'), deprecated ? 'true' : null, `${res.url} Deprecation`);
        if (operations.includes('get_voices')) {
          const res = await s.api(`${prefix}/${path}/get_voices`);
          assert.equal(res.status, 200);
          checkDeprecation(res);
          assert.ok(((await res.json()) as { voices: { voiceId: string }[] }).voices.some((v) => v.voiceId === VOICE));
        }
        if (operations.includes('get_speech')) {
          const res = await s.api(`${prefix}/${path}/get_speech`, { method: 'POST', json: { text: SHORT, voice_id: VOICE, output_format: 'wav' } });
          assert.equal(res.status, 200);
          checkDeprecation(res);
          const wav = parseWav(new Uint8Array(await res.arrayBuffer()));
          assert.equal(wav.sampleRate, defaultRate[model]);
          assert.ok(wav.samples.length > wav.sampleRate * 0.3);
        }
        if (operations.includes('stream')) {
          const res = await s.api(`${prefix}/${path}/stream`, { method: 'POST', json: { text: SHORT, voice_id: VOICE } });
          assert.equal(res.status, 200);
          checkDeprecation(res);
          const events = await allSseEvents(res);
          // A product name has the service's frames of today, a neutral one the original API's.
          assert.ok(events.some((e) => e.event === (isProductName(path) ? 'audio' : 'chunk')));
          assert.equal(events.at(-1)!.event, isProductName(path) ? 'message' : 'complete');
          assert.equal(JSON.parse(events.at(-1)!.data).done, true);
        }
        if (operations.includes('clones')) {
          const res = await s.api(`${prefix}/${path}/get_cloned_voices`);
          assert.equal(res.status, 200);
          checkDeprecation(res);
          assert.deepEqual(await res.json(), { voices: [] });
        }
      });
    }
  }

  it('a name serves only its operations: tts-large has no get_speech, lightning-large has', async () => {
    assert.equal((await s.api('/api/v1/tts-large/get_speech', { method: 'POST', json: { text: SHORT, voice_id: VOICE } })).status, 404);
    assert.equal((await s.api('/waves/v1/lightning-large/get_speech', { method: 'POST', json: { text: SHORT, voice_id: VOICE } })).status, 200);
  });
});

describe('POST /waves/v1/tts', () => {
  for (const spelling of SPEECH_MODEL_SPELLINGS) {
    it(`model "${spelling}" is served by ${speechModelOf(spelling)}`, async () => {
      const res = await s.api('/waves/v1/tts', { method: 'POST', json: { text: SHORT, voice_id: VOICE, model: spelling } });
      assert.equal(res.status, 200, await res.clone().text());
      assert.equal(res.headers.get('x-sample-rate'), String(defaultRate[speechModelOf(spelling)!]));
      assert.equal(res.headers.get('deprecation'), isDeprecatedSpeechModelValue(spelling) ? 'true' : null);
      const bytes = new Uint8Array(await res.arrayBuffer());
      assert.notEqual(Buffer.from(bytes.subarray(0, 4)).toString('latin1'), 'RIFF', 'pcm by default');
      assert.ok(bytes.byteLength > 2 * 8000 * 0.3);
    });
  }

  it('defaults to lightning_v3.1 and answers a WAV file when Accept asks for audio/wav', async () => {
    const res = await s.api('/waves/v1/tts', { method: 'POST', headers: { accept: 'audio/wav' }, json: { text: SHORT, voice_id: VOICE, sample_rate: 24000, session_id: 'call-42.a' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-external-session-id'), 'call-42.a');
    assert.equal(res.headers.get('content-type'), 'audio/wav');
    assert.equal(parseWav(new Uint8Array(await res.arrayBuffer())).sampleRate, 24000);
  });

  it('output_format "ulaw" is raw mu-law, one byte a sample', async () => {
    const body = { text: SHORT, voice_id: VOICE, sample_rate: 8000 };
    const res = await s.api('/waves/v1/tts', { method: 'POST', json: { ...body, output_format: 'ulaw' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'audio/x-mulaw');
    const pcm = await s.api('/waves/v1/tts', { method: 'POST', json: { ...body, output_format: 'pcm' } });
    assert.equal((await res.arrayBuffer()).byteLength * 2, (await pcm.arrayBuffer()).byteLength);
  });

  it("checks the chosen model's own rules, naming the field and the model", async () => {
    await expectWavesError(
      await s.api('/waves/v1/tts', { method: 'POST', json: { text: SHORT, voice_id: VOICE, model: 'lightning_v2', sample_rate: 44100 } }),
      400,
      /sample_rate .*lightning_v2/,
    );
    await expectWavesError(await s.api('/waves/v1/tts', { method: 'POST', json: { text: SHORT, voice_id: VOICE, model: 'lightning_v9' } }), 400, /model/);
    await expectWavesError(await s.api('/waves/v1/tts', { method: 'POST', json: { voice_id: VOICE } }), 400, /text/);
    await expectWavesError(await s.api('/waves/v1/tts', { method: 'POST', json: { text: SHORT, voice_id: 'nobody' } }), 400, /nobody/);
  });
});

describe('POST /waves/v1/tts/live', () => {
  it('sends `event: audio` frames of {"audio", "done": false, "status": "206"} holding the same audio as /tts, then {"status": "200", "done": true}', async () => {
    const body = { text: 'Hello there. This is Parley speaking on the current layout.', voice_id: VOICE, sample_rate: 24000 };
    const res = await s.api('/waves/v1/tts/live', { method: 'POST', json: body });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/event-stream');
    const events = await allSseEvents(res);
    const audio = events.slice(0, -1);
    assert.ok(audio.length > 1);
    for (const e of audio) {
      assert.equal(e.event, 'audio');
      assert.deepEqual(Object.keys(JSON.parse(e.data)), ['audio', 'done', 'status']);
      assert.deepEqual({ ...JSON.parse(e.data), audio: '' }, { audio: '', done: false, status: '206' });
    }
    assert.deepEqual(events.at(-1)!.fields, [['data', '{"status":"200","done":true}']]);
    const streamed = Buffer.concat(audio.map((e) => Buffer.from((JSON.parse(e.data) as { audio: string }).audio, 'base64')));
    const whole = Buffer.from(await (await s.api('/waves/v1/tts', { method: 'POST', json: body })).arrayBuffer());
    assert.ok(Math.abs(streamed.length - whole.length) <= 0.05 * whole.length, `${streamed.length} streamed vs ${whole.length} whole bytes`);
  });

  it('refuses a bad body with the current error shape before the stream opens', async () => {
    await expectWavesError(await s.api('/waves/v1/tts/live', { method: 'POST', json: { text: ' ', voice_id: VOICE } }), 400, /text/);
  });
});

describe('errors by layout', () => {
  it('/waves/v1 answers {status, error, message, request_id}; /api/v1 keeps the spec bodies', async () => {
    await expectWavesError(await fetch(`${s.url}/waves/v1/tts`, { method: 'POST' }), 401, /./);
    await expectWavesError(await s.api('/waves/v1/no-such-route'), 404, /No route/);
    await expectWavesError(await s.api('/waves/v1/lightning-v3.1/get_speech', { method: 'POST', json: { voice_id: VOICE } }), 400, /text/);
    const legacy = await s.api('/api/v1/lightning-v3.1/get_speech', { method: 'POST', json: { voice_id: VOICE } });
    assert.equal(legacy.status, 400);
    assert.deepEqual(Object.keys(await legacy.json()).sort(), ['error', 'message']);
  });
});

describe('clones on the current layout', () => {
  it('GET /waves/v1/voice-cloning lists clones under data; POST refuses lightning-v2 with the reference sentence', async () => {
    const list = await s.api('/waves/v1/voice-cloning');
    assert.equal(list.status, 200);
    assert.deepEqual(((await list.json()) as { data: unknown[] }).data, []);
    const form = new FormData();
    form.append('displayName', 'old model');
    form.append('model', 'lightning-v2');
    form.append('file', new Blob([new Uint8Array(64)], { type: 'audio/wav' }), 'a.wav');
    await expectWavesError(await s.api('/waves/v1/voice-cloning', { method: 'POST', body: form }), 400, /^Voice cloning for lightning-v2 is deprecated\. Please use lightning-v3\.1$/);
  });
});

describe('POST /waves/v1/voice-cloning with a real sample', { skip: needs({ models: [REAL_TEST_MODELS.VAD], corpus: true }) }, () => {
  let cloning: TestServer;
  before(async () => {
    cloning = await startTestServer({ engines: true, config: { modelsDir: modelsDirWith([REAL_TEST_MODELS.VAD]) } as never });
  });
  after(() => cloning?.close());

  it('creates a lightning-v3.1 clone, lists it with modelIds, speaks it on /tts, and DELETE /waves/v1/lightning-large removes it', async () => {
    const form = new FormData();
    form.append('displayName', 'current layout');
    form.append('language', 'en');
    form.append('tags', 'en, test');
    form.append('file', new Blob([readFileSync(corpusFile('en/jfk-inaugural-1961.wav'))], { type: 'audio/wav' }), 'jfk.wav');
    const created = await cloning.api('/waves/v1/voice-cloning', { method: 'POST', body: form });
    const { data } = (await created.json()) as { data: { voiceId: string; model: string; language: string; status: string } };
    assert.equal(created.status, 200, JSON.stringify(data));
    assert.equal(data.model, 'lightning-v3.1');
    assert.equal(data.status, 'completed', 'the service answers once the clone can speak');
    assert.equal(data.language, 'en');

    let clone: { status: string; modelIds: string[]; tags: string[] } | undefined;
    for (const deadline = Date.now() + 120_000; ; await new Promise((resolve) => setTimeout(resolve, 100))) {
      const list = (await (await cloning.api('/waves/v1/voice-cloning')).json()) as { data: { voiceId: string; status: string; modelIds: string[]; tags: string[] }[] };
      clone = list.data.find((c) => c.voiceId === data.voiceId);
      assert.ok(clone, 'listed');
      if (clone.status !== 'processing' || Date.now() > deadline) break;
    }
    assert.equal(clone.status, 'completed');
    assert.deepEqual(clone.tags, ['en', 'test']);
    assert.ok(clone.modelIds.includes('lightning-v3.1'), clone.modelIds.join());

    const speech = await cloning.api('/waves/v1/tts', { method: 'POST', json: { text: SHORT, voice_id: data.voiceId, model: 'lightning_v3.1' } });
    assert.equal(speech.status, 200);
    assert.ok((await speech.arrayBuffer()).byteLength > 2 * 44100 * 0.3);

    const deleted = await cloning.api('/waves/v1/lightning-large', { method: 'DELETE', json: { voiceId: data.voiceId } });
    assert.deepEqual(await deleted.json(), { voiceId: data.voiceId, success: true });
    assert.equal(deleted.headers.get('deprecation'), 'true');
    await expectWavesError(await cloning.api('/waves/v1/lightning-large', { method: 'DELETE', json: { voiceId: data.voiceId } }), 404, /voice_/);
  });
});

describe('OpenAPI', () => {
  it('lists the routes of both layouts', async () => {
    const doc = (await (await fetch(`${s.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const expected: [string, string][] = [
      ['/waves/v1/tts', 'post'],
      ['/waves/v1/tts/live', 'post'],
      ['/waves/v1/voice-cloning', 'post'],
      ['/waves/v1/voice-cloning', 'get'],
      ['/waves/v1/lightning-large', 'delete'],
      ['/waves/v1/pronunciation-dicts', 'get'],
      ['/api/v1/lightning-large/get_speech', 'post'],
      ['/api/v1/lightning/get_voices', 'get'],
      ['/waves/v1/lightning-v3.1/stream', 'post'],
    ];
    for (const [path, method] of expected) assert.ok(doc.paths[path]?.[method], `${method.toUpperCase()} ${path}`);
  });
});
