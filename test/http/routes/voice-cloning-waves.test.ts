/**
 * Voice cloning as the service answers it now, through real HTTP: POST/GET /waves/v1/voice-cloning
 * with and without the trailing slash, GET /waves/v1/voice-cloning/{id}, POST …/voice-cloning/delete,
 * `model` lightning-v3.1-pro, product names (`lightning-v3.1`) on the product-named and /waves/v1
 * routes against Parley's own names on its neutral ones, a create that answers once the clone can
 * speak, with a clip of it (and a 500 `voice_clone_timeout`, leaving nothing, when it cannot in
 * time), and the 400s of
 * the documented failures, all in the /waves/v1 error shape.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { decodeAudio } from '../../../src/audio/decode.js';
import { corpusFile, modelsDirWith, needs, REAL_TEST_MODELS } from '../../helpers/models.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { settledClone, womanSample } from './voice-cloning-helpers.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD], corpus: true });
const MAX_CLONES = 3;
const TEXT = 'Good morning. This is the cloned voice.';

/** A multipart clone request: `fields`, and the woman's sample as `file` unless `file` says otherwise. */
function cloneForm(fields: Record<string, string>, file: { bytes: Uint8Array; name: string; type: string } | null = sampleFile()): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  if (file) form.append('file', new Blob([file.bytes as Uint8Array<ArrayBuffer>], { type: file.type }), file.name);
  return form;
}

function sampleFile() {
  return { bytes: readFileSync(corpusFile(womanSample())), name: 'sample.wav', type: 'audio/wav' };
}

/** A /waves/v1 error: the status, the layout's four fields, and a message matching `pattern`. */
async function expectWavesError(res: Response, status: number, pattern: RegExp): Promise<any> {
  const body = (await res.json()) as any;
  assert.equal(res.status, status, JSON.stringify(body));
  assert.equal(body.status, 'error');
  assert.equal(typeof body.request_id, 'string');
  assert.match(body.message, pattern);
  return body;
}

describe('voice cloning on /waves/v1 and the product names', { skip: NEEDS }, () => {
  let s: TestServer;
  let otherKey: string;
  let pro: { voiceId: string };

  before(async () => {
    // A creation answers once the clone speaks; the bound is raised so a loaded test machine does not time it out.
    s = await startTestServer({
      engines: true,
      config: { modelsDir: modelsDirWith([REAL_TEST_MODELS.VAD]), cloning: { maxClonesPerAccount: MAX_CLONES, readyTimeoutMs: 180_000 } } as never,
    });
    otherKey = (await s.server.storage.apiKeys.create({ name: 'other' })).key;
  });
  after(() => s?.close());

  it('POST /waves/v1/voice-cloning with model lightning-v3.1-pro answers once the clone speaks on lightning_v3.1_pro', async (t) => {
    const started = Date.now();
    const res = await s.api('/waves/v1/voice-cloning', { method: 'POST', body: cloneForm({ displayName: 'Pro', model: 'lightning-v3.1-pro', language: 'en', tags: 'en, pro' }) });
    const { message, data } = (await res.json()) as any;
    assert.equal(res.status, 200, JSON.stringify(data));
    t.diagnostic(`created and ready in ${Date.now() - started} ms`);
    assert.equal(message, 'Voice clone created successfully');
    assert.match(data.voiceId, /^voice_[0-9A-Za-z]{10}$/);
    assert.equal(data._id, data.voiceId);
    assert.equal(data.status, 'completed');
    assert.equal(data.model, 'lightning-v3.1-pro');
    assert.equal(data.cloningType, 'instant');
    assert.deepEqual(data.tags, ['en', 'pro']);
    assert.equal(data.modelIds[0], 'lightning-v3.1-pro');
    assert.ok(data.modelIds.includes('lightning-v3.1'));
    assert.ok(!data.modelIds.some((id: string) => id.startsWith('tts-')), data.modelIds.join());
    // A clip of the new voice, which a client fetches as it is (a data: URL of mp3).
    assert.equal(data.samples.length, 1);
    assert.equal(data.samples[0].text, 'Hello! This is a sample of what I sound like.');
    const clip = await fetch(data.samples[0].audioUrl);
    assert.equal(clip.headers.get('content-type'), 'audio/mpeg');
    const heard = await decodeAudio(new Uint8Array(await clip.arrayBuffer()), { contentType: 'audio/mpeg' });
    assert.ok(heard.samples.length / heard.sampleRate > 1.5, `${heard.samples.length / heard.sampleRate} s`);
    pro = data;
    const speech = await s.api('/waves/v1/tts', { method: 'POST', json: { text: TEXT, voice_id: data.voiceId, model: 'lightning_v3.1_pro', output_format: 'pcm', sample_rate: 24000 } });
    assert.equal(speech.status, 200);
    assert.ok((await speech.arrayBuffer()).byteLength > 2 * 24000 * 0.5);
  });

  it('lists and gets it with and without the trailing slash, by voiceId or _id, with the names of each route', async () => {
    for (const path of ['/waves/v1/voice-cloning', '/waves/v1/voice-cloning/']) {
      const res = await s.api(path);
      assert.equal(res.status, 200);
      const { data } = (await res.json()) as { data: any[] };
      assert.deepEqual(
        data.map((c) => [c.voiceId, c.model, c.cloningType]),
        [[pro.voiceId, 'lightning-v3.1-pro', 'instant']],
      );
    }
    const one = await s.api(`/waves/v1/voice-cloning/${pro.voiceId}`);
    assert.equal(one.status, 200);
    const { success, data } = (await one.json()) as any;
    assert.equal(success, true);
    assert.equal(data.voiceId, pro.voiceId);
    assert.equal(data.status, 'completed');
    // Parley's own routes keep its names; the product-named ones and all of /waves/v1 use the service's.
    for (const [path, model] of [
      ['/api/v1/tts-large/get_cloned_voices', 'tts-v3.1-pro'],
      ['/api/v1/lightning-large/get_cloned_voices', 'lightning-v3.1-pro'],
      ['/waves/v1/tts-large/get_cloned_voices', 'lightning-v3.1-pro'],
    ] as const) {
      const { voices } = (await (await s.api(path)).json()) as { voices: any[] };
      assert.equal(voices[0].model, model, path);
    }
  });

  it('a product-named add_voice answers once the clone can speak; the neutral one as soon as it is stored', async (t) => {
    const neutralStart = Date.now();
    const neutral = await s.api('/api/v1/tts-v3.1/add_voice', { method: 'POST', body: cloneForm({ displayName: 'Neutral' }) });
    const neutralBody = (await neutral.json()) as any;
    const answered = Date.now() - neutralStart;
    assert.equal(neutral.status, 200, JSON.stringify(neutralBody));
    assert.deepEqual([neutralBody.data.model, neutralBody.data.status], ['tts-v3.1', 'processing']);
    assert.equal((await settledClone(s, neutralBody.data.voiceId)).status, 'completed');
    t.diagnostic(`neutral route: answered processing in ${answered} ms, completed after ${Date.now() - neutralStart} ms`);

    const productStart = Date.now();
    const product = await s.api('/api/v1/lightning-v3.1/add_voice', { method: 'POST', body: cloneForm({ displayName: 'Product' }) });
    const productBody = (await product.json()) as any;
    assert.equal(product.status, 200, JSON.stringify(productBody));
    t.diagnostic(`product-named route: answered completed in ${Date.now() - productStart} ms`);
    assert.deepEqual([productBody.data.model, productBody.data.status, productBody.data.modelIds[0]], ['lightning-v3.1', 'completed', 'lightning-v3.1']);
    const speech = await s.api('/api/v1/lightning-v3.1/get_speech', { method: 'POST', json: { text: TEXT, voice_id: productBody.data.voiceId } });
    assert.equal(speech.status, 200);
  });

  it('refuses what the documents refuse, with 400 in the /waves/v1 shape, and stores nothing', async () => {
    // MAX_CLONES are stored by now: the account is full.
    await expectWavesError(await s.api('/waves/v1/voice-cloning/', { method: 'POST', body: cloneForm({ displayName: 'One too many' }) }), 400, /already has 3 cloned voices/);
    const other = (path: string, form: FormData) => fetch(`${s.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${otherKey}` }, body: form });
    await expectWavesError(await other('/waves/v1/voice-cloning', cloneForm({ displayName: 'No file' }, null)), 400, /^No file provided/);
    await expectWavesError(await other('/waves/v1/voice-cloning', cloneForm({ displayName: 'v2', model: 'lightning-v2' })), 400, /^Voice cloning for lightning-v2 is deprecated\. Please use lightning-v3\.1$/);
    await expectWavesError(await other('/waves/v1/voice-cloning', cloneForm({ displayName: 'v9', model: 'lightning-v9' })), 400, /^model must be one of lightning-v3\.1, lightning_v3\.1, lightning-v3\.1-pro/);
    await expectWavesError(await other('/waves/v1/voice-cloning', cloneForm({ displayName: 'Klingon', language: 'tlh' })), 400, /^language must be one of/);
    const text = { bytes: Buffer.from('hello, this is not audio at all '.repeat(100)), name: 'a.wav', type: 'audio/wav' };
    await expectWavesError(await other('/waves/v1/voice-cloning', cloneForm({ displayName: 'Text' }, text)), 400, /not audio/);
    const short = { bytes: readFileSync(corpusFile('en/ljspeech-LJ002-0020.wav')), name: 'short.wav', type: 'audio/wav' };
    await expectWavesError(await other('/waves/v1/voice-cloning', cloneForm({ displayName: 'Short' }, short)), 400, /a voice clone needs at least 3 s of speech/);
    const big = { bytes: new Uint8Array(5 * 1024 * 1024 + 1), name: 'big.wav', type: 'audio/wav' };
    await expectWavesError(await other('/waves/v1/voice-cloning', cloneForm({ displayName: 'Big' }, big)), 400, /^file is larger than the limit of 5 MB/);
    const listed = await fetch(`${s.url}/waves/v1/voice-cloning`, { headers: { authorization: `Bearer ${otherKey}` } });
    assert.deepEqual(((await listed.json()) as { data: unknown[] }).data, []);
  });

  it("a missing or another account's clone is a 404 to get and to delete; the owner's delete removes it", async () => {
    const asOther = { authorization: `Bearer ${otherKey}`, 'content-type': 'application/json' };
    for (const id of ['voice_NOSUCH0000', pro.voiceId]) {
      await expectWavesError(await fetch(`${s.url}/waves/v1/voice-cloning/${id}`, { headers: asOther }), 404, new RegExp(`No cloned voice ${id}`));
      await expectWavesError(await fetch(`${s.url}/waves/v1/voice-cloning/delete`, { method: 'POST', headers: asOther, body: JSON.stringify({ voiceId: id }) }), 404, new RegExp(id));
    }
    await expectWavesError(await s.api('/waves/v1/voice-cloning/delete', { method: 'POST', json: {} }), 400, /voiceId/);
    const deleted = await s.api('/waves/v1/voice-cloning/delete', { method: 'POST', json: { voiceId: pro.voiceId } });
    assert.equal(deleted.status, 200);
    assert.deepEqual(await deleted.json(), { voiceId: pro.voiceId, success: true });
    await expectWavesError(await s.api(`/waves/v1/voice-cloning/${pro.voiceId}`), 404, /No cloned voice/);
  });

  it('documents the clone routes in the OpenAPI document', async () => {
    const doc = (await (await fetch(`${s.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    for (const [path, method] of [
      ['/waves/v1/voice-cloning/', 'post'],
      ['/waves/v1/voice-cloning/', 'get'],
      ['/waves/v1/voice-cloning/{id}', 'get'],
      ['/waves/v1/voice-cloning/delete', 'post'],
    ] as const) {
      assert.ok(doc.paths[path]?.[method], `${method.toUpperCase()} ${path}`);
    }
  });
});

describe('a clone not ready in time', { skip: NEEDS }, () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ engines: true, config: { modelsDir: modelsDirWith([REAL_TEST_MODELS.VAD]), cloning: { readyTimeoutMs: 1 } } as never });
  });
  after(() => s?.close());

  it('is a 500 voice_clone_timeout on /waves/v1/voice-cloning, and nothing is kept', async () => {
    const res = await s.api('/waves/v1/voice-cloning', { method: 'POST', body: cloneForm({ displayName: 'Slow' }) });
    const body = await expectWavesError(res, 500, /^The voice clone was not ready within 0\.001 s; nothing was kept/);
    assert.equal(body.error_code, 'voice_clone_timeout');
    assert.deepEqual(((await (await s.api('/waves/v1/voice-cloning')).json()) as { data: unknown[] }).data, []);
    assert.deepEqual(await (await s.api('/api/v1/tts-large/get_cloned_voices')).json(), { voices: [] });
  });
});
