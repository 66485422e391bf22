/**
 * The official Node SDK (npm `smallestai` 1.0.1) against Parley, unchanged: its `WavesClient`
 * is given Parley's address the way a user gives it (Configuration's `basePath`, and the key as
 * `accessToken`), and every method it has is called: synthesize on both models (with and without
 * a WAV header), synthesizeStream, getWavesVoices on both models, addVoiceToModel,
 * getClonedVoices and deleteVoiceClone. Each answer is checked against what the SDK's types
 * promise (node_modules/smallestai/dist/waves/api.d.ts) and against the audio itself.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { Configuration, WavesClient, type GetClonedVoices200Response, type GetWavesVoices200Response } from 'smallestai';
import { parseWav } from '../../../src/audio/wav.js';
import { corpusDir, corpusFile, modelsDirWith, needs, REAL_TEST_MODELS } from '../../helpers/models.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD], corpus: true });
const VOICE = 'espeak-en-us-female';
const TEXT = 'Hello from the official client. It works unchanged.';

/** Seconds of 16-bit mono PCM at a rate, and its peak level (0..1). */
function pcmStats(bytes: Uint8Array, sampleRate: number): { seconds: number; peak: number } {
  assert.equal(bytes.byteLength % 2, 0, 'whole 16-bit samples');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let peak = 0;
  for (let i = 0; i < bytes.byteLength; i += 2) peak = Math.max(peak, Math.abs(view.getInt16(i, true)) / 32768);
  return { seconds: bytes.byteLength / 2 / sampleRate, peak };
}

/** An SSE body read to its end: the events as {event, data}. */
async function sseOf(stream: Readable): Promise<{ event: string; data: string }[]> {
  let text = '';
  for await (const piece of stream) text += Buffer.from(piece as Buffer).toString('utf8');
  return text
    .split('\n\n')
    .filter((block) => block.trim())
    .map((block) => {
      const field = (name: string) => block.split('\n').find((line) => line.startsWith(`${name}:`))?.slice(name.length + 1).trim() ?? '';
      return { event: field('event'), data: field('data') };
    });
}

/** The longest labelled adult sample of a gender in the corpus (clean read speech, one speaker). */
function adultSample(gender: 'female' | 'male'): string {
  const entries = readFileSync(`${corpusDir}/manifest.jsonl`, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { file: string; kind: string; gender: string | null; age: string | null; duration_s: number });
  const longest = entries.filter((e) => e.kind === 'age_gender' && e.gender === gender && Number(e.age) >= 18).sort((a, b) => b.duration_s - a.duration_s)[0];
  assert.ok(longest, `the corpus has an adult ${gender} sample`);
  return longest.file;
}

describe('the official Node SDK (smallestai 1.0.1), unchanged', { skip: NEEDS }, () => {
  let s: TestServer;
  let client: WavesClient;

  before(async () => {
    s = await startTestServer({ engines: true, config: { modelsDir: modelsDirWith([REAL_TEST_MODELS.VAD]) } as never });
    // As a user would: the server's address as basePath, the key as the bearer token.
    client = new WavesClient(new Configuration({ basePath: s.url, accessToken: s.key }));
  });
  after(() => s?.close());

  for (const model of ['lightning', 'lightning-large'] as const) {
    it(`synthesize('${model}') with a WAV header: one WAV file at the requested rate, holding speech`, async () => {
      const { data } = await client.synthesize(model, { text: TEXT, voice_id: VOICE, add_wav_header: true, sample_rate: 16000 });
      // Typed ArrayBuffer; with a header the SDK builds the file itself (wavefile) and hands back its Uint8Array.
      assert.ok(data instanceof ArrayBuffer || ArrayBuffer.isView(data), 'binary data');
      const bytes = new Uint8Array(data);
      assert.equal(new DataView(bytes.buffer, bytes.byteOffset).getUint16(22, true), 1, 'mono');
      const wav = parseWav(bytes);
      assert.equal(wav.sampleRate, 16000);
      const seconds = wav.samples.length / wav.sampleRate;
      assert.ok(seconds > 1.5 && seconds < 10, `${seconds} s of speech for a two-sentence text`);
    });

    it(`synthesize('${model}') without a header: raw 16-bit PCM at the default 24 kHz`, async () => {
      const { data } = await client.synthesize(model, { text: TEXT, voice_id: VOICE, add_wav_header: false });
      assert.ok(data instanceof ArrayBuffer, 'an ArrayBuffer, as typed');
      const bytes = new Uint8Array(data);
      assert.notEqual(Buffer.from(bytes.subarray(0, 4)).toString('latin1'), 'RIFF', 'no header');
      const { seconds, peak } = pcmStats(bytes, 24000);
      assert.ok(seconds > 1.5 && seconds < 10, `${seconds} s`);
      assert.ok(peak > 0.05, `audible (peak ${peak})`);
    });

    it(`getWavesVoices('${model}'): {voices: [{voiceId, displayName, tags}]}, answered as deprecated`, async () => {
      const res = await client.getWavesVoices(model);
      assert.equal(res.status, 200);
      assert.equal(res.headers.deprecation, 'true');
      const body = res.data as GetWavesVoices200Response;
      assert.ok(body.voices && body.voices.length > 0);
      for (const v of body.voices) {
        assert.equal(typeof v.voiceId, 'string');
        assert.equal(typeof v.displayName, 'string');
        assert.ok(Array.isArray(v.tags?.language));
      }
      assert.ok(body.voices.some((v) => v.voiceId === VOICE));
    });
  }

  it('synthesizeStream: lightning-large/stream as Server-Sent Events whose chunks are the audio', async () => {
    const res = await client.synthesizeStream({ text: TEXT, voice_id: VOICE, sample_rate: 24000 });
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /^text\/event-stream/);
    assert.equal(res.headers.deprecation, 'true');
    const events = await sseOf(res.data as unknown as Readable);
    // The service's frames of today on a product name: event: audio chunks, then an unnamed {"status": "200", "done": true}.
    const chunks = events.filter((e) => e.event === 'audio');
    assert.ok(chunks.length > 1, `${chunks.length} chunks`);
    assert.deepEqual(JSON.parse(events.at(-1)!.data), { status: '200', done: true });
    const audio = Buffer.concat(chunks.map((e) => Buffer.from(e.data.startsWith('{') ? (JSON.parse(e.data) as { audio: string }).audio : e.data, 'base64')));
    const { seconds, peak } = pcmStats(audio, 24000);
    assert.ok(seconds > 1.5 && peak > 0.05, `${seconds} s, peak ${peak}`);
  });

  it('a refused request reaches the caller as the error the SDK types describe ({error, message})', async () => {
    await assert.rejects(client.getWavesVoices('lightning-v9' as never), (err: any) => {
      assert.equal(err.response.status, 404);
      assert.equal(typeof err.response.data.error, 'string');
      assert.equal(typeof err.response.data.message, 'string');
      return true;
    });
  });

  it('addVoiceToModel, getClonedVoices, the clone speaking, deleteVoiceClone', async () => {
    const sample = adultSample('female');
    const file = new File([readFileSync(corpusFile(sample))], sample.split('/').pop()!, { type: 'audio/wav' });
    const added = await client.addVoiceToModel('SDK reader', file);
    assert.equal(added.status, 200);
    assert.equal(added.data.message, 'Voice clone created successfully');
    const { voiceId, model, status } = added.data.data;
    assert.match(voiceId, /^voice_/);
    // The SDK's routes are product-named: the service's model name, and the clone ready when the answer comes.
    assert.equal(model, 'lightning-large');
    assert.equal(status, 'completed');

    // Polled the way a client of the SDK would, until the clone is no longer processing.
    let listed: NonNullable<GetClonedVoices200Response['voices']>[number] | undefined;
    for (const deadline = Date.now() + 120_000; ; ) {
      const res = await client.getClonedVoices();
      assert.equal(res.status, 200);
      listed = (res.data as GetClonedVoices200Response).voices?.find((v) => v.voiceId === voiceId);
      assert.ok(listed, 'the new clone is listed');
      if (listed.status !== 'processing') break;
      assert.ok(Date.now() < deadline, 'clone settled within 2 minutes');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(listed.status, 'completed');
    assert.equal(listed.displayName, 'SDK reader');
    assert.equal(typeof listed.createdAt, 'string');

    const { data } = await client.synthesize('lightning-large', { text: TEXT, voice_id: voiceId, add_wav_header: false });
    const { seconds, peak } = pcmStats(new Uint8Array(data), 24000);
    assert.ok(seconds > 1.5 && peak > 0.05, `the clone speaks: ${seconds} s, peak ${peak}`);

    const deleted = await client.deleteVoiceClone({ voiceId });
    assert.equal(deleted.status, 200);
    assert.deepEqual(deleted.data, { voiceId, success: true });
    const after = (await client.getClonedVoices()).data as GetClonedVoices200Response;
    assert.ok(!after.voices?.some((v) => v.voiceId === voiceId), 'gone from the list');
    await assert.rejects(client.deleteVoiceClone({ voiceId }), (err: any) => err.response.status === 404);
  });
});
