/**
 * A cloned voice on POST /v1/audio/speech through the official `openai` package: its `voice_…` id
 * (as a name and as `{id}`) speaks for its owner, and is an unknown voice (400 naming `voice`) for
 * another account. The clone is made from a corpus sample with the built-in match (silero VAD).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { corpusFile, modelsDirWith, needs, REAL_TEST_MODELS } from '../../../helpers/models.js';
import { startTestServer, type TestServer } from '../../../helpers/server.js';
import { settledClone } from '../voice-cloning-helpers.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD], corpus: true });
const SAMPLE = 'age_gender/speechocean762-spk0482-004820114.wav';

describe('POST /v1/audio/speech with a cloned voice', { skip: NEEDS }, () => {
  let s: TestServer;
  let voiceId: string;
  let owner: OpenAI;
  let stranger: OpenAI;

  before(async () => {
    s = await startTestServer({ engines: true, config: { modelsDir: modelsDirWith([REAL_TEST_MODELS.VAD]), logLevel: 'warn' } });
    const form = new FormData();
    form.append('displayName', 'Reader');
    form.append('file', new Blob([readFileSync(corpusFile(SAMPLE))], { type: 'audio/wav' }), 'sample.wav');
    const res = await fetch(`${s.url}/api/v1/tts-large/add_voice`, { method: 'POST', headers: { authorization: `Bearer ${s.key}` }, body: form });
    assert.equal(res.status, 200);
    voiceId = ((await res.json()) as { data: { voiceId: string } }).data.voiceId;
    assert.equal((await settledClone(s, voiceId)).status, 'completed');
    owner = new OpenAI({ apiKey: s.key, baseURL: `${s.url}/v1`, maxRetries: 0 });
    const otherKey = (await s.server.storage.apiKeys.create({ name: 'other' })).key;
    stranger = new OpenAI({ apiKey: otherKey, baseURL: `${s.url}/v1`, maxRetries: 0 });
  });
  after(() => s?.close());

  for (const form of ['name', '{id}'] as const) {
    it(`the owner's clone speaks, given as ${form}: 24 kHz PCM of the text's length, X-Voice-Id naming the clone`, async () => {
      const voice = (form === 'name' ? voiceId : { id: voiceId }) as OpenAI.Audio.SpeechCreateParams['voice'];
      const response = await owner.audio.speech.create({ model: 'tts-1', voice, input: 'Good morning, this is my own voice.', response_format: 'pcm' });
      assert.equal(response.headers.get('x-voice-id'), voiceId);
      const bytes = new Uint8Array(await response.arrayBuffer());
      const seconds = bytes.length / 2 / 24000;
      assert.ok(seconds > 1 && seconds < 6, `${seconds} s`);
      const samples = new Int16Array(bytes.buffer, bytes.byteOffset, bytes.length >> 1);
      assert.ok(samples.some((v) => Math.abs(v) > 3000), 'the audio is not silent');
    });
  }

  it("another account's request for the clone is a BadRequestError naming voice", async () => {
    await assert.rejects(stranger.audio.speech.create({ model: 'tts-1', voice: voiceId, input: 'Hello.' }), (err: unknown) => {
      assert.ok(err instanceof OpenAI.BadRequestError, String(err));
      assert.equal((err.error as { param: string }).param, 'voice');
      assert.match(err.message, /not a cloned voice of this account/);
      return true;
    });
  });

  it('an unknown model is still a 400 naming model, clone or not', async () => {
    await assert.rejects(owner.audio.speech.create({ model: 'tts-9', voice: voiceId, input: 'Hello.' }), (err: unknown) => {
      assert.ok(err instanceof OpenAI.BadRequestError, String(err));
      assert.equal((err.error as { param: string }).param, 'model');
      return true;
    });
  });
});
