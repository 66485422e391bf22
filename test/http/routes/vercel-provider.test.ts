/**
 * The Vercel AI SDK provider of the service (github.com/smallest-inc/smallest-ai-vercel-provider at
 * commit 579628e; not published on npm, so its requests are replayed byte for byte as its source
 * builds them), against Parley at its base URL:
 *  - speech: src/smallestai-speech-model.ts lines 65-120 — `POST /waves/v1/tts`, JSON body
 *    {text, voice_id, model, sample_rate (44100 unless set), speed (1.0), language ('auto'),
 *    output_format ('wav' unless set; 'mulaw' sent as 'ulaw'), pronunciation_dicts when given},
 *    headers from src/smallestai-provider.ts lines 97-106 (Bearer key, its User-Agent, X-Source);
 *    the models of src/smallestai-speech-options.ts (lightning_v3.1, lightning_v3.1_pro), the
 *    output formats and sample rates its options schema offers (lines 19-30);
 *  - voice cloning: src/smallestai-voice-clone.ts — create (lines 121-170: multipart file,
 *    displayName, description, accent, tags joined by commas, language, model defaulting to
 *    lightning_v3.1, POST /waves/v1/voice-cloning/), list (lines 173-199, GET …/voice-cloning/),
 *    get (lines 202-228, GET …/voice-cloning/{id}), delete (lines 243-270, POST
 *    …/voice-cloning/delete with JSON {voiceId}); each answer is checked the way its zod schemas
 *    (lines 51-91) read it;
 *  - examples/06-voice-clone.mjs: create → list → speak the new clone at once (mp3) → delete.
 * The provider's own default voice ('sophia') is the service's catalogue; Parley's voice is passed
 * as `voice` instead, as a user of Parley does.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { decodeAudio } from '../../../src/audio/decode.js';
import { corpusFile, modelsDirWith, needs, REAL_TEST_MODELS } from '../../helpers/models.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { womanSample } from './voice-cloning-helpers.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD], corpus: true });
const VOICE = 'espeak-en-us-female';
const TEXT = 'Hello from the Smallest AI Vercel SDK.';

/** What a call of the replay came to: its name, and whether its answer was what the provider reads. */
const tried: { call: string; passed: boolean }[] = [];

describe('the Vercel AI SDK provider (smallest-ai-vercel-provider 579628e), replayed', { skip: NEEDS }, () => {
  let s: TestServer;
  /** The headers of every provider request (src/smallestai-provider.ts lines 97-106; VERSION is package.json's 1.0.0). */
  let providerHeaders: Record<string, string>;

  before(async () => {
    // A creation answers once the clone speaks; the bound is raised so a loaded test machine does not time it out.
    s = await startTestServer({ engines: true, config: { modelsDir: modelsDirWith([REAL_TEST_MODELS.VAD]), cloning: { readyTimeoutMs: 180_000 } } as never });
    providerHeaders = { Authorization: `Bearer ${s.key}`, 'User-Agent': 'smallest-ai-vercel-provider/1.0.0', 'X-Source': 'vercel-sdk' };
  });
  after(() => s?.close());

  /** Runs one call of the replay, counting it. */
  async function call<T>(name: string, run: () => Promise<T>): Promise<T> {
    try {
      const result = await run();
      tried.push({ call: name, passed: true });
      return result;
    } catch (err) {
      tried.push({ call: name, passed: false });
      throw err;
    }
  }

  interface SpeechOptions {
    voice?: string;
    speed?: number;
    language?: string;
    sampleRate?: 8000 | 16000 | 24000 | 44100;
    outputFormat?: 'pcm' | 'mp3' | 'wav' | 'mulaw' | 'alaw' | 'ulaw';
    pronunciationDicts?: string[];
  }

  /** generateSpeech through the provider: the body its doGenerate posts, in its order. */
  function speak(model: string, text: string, options: SpeechOptions = {}): Promise<Response> {
    const outputFormat = options.outputFormat === 'mulaw' ? 'ulaw' : (options.outputFormat ?? 'wav');
    const body: Record<string, unknown> = {
      text,
      voice_id: options.voice ?? VOICE,
      model,
      sample_rate: options.sampleRate ?? 44100,
      speed: options.speed ?? 1.0,
      language: options.language ?? 'auto',
      output_format: outputFormat,
    };
    if (options.pronunciationDicts && options.pronunciationDicts.length > 0) body.pronunciation_dicts = options.pronunciationDicts;
    return fetch(`${s.url}/waves/v1/tts`, { method: 'POST', headers: { ...providerHeaders, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  }

  /** The audio of a 200 answer: its seconds, after checking that its bytes are the format asked for. */
  async function audioSeconds(res: Response, format: 'pcm' | 'mp3' | 'wav' | 'ulaw' | 'alaw', sampleRate: number): Promise<number> {
    const bytes = new Uint8Array(await res.arrayBuffer());
    assert.equal(res.status, 200, Buffer.from(bytes).toString('utf8').slice(0, 300));
    const riff = Buffer.from(bytes.subarray(0, 4)).toString('latin1') === 'RIFF';
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    switch (format) {
      case 'pcm':
        assert.ok(!riff, 'pcm is headerless');
        assert.equal(bytes.byteLength % 2, 0, 'whole 16-bit samples');
        return bytes.byteLength / 2 / sampleRate;
      case 'mp3': {
        assert.equal(res.headers.get('content-type'), 'audio/mpeg');
        const decoded = await decodeAudio(bytes, { contentType: 'audio/mpeg' });
        return decoded.samples.length / decoded.sampleRate;
      }
      case 'wav': {
        assert.ok(riff, 'a WAV file');
        assert.equal(view.getUint32(24, true), sampleRate, 'at the sample rate asked for');
        const decoded = await decodeAudio(bytes, { contentType: 'audio/wav' });
        return decoded.samples.length / decoded.sampleRate;
      }
      case 'ulaw':
      case 'alaw': {
        // G.711: 8-bit samples, in a WAV (format tag 7 for mu-law, 6 for A-law) or bare.
        let data = bytes;
        if (riff) {
          assert.equal(view.getUint16(20, true), format === 'ulaw' ? 7 : 6, 'the WAV format tag of the law asked for');
          assert.equal(view.getUint16(34, true), 8, '8 bits a sample');
          assert.equal(view.getUint32(24, true), sampleRate, 'at the sample rate asked for');
          data = bytes.subarray(44);
        }
        assert.ok(new Set(data).size > 32, 'the samples vary: speech, not silence');
        return data.byteLength / sampleRate;
      }
    }
  }

  it('speaks on both models, in every output format and sample rate it offers, at other speeds, with a language and a dictionary', async () => {
    for (const model of ['lightning_v3.1', 'lightning_v3.1_pro']) {
      await call(`speech ${model} (defaults: wav, 44100 Hz, speed 1, language auto)`, async () => {
        assert.ok((await audioSeconds(await speak(model, TEXT), 'wav', 44100)) > 1);
      });
    }
    // examples/02-tts-options.mjs: mp3 at 24 kHz; then every other format of the options schema.
    const formats: [SpeechOptions['outputFormat'], SpeechOptions['sampleRate'], 'pcm' | 'mp3' | 'wav' | 'ulaw' | 'alaw'][] = [
      ['mp3', 24000, 'mp3'],
      ['pcm', 16000, 'pcm'],
      ['wav', 8000, 'wav'],
      ['mulaw', 8000, 'ulaw'],
      ['ulaw', 8000, 'ulaw'],
      ['alaw', 8000, 'alaw'],
    ];
    const failures: string[] = [];
    for (const [outputFormat, sampleRate, wire] of formats) {
      await call(`speech lightning_v3.1 ${outputFormat} at ${sampleRate} Hz`, async () => {
        assert.ok((await audioSeconds(await speak('lightning_v3.1', TEXT, { outputFormat, sampleRate }), wire, sampleRate!)) > 1);
      }).catch((err: Error) => failures.push(`${outputFormat}: ${err.message}`));
    }
    await call('speech lightning_v3.1 at speed 0.5 and 2 (slower is longer)', async () => {
      const slow = await audioSeconds(await speak('lightning_v3.1', TEXT, { speed: 0.5, outputFormat: 'pcm', sampleRate: 24000 }), 'pcm', 24000);
      const fast = await audioSeconds(await speak('lightning_v3.1', TEXT, { speed: 2, outputFormat: 'pcm', sampleRate: 24000 }), 'pcm', 24000);
      assert.ok(slow > fast * 2, `slow ${slow} s, fast ${fast} s`);
    });
    await call('speech lightning_v3.1_pro with language en', async () => {
      assert.ok((await audioSeconds(await speak('lightning_v3.1_pro', TEXT, { language: 'en', outputFormat: 'pcm', sampleRate: 24000 }), 'pcm', 24000)) > 1);
    });
    await call('speech lightning_v3.1 with pronunciation_dicts', async () => {
      const dict = await s.api('/waves/v1/pronunciation-dicts', { method: 'POST', json: { items: [{ word: 'Vercel', pronunciation: 'very very very long vercel' }] } });
      assert.equal(dict.status, 200);
      const { id } = (await dict.json()) as { id: string };
      const plain = await audioSeconds(await speak('lightning_v3.1', 'Vercel.', { outputFormat: 'pcm', sampleRate: 24000 }), 'pcm', 24000);
      const spelled = await audioSeconds(await speak('lightning_v3.1', 'Vercel.', { outputFormat: 'pcm', sampleRate: 24000, pronunciationDicts: [id] }), 'pcm', 24000);
      assert.ok(spelled > plain + 0.5, `the dictionary's longer pronunciation is spoken: ${spelled} s against ${plain} s`);
    });
    assert.deepEqual(failures, []);
  });

  /** voiceClone.create, as its source builds the form (field order and all). */
  function createClone(options: { displayName: string; description?: string; accent?: string; tags?: string[]; language?: string; model?: string }): Promise<Response> {
    const rel = womanSample();
    const fileName = `e2e-${Date.now()}.wav`;
    const form = new FormData();
    form.set('file', new Blob([readFileSync(corpusFile(rel))], { type: 'audio/wav' }), fileName);
    form.set('displayName', options.displayName);
    if (options.description) form.set('description', options.description);
    if (options.accent) form.set('accent', options.accent);
    if (options.tags && options.tags.length > 0) form.set('tags', options.tags.join(','));
    if (options.language) form.set('language', options.language);
    form.set('model', options.model ?? 'lightning_v3.1');
    return fetch(`${s.url}/waves/v1/voice-cloning/`, { method: 'POST', headers: providerHeaders, body: form });
  }

  /** voiceClone.get: GET …/voice-cloning/{id}, the id URI-encoded. */
  const getClone = (id: string) => fetch(`${s.url}/waves/v1/voice-cloning/${encodeURIComponent(id)}`, { headers: providerHeaders });

  /** voiceClone.delete: POST …/voice-cloning/delete, its JSON Content-Type first. */
  const deleteClone = (voiceId: string) =>
    fetch(`${s.url}/waves/v1/voice-cloning/delete`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...providerHeaders }, body: JSON.stringify({ voiceId }) });

  /** A record as the provider's recordSchema reads it: voiceId, displayName and status strings, the rest typed if present. */
  function assertRecord(record: any): void {
    assert.equal(typeof record.voiceId, 'string');
    assert.equal(typeof record.displayName, 'string');
    assert.equal(typeof record.status, 'string');
    for (const key of ['_id', 'description', 'accent', 'cloningType', 'language', 'createdAt', 'updatedAt'] as const) {
      if (record[key] !== undefined) assert.equal(typeof record[key], 'string', key);
    }
    for (const key of ['tags', 'modelIds'] as const) {
      if (record[key] !== undefined) assert.ok(Array.isArray(record[key]) && record[key].every((v: unknown) => typeof v === 'string'), key);
    }
    if (record.samples !== undefined) {
      assert.ok(Array.isArray(record.samples), 'samples');
      for (const clip of record.samples) for (const key of ['url', 'text']) if (clip[key] !== undefined) assert.equal(typeof clip[key], 'string', `samples[].${key}`);
    }
  }

  /** The record of a create's answer, checked: ready to speak, made for `model` (the product name), which it speaks on first. */
  async function readyClone(res: Response, model: string): Promise<{ voiceId: string; _id: string }> {
    const body = (await res.json()) as any;
    assert.equal(res.status, 200, JSON.stringify(body));
    assertRecord(body.data);
    assert.equal(body.data.status, 'completed');
    assert.equal(body.data.model, model);
    assert.equal(body.data.modelIds[0], model);
    return body.data;
  }

  it('creates a clone, lists it, gets it, speaks it at once, and deletes it (examples/06-voice-clone.mjs)', async (t) => {
    const started = Date.now();
    const created = await call('voiceClone.create (model lightning_v3.1)', async () => {
      const options = { displayName: `e2e-clone-${Date.now()}`, description: 'SDK example clone', accent: 'general', tags: ['en', 'test'], language: 'en' };
      return readyClone(await createClone(options), 'lightning-v3.1');
    });
    t.diagnostic(`create answered in ${Date.now() - started} ms, the clone ready`);

    await call('speech with the new clone at once (lightning_v3.1, mp3)', async () => {
      assert.ok((await audioSeconds(await speak('lightning_v3.1', 'Hello, this is the cloned voice speaking.', { voice: created.voiceId, outputFormat: 'mp3' }), 'mp3', 44100)) > 1);
    });
    await call('voiceClone.list', async () => {
      const res = await fetch(`${s.url}/waves/v1/voice-cloning/`, { headers: providerHeaders });
      assert.equal(res.status, 200);
      const { data } = (await res.json()) as { data: any[] };
      data.forEach(assertRecord);
      const found = data.find((c) => c.voiceId === created.voiceId);
      assert.ok(found, 'the new clone is listed');
      assert.deepEqual(found.tags, ['en', 'test']);
      assert.equal(found.cloningType, 'instant');
    });
    for (const [how, id] of [
      ['voiceId', created.voiceId],
      ['_id', created._id],
    ] as const) {
      await call(`voiceClone.get by ${how}`, async () => {
        const res = await getClone(id);
        assert.equal(res.status, 200);
        const body = (await res.json()) as { success?: boolean; data: any };
        assertRecord(body.data);
        assert.equal(body.data.voiceId, created.voiceId);
      });
    }
    await call('voiceClone.delete', async () => {
      const res = await deleteClone(created.voiceId);
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { voiceId: created.voiceId, success: true });
    });
    await call('voiceClone.get and delete of the deleted clone are 404s, and it no longer speaks', async () => {
      const get = await getClone(created.voiceId);
      assert.equal(get.status, 404);
      assert.deepEqual(Object.keys(await get.json()).sort(), ['error', 'message', 'request_id', 'status']);
      assert.equal((await deleteClone(created.voiceId)).status, 404);
      assert.equal((await speak('lightning_v3.1', TEXT, { voice: created.voiceId })).status, 400);
    });
  });

  it('clones onto the Pro pool and speaks the clone on lightning_v3.1_pro at once', async (t) => {
    const created = await call('voiceClone.create (model lightning-v3.1-pro)', async () => {
      return readyClone(await createClone({ displayName: 'pro clone', language: 'en', model: 'lightning-v3.1-pro' }), 'lightning-v3.1-pro');
    });
    await call('speech with the Pro clone at once (lightning_v3.1_pro)', async () => {
      assert.ok((await audioSeconds(await speak('lightning_v3.1_pro', TEXT, { voice: created.voiceId }), 'wav', 44100)) > 1);
    });
    // The last test: the tally of the whole replay.
    t.diagnostic(`calls tried ${tried.length}, passed ${tried.filter((c) => c.passed).length}: ${tried.map((c) => `${c.passed ? 'ok' : 'FAILED'} ${c.call}`).join('; ')}`);
  });
});
