/**
 * GET /v1/models, /v1/models/{id}, /v1/audio/voices and /v1/packs through the `openai` package
 * (where it has a method) and plain fetch, and the /v1 family's 404/405 in OpenAI's shape.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { modelsDirWith, needs, REAL_TEST_MODELS } from '../../../helpers/models.js';
import { startTestServer, type TestServer } from '../../../helpers/server.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH] });

const TONES = 'fake-piper-tones-en_US-22k-2spk';
const RECOGNISER = 'sherpa-onnx-kws-zipformer-gigaspeech-3.3M-2024-01-01-mobile';

let s: TestServer;
let client: OpenAI;

before(async () => {
  if (NEEDS) return; // every suite below is skipped, naming what is missing
  s = await startTestServer({ engines: true, config: { modelsDir: modelsDirWith(['silero-vad-v5', RECOGNISER, TONES]), logLevel: 'warn' } });
  client = new OpenAI({ apiKey: s.key, baseURL: `${s.url}/v1`, maxRetries: 0 });
});
after(() => s?.close());

type Model = OpenAI.Models.Model & { parley: { kind: string; task: string; alias_of?: string; languages: string[] } };

describe('GET /v1/models', { skip: NEEDS }, () => {
  it('lists the OpenAI aliases, the generations and every loaded pack, in OpenAI model objects', async () => {
    const models: Model[] = [];
    for await (const m of client.models.list()) models.push(m as Model);
    const byId = new Map(models.map((m) => [m.id, m]));
    for (const id of ['tts-1', 'tts-1-hd', 'gpt-4o-mini-tts']) assert.deepEqual(byId.get(id)?.parley.alias_of, 'tts-v2', id);
    for (const id of ['whisper-1', 'gpt-4o-transcribe', 'gpt-4o-mini-transcribe']) assert.equal(byId.get(id)?.parley.task, 'transcription', id);
    for (const id of ['tts-v2', 'tts-v3.1', 'tts-large']) assert.equal(byId.get(id)?.parley.kind, 'generation', id);
    assert.equal(byId.get(TONES)?.parley.kind, 'tts-vits');
    assert.equal(byId.get(TONES)?.parley.task, 'speech');
    assert.equal(byId.get(RECOGNISER)?.parley.task, 'transcription');
    assert.deepEqual(byId.get(RECOGNISER)?.parley.languages, ['en']);
    assert.equal(byId.get('silero-vad-v5')?.parley.task, 'other');
    for (const m of models) {
      assert.equal(m.object, 'model');
      assert.equal(m.owned_by, 'parley');
      assert.ok(Number.isInteger(m.created) && m.created > 1_700_000_000);
    }
  });

  it('GET /v1/models/{id}: one model, or the NotFoundError', async () => {
    const model = (await client.models.retrieve('tts-1')) as Model;
    assert.equal(model.id, 'tts-1');
    assert.equal(model.parley.alias_of, 'tts-v2');
    await assert.rejects(client.models.retrieve('gpt-5'), (err: unknown) => {
      assert.ok(err instanceof OpenAI.NotFoundError);
      assert.deepEqual(err.error, { message: 'The model "gpt-5" does not exist', type: 'invalid_request_error', param: null, code: 'not_found' });
      return true;
    });
  });
});

describe('GET /v1/audio/voices', { skip: NEEDS }, () => {
  async function voices(query = '') {
    const res = await s.api(`/v1/audio/voices${query}`);
    return { status: res.status, body: (await res.json()) as any };
  }

  it("tts-1's voices by default, each with its tags and the OpenAI names that speak with it", async () => {
    const { status, body } = await voices();
    assert.equal(status, 200);
    assert.equal(body.model, 'tts-1');
    const female = body.voices.find((v: any) => v.id === 'espeak-en-us-female');
    assert.deepEqual(female.aliases, ['alloy', 'coral', 'nova', 'marin']);
    assert.deepEqual(female.languages, ['en', 'en-US']);
    assert.equal(female.gender, 'female');
    const named = body.voices.flatMap((v: any) => v.aliases).sort();
    assert.deepEqual(named, ['alloy', 'ash', 'ballad', 'cedar', 'coral', 'echo', 'fable', 'marin', 'nova', 'onyx', 'sage', 'shimmer', 'verse']);
  });

  it("a pack's voices: its speakers, and every OpenAI name falls back to one of the same gender or the first", async () => {
    const { body } = await voices(`?model=${TONES}`);
    assert.deepEqual(body.voices.map((v: any) => v.id).sort(), [`${TONES}-0`, `${TONES}-1`]);
    assert.equal(body.voices.flatMap((v: any) => v.aliases).length, 13);
  });

  it('GET /v1/audio/models: the speech models as {models: [{id}]}', async () => {
    const res = await s.api('/v1/audio/models');
    const ids = ((await res.json()) as { models: Array<{ id: string }> }).models.map((m) => m.id);
    assert.deepEqual(ids, ['tts-1', 'tts-1-hd', 'gpt-4o-mini-tts', 'tts-v2', 'tts-v3.1', 'tts-large', TONES]);
  });

  it('an unknown model is 404 in OpenAI shape', async () => {
    const { status, body } = await voices('?model=nope');
    assert.equal(status, 404);
    assert.equal(body.error.type, 'invalid_request_error');
  });
});

describe('GET /v1/packs', { skip: NEEDS }, () => {
  it('installed packs with their state, and catalogue packs not installed', async () => {
    const res = await s.api('/v1/packs');
    const body = (await res.json()) as { installed: Array<{ id: string; state: string }>; available: Array<{ id: string }> };
    assert.deepEqual(body.installed.map((p) => [p.id, p.state]).sort(), [[TONES, 'loaded'], [RECOGNISER, 'loaded'], ['silero-vad-v5', 'loaded']].sort());
    assert.ok(body.available.some((p) => p.id === 'vits-piper-en_US-lessac-medium'));
    assert.ok(!body.available.some((p) => p.id === 'silero-vad-v5'));
  });
});

describe('the /v1 family', { skip: NEEDS }, () => {
  it('unknown routes are 404 and wrong methods 405 with Allow, in OpenAI shape; no key is 401', async () => {
    const missing = await s.api('/v1/chat/completions', { method: 'POST', json: {} });
    assert.equal(missing.status, 404);
    assert.deepEqual(await missing.json(), { error: { message: 'No route POST /v1/chat/completions', type: 'invalid_request_error', param: null, code: 'not_found' } });
    const wrong = await s.api('/v1/audio/speech');
    assert.equal(wrong.status, 405);
    assert.equal(wrong.headers.get('allow'), 'POST');
    assert.equal(((await wrong.json()) as any).error.code, 'method_not_allowed');
    const anonymous = await fetch(`${s.url}/v1/models`);
    assert.equal(anonymous.status, 401);
    assert.deepEqual(await anonymous.json(), { error: { message: 'Bearer token is missing', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } });
  });

  it('the OpenAPI document lists the /v1 routes', async () => {
    const doc = (await (await fetch(`${s.url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    for (const p of ['/v1/audio/speech', '/v1/audio/transcriptions', '/v1/audio/translations', '/v1/models', '/v1/models/{id}', '/v1/audio/voices', '/v1/packs']) {
      assert.ok(doc.paths[p], p);
    }
  });

  it('a body that is not JSON is 400 in OpenAI shape', async () => {
    const res = await s.api('/v1/audio/speech', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model":' });
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as any).error.message, 'Request body is not valid JSON');
  });
});
