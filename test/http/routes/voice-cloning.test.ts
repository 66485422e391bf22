/**
 * Voice cloning through real HTTP: add_voice from corpus samples of a woman and a man,
 * the clones speaking on every generation, the built-in match's pitch against its sample, the
 * 400s, privacy between accounts (REST and WebSocket), and delete.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { decodeAudio } from '../../../src/audio/decode.js';
import { parseWav } from '../../../src/audio/wav.js';
import { measurePitch, semitonesBetween } from '../../../src/synthesis/voice-profile.js';
import { corpusDir, corpusFile, modelsDirWith, needs, REAL_TEST_MODELS } from '../../helpers/models.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { allSseEvents, chunkBytes } from '../../helpers/sse.js';
import { connect, wsUrl } from '../../helpers/websocket.js';
import { settledClone } from './voice-cloning-helpers.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD], corpus: true });

interface ManifestEntry {
  file: string;
  kind: string;
  gender: string | null;
  age: string | null;
  duration_s: number;
}

/** The corpus labels, read when a test needs them (a clone without the corpus skips instead). */
function manifest(): ManifestEntry[] {
  return readFileSync(`${corpusDir}/manifest.jsonl`, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as ManifestEntry);
}

/** The longest labelled adult sample of a gender (speechocean762: clean read speech, one speaker). */
function adultSample(gender: 'female' | 'male'): string {
  const candidates = manifest().filter((e) => e.kind === 'age_gender' && e.gender === gender && Number(e.age) >= 18);
  const longest = candidates.sort((a, b) => b.duration_s - a.duration_s)[0];
  assert.ok(longest, `the corpus has an adult ${gender} sample`);
  return longest.file;
}

const TEXT = 'Good morning. This is a short test of the cloned voice, spoken at an easy pace.';
const MAX_CLONES = 2;

interface FilePart {
  bytes: Uint8Array;
  type: string;
  name: string;
}

describe('POST /api/v1/{tts-large,tts-v3.1}/add_voice', { skip: NEEDS }, () => {
  let s: TestServer;
  let otherKey: string;
  const clones: Record<'female' | 'male', { voiceId: string; samplePitch: number }> = {} as never;

  before(async () => {
    s = await startTestServer({
      engines: true,
      config: { modelsDir: modelsDirWith(['silero-vad-v5']), cloning: { maxClonesPerAccount: MAX_CLONES } } as never,
    });
    otherKey = (await s.server.storage.apiKeys.create({ name: 'other' })).key;
  });
  after(() => s?.close());

  async function addVoice(model: string, fields: Record<string, string>, file?: FilePart, key = s.key): Promise<{ status: number; body: any }> {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    if (file) form.append('file', new Blob([file.bytes as Uint8Array<ArrayBuffer>], { type: file.type }), file.name);
    const res = await fetch(`${s.url}/api/v1/${model}/add_voice`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    return { status: res.status, body: await res.json() };
  }

  const wavFile = (rel: string): FilePart => ({ bytes: readFileSync(corpusFile(rel)), type: 'audio/wav', name: rel.split('/').pop()! });

  async function expect400(result: Promise<{ status: number; body: any }>, pattern: RegExp): Promise<void> {
    const { status, body } = await result;
    assert.equal(status, 400, JSON.stringify(body));
    assert.equal(body.error, 'InvalidRequest');
    assert.match(body.message, pattern);
  }

  /** Median F0 of speech in the given bytes, with the project's pitch tracker. */
  async function medianF0(bytes: Uint8Array, contentType: string): Promise<number> {
    const audio = await decodeAudio(bytes, { contentType });
    return (await measurePitch(audio.samples, audio.sampleRate)).medianHz;
  }

  async function getSpeech(model: string, voiceId: string, key = s.key): Promise<Response> {
    return fetch(`${s.url}/api/v1/${model}/get_speech`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text: TEXT, voice_id: voiceId, output_format: 'wav', sample_rate: 24000 }),
    });
  }

  it('clones a woman through tts-large and a man through tts-v3.1', async () => {
    for (const [gender, model] of [
      ['female', 'tts-large'],
      ['male', 'tts-v3.1'],
    ] as const) {
      const sample = wavFile(adultSample(gender));
      const { status, body } = await addVoice(model, { displayName: `Reader (${gender})`, tags: 'calm, clear', accent: 'mandarin' }, sample);
      assert.equal(status, 200, JSON.stringify(body));
      assert.equal(body.message, 'Voice clone created successfully');
      assert.match(body.data.voiceId, /^voice_[0-9A-Za-z]{10}$/);
      assert.deepEqual(
        { ...body.data, voiceId: undefined, createdAt: undefined },
        { voiceId: undefined, displayName: `Reader (${gender})`, model, status: 'processing', language: 'en', createdAt: undefined },
      );
      assert.ok(Math.abs(Date.parse(body.data.createdAt) - Date.now()) < 120_000);
      assert.equal((await settledClone(s, body.data.voiceId)).status, 'completed');
      clones[gender] = { voiceId: body.data.voiceId, samplePitch: await medianF0(sample.bytes, 'audio/wav') };
    }
  });

  it('lists the clones with their engine and the measured profile', async () => {
    const res = await s.api('/api/v1/tts-large/get_cloned_voices');
    assert.equal(res.status, 200);
    const { voices } = await res.json();
    assert.equal(voices.length, 2);
    const byId = new Map(voices.map((v: any) => [v.voiceId, v]));
    for (const gender of ['female', 'male'] as const) {
      const v: any = byId.get(clones[gender].voiceId);
      assert.equal(v.engine, 'espeak-ng-matched');
      assert.deepEqual(v.tags, ['calm', 'clear']);
      assert.equal(v.accent, 'mandarin');
      assert.equal(v.status, 'completed');
      assert.equal(v.profile.genderClass, gender);
      assert.ok(v.profile.speechSeconds >= 3 && v.profile.speechSeconds <= 15, `speech ${v.profile.speechSeconds}`);
      assert.ok(v.profile.speakingRate > 1 && v.profile.speakingRate < 10, `rate ${v.profile.speakingRate}`);
      assert.ok(v.profile.pitchRangeSemitones > 0, `range ${v.profile.pitchRangeSemitones}`);
      // The profile's median is the sample's, measured on its speech only.
      assert.ok(Math.abs(semitonesBetween(v.profile.medianF0Hz, clones[gender].samplePitch)) < 1, `${v.profile.medianF0Hz} vs ${clones[gender].samplePitch}`);
    }
  });

  it("each clone speaks on tts-large stream and tts-v2/tts-v3.1 get_speech, within 2 semitones of its sample's median F0", async (t) => {
    const spoken: Record<string, number[]> = { female: [], male: [] };
    for (const gender of ['female', 'male'] as const) {
      const { voiceId, samplePitch } = clones[gender];
      const stream = await s.api('/api/v1/tts-large/stream', { method: 'POST', json: { text: TEXT, voice_id: voiceId, output_format: 'pcm', sample_rate: 24000 } });
      assert.equal(stream.status, 200);
      const events = await allSseEvents(stream);
      assert.equal(events.at(-1)!.event, 'complete');
      const pcm = chunkBytes(events).bytes;
      assert.ok(pcm.length > 24000 * 2, 'more than a second of audio');
      spoken[gender]!.push(await medianF0(pcm, 'audio/pcm;rate=24000'));

      for (const model of ['tts-v2', 'tts-v3.1']) {
        const res = await getSpeech(model, voiceId);
        assert.equal(res.status, 200, await res.clone().text());
        const bytes = new Uint8Array(await res.arrayBuffer());
        const wav = parseWav(bytes);
        assert.equal(wav.sampleRate, 24000);
        assert.ok(wav.samples.length > 24000, 'more than a second of audio');
        spoken[gender]!.push(await medianF0(bytes, 'audio/wav'));
      }
      t.diagnostic(`${gender}: sample ${samplePitch.toFixed(1)} Hz, clone ${spoken[gender]!.map((f) => f.toFixed(1)).join(' / ')} Hz`);
      for (const f0 of spoken[gender]!) {
        const error = semitonesBetween(f0, samplePitch);
        assert.ok(Math.abs(error) <= 2, `${gender} clone speaks at ${f0.toFixed(1)} Hz, its sample at ${samplePitch.toFixed(1)} Hz (${error.toFixed(2)} st)`);
      }
    }
    // Clearly higher: at least 5 semitones (a fourth) between the medians.
    assert.ok(semitonesBetween(spoken.female![0]!, spoken.male![0]!) >= 5, `woman ${spoken.female![0]} Hz, man ${spoken.male![0]} Hz`);
  });

  it('each clone speaks on the tts-v3.1 WebSocket at its pitch; on another account\'s socket it is an error and the socket goes on', async () => {
    const url = wsUrl(s.url, '/api/v1/tts-v3.1/get_speech/stream');
    const owner = await connect(url, { authorization: `Bearer ${s.key}` });
    try {
      for (const gender of ['female', 'male'] as const) {
        const { voiceId, samplePitch } = clones[gender];
        owner.send({ request_id: gender, voice_id: voiceId, text: TEXT, sample_rate: 24000 });
        const messages = await owner.until((all) => all.some((m) => m.request_id === gender && (m.status === 'complete' || m.status === 'error')), 60_000);
        const mine = messages.filter((m) => m.request_id === gender);
        assert.equal(mine.at(-1).status, 'complete', JSON.stringify(mine.at(-1)));
        const pcm = Buffer.concat(mine.filter((m) => m.status === 'chunk').map((m) => Buffer.from(m.data.audio, 'base64')));
        assert.ok(pcm.length > 24000 * 2, 'more than a second of audio');
        const f0 = await medianF0(pcm, 'audio/pcm;rate=24000');
        assert.ok(Math.abs(semitonesBetween(f0, samplePitch)) <= 2, `${gender} clone speaks at ${f0.toFixed(1)} Hz over the socket, its sample at ${samplePitch.toFixed(1)} Hz`);
      }
    } finally {
      owner.close();
    }

    const other = await connect(url, { authorization: `Bearer ${otherKey}` });
    try {
      other.send({ request_id: 'theirs', voice_id: clones.female.voiceId, text: TEXT });
      await other.until((all) => all.some((m) => m.request_id === 'theirs'));
      const refused = other.messages.find((m) => m.request_id === 'theirs');
      assert.equal(refused.status, 'error');
      assert.match(refused.message, new RegExp(`voice_id "${clones.female.voiceId}" is not a voice of tts-v3.1`));
      other.send({ request_id: 'builtin', voice_id: 'espeak-en-us-female', text: 'Still here.' });
      await other.until((all) => all.some((m) => m.request_id === 'builtin' && m.status === 'complete'));
    } finally {
      other.close();
    }
  });

  it('answers 400 naming the problem, and stores nothing', async () => {
    const sample = wavFile(adultSample('female'));
    // Another account, which has no clones: the account holding MAX_CLONES is refused before anything is read.
    const add = (fields: Record<string, string>, file?: FilePart) => addVoice('tts-large', fields, file, otherKey);
    await expect400(add({ displayName: 'No file' }), /^file is required/);
    await expect400(add({ displayName: 'Text' }, { bytes: Buffer.from('hello, this is not audio at all '.repeat(100)), type: 'audio/wav', name: 'a.wav' }), /not audio/);
    const short = wavFile('en/ljspeech-LJ002-0020.wav');
    await expect400(add({ displayName: 'Short' }, short), /speech; a voice clone needs at least 3 s of speech/);
    const big = new Uint8Array(5 * 1024 * 1024 + 1);
    big.set(sample.bytes.subarray(0, 44));
    await expect400(add({ displayName: 'Big' }, { bytes: big, type: 'audio/wav', name: 'big.wav' }), /^file is larger than the limit of 5 MB/);
    await expect400(add({}, sample), /^displayName is required/);
    await expect400(add({ displayName: 'x'.repeat(501) }, sample), /^displayName must be 1 to 500 characters/);
    await expect400(add({ displayName: 'Klingon', language: 'tlh' }, sample), /^language must be one of/);
    await expect400(add({ displayName: 'Extra', voiceStyle: 'x' }, sample), /^Unknown form field/);
    const json = await s.api('/api/v1/tts-large/add_voice', { method: 'POST', json: { displayName: 'x' } });
    assert.equal(json.status, 400);
    assert.match((await json.json()).message, /multipart\/form-data/);
    await expect400(addVoice('tts-v3.1', { displayName: 'One too many' }, sample), /already has 2 cloned voices, the most it may keep \(2\)/);

    const listed = await (await s.api('/api/v1/tts-large/get_cloned_voices')).json();
    assert.equal(listed.voices.length, MAX_CLONES);
    const samples = await s.server.storage.store.db.selectFrom('cloned_voice_samples').select('voice_id').execute();
    assert.equal(samples.length, MAX_CLONES);
  });

  it('another account can neither see, use nor delete a clone', async () => {
    const { voiceId } = clones.female;
    const list = await fetch(`${s.url}/api/v1/tts-large/get_cloned_voices`, { headers: { authorization: `Bearer ${otherKey}` } });
    assert.deepEqual(await list.json(), { voices: [] });
    const speech = await getSpeech('tts-v2', voiceId, otherKey);
    assert.equal(speech.status, 400);
    assert.match((await speech.json()).message, new RegExp(`voice_id "${voiceId}" is not a voice of tts-v2`));
    const del = await fetch(`${s.url}/api/v1/tts-large`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${otherKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ voiceId }),
    });
    assert.equal(del.status, 404);
    assert.equal((await getSpeech('tts-v2', voiceId)).status, 200, 'the owner still can');
  });

  it('after delete the clone and its sample are gone and it no longer speaks', async () => {
    const { voiceId } = clones.male;
    const del = await s.api('/api/v1/tts-large', { method: 'DELETE', json: { voiceId } });
    assert.equal(del.status, 200);
    assert.deepEqual(await del.json(), { voiceId, success: true });
    const speech = await getSpeech('tts-v3.1', voiceId);
    assert.equal(speech.status, 400);
    assert.match((await speech.json()).message, /is not a voice of tts-v3\.1/);
    const samples = await s.server.storage.store.db.selectFrom('cloned_voice_samples').select('voice_id').where('voice_id', '=', voiceId).execute();
    assert.deepEqual(samples, []);
    const listed = await (await s.api('/api/v1/tts-large/get_cloned_voices')).json();
    assert.deepEqual(listed.voices.map((v: any) => v.voiceId), [clones.female.voiceId]);
  });

  it('documents both routes in the OpenAPI document', async () => {
    const doc = await (await fetch(`${s.url}/openapi.json`)).json();
    for (const model of ['tts-large', 'tts-v3.1']) assert.ok(doc.paths[`/api/v1/${model}/add_voice`]?.post, model);
  });
});
