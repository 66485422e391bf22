/**
 * Voice cloning with a zero-shot pack, through real HTTP: the hand-made ZipVoice
 * fixture (test/fixtures/models/fake-zipvoice-envelope-24k) runs sherpa-onnx's real ZipVoice code
 * path — prompt features from the reference, encoder, flow-matching decoder, Vocos inverse STFT.
 * Its output is a steady comb whose spectral envelope is the reference's mean log-mel spectrum,
 * so a clone whose sample is the same speech played 1.25 times higher speaks 1.25 times higher:
 * the stored sample is what synthesis conditions on. Also: the clone's status moves from
 * `processing` to `completed` (or `failed`, with the reason), concurrent add_voice requests
 * cannot pass the account's limit, and without a zero-shot pack for its language a clone gets the
 * built-in match. The Pocket TTS fixture (fake-pocket-tts-tone-24k) speaks a tone whose pitch is
 * set by the mean level of its reference: computed from the stored sample, it must match.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { encodeInt16 } from '../../../src/audio/encode.js';
import { parseWav, WavFormatTag, wavFile } from '../../../src/audio/wav.js';
import { powerSpectrum } from '../../../src/voice-analysis/fft.js';
import { corpusFile, modelsDirWith, needs, REAL_TEST_MODELS } from '../../helpers/models.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { allSseEvents, chunkBytes } from '../../helpers/sse.js';
import { connect, wsUrl } from '../../helpers/websocket.js';
import { settledClone, womanSample } from './voice-cloning-helpers.js';

const ZIPVOICE = 'fake-zipvoice-envelope-24k';
const POCKET = 'fake-pocket-tts-tone-24k';
const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH, ZIPVOICE], corpus: true });
const TEXT = 'Good morning. This is a short test of the cloned voice.';
const MAX_CLONES = 4;

/** The same samples labelled with a rate `factor` times higher: every frequency moves up by `factor`. */
function raised(wav: Uint8Array, factor: number): Uint8Array {
  const { samples, sampleRate } = parseWav(wav);
  return wavFile(encodeInt16(samples), { sampleRate: Math.round(sampleRate * factor), channels: 1, bitsPerSample: 16, formatTag: WavFormatTag.pcm });
}

/** Log power of the mean spectrum (4096-sample Hann frames, 5.9 Hz bins at 24 kHz), by FFT bin. */
function logSpectrum(samples: Float32Array): Float64Array {
  const n = 4096;
  const mean = new Float64Array(n / 2 + 1);
  const frame = new Float64Array(n);
  for (let at = 0; at + n <= samples.length; at += n / 2) {
    for (let i = 0; i < n; i++) frame[i] = samples[at + i]! * (0.5 - 0.5 * Math.cos((2 * Math.PI * i) / n));
    powerSpectrum(frame, n).forEach((p, k) => (mean[k]! += p));
  }
  return mean.map((p) => Math.log(p + 1e-12));
}

/**
 * The factor by which the spectral envelope of `b` is `a`'s stretched in frequency: the scale s
 * (0.8 to 1.6) whose stretch of `a` correlates best with `b` over 200 Hz to 3 kHz. The fixture
 * speaks a comb at multiples of 93.75 Hz, so both are read at those lines.
 */
function envelopeScale(a: Float32Array, b: Float32Array, sampleRate: number): number {
  const la = logSpectrum(a);
  const lb = logSpectrum(b);
  const binHz = sampleRate / 4096;
  const at = (l: Float64Array, hz: number) => {
    // Linear between the comb lines around hz.
    const line = hz / 93.75;
    const lo = Math.floor(line);
    const frac = line - lo;
    const value = (j: number) => l[Math.round((j * 93.75) / binHz)]!;
    return value(lo) * (1 - frac) + value(lo + 1) * frac;
  };
  const lines = [];
  for (let j = 3; j * 93.75 <= 3000; j++) lines.push(j * 93.75);
  let best = { scale: 1, r: -Infinity };
  for (let scale = 0.8; scale <= 1.6; scale += 0.005) {
    const xs = lines.map((f) => at(la, f / scale));
    const ys = lines.map((f) => at(lb, f));
    const r = correlation(xs, ys);
    if (r > best.r) best = { scale, r };
  }
  return best.scale;
}

function correlation(xs: number[], ys: number[]): number {
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < xs.length; i++) {
    sxy += (xs[i]! - mx) * (ys[i]! - my);
    sxx += (xs[i]! - mx) ** 2;
    syy += (ys[i]! - my) ** 2;
  }
  return sxy / Math.sqrt(sxx * syy);
}

interface FilePart {
  bytes: Uint8Array;
  name: string;
}

async function addVoice(s: Pick<TestServer, 'url' | 'key'>, fields: Record<string, string>, file: FilePart, model = 'tts-large'): Promise<{ status: number; body: any }> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append('file', new Blob([file.bytes as Uint8Array<ArrayBuffer>], { type: 'audio/wav' }), file.name);
  const res = await fetch(`${s.url}/api/v1/${model}/add_voice`, { method: 'POST', headers: { authorization: `Bearer ${s.key}` }, body: form });
  return { status: res.status, body: await res.json() };
}

async function getSpeech(s: TestServer, model: string, voiceId: string): Promise<Response> {
  return s.api(`/api/v1/${model}/get_speech`, { method: 'POST', json: { text: TEXT, voice_id: voiceId, output_format: 'wav', sample_rate: 24000 } });
}

describe('voice cloning with a zero-shot pack (ZipVoice fixture)', { skip: NEEDS }, () => {
  let s: TestServer;
  let sample: FilePart;
  const clones: Record<'plain' | 'raised' | 'transcribed', string> = {} as never;

  before(async () => {
    s = await startTestServer({
      engines: true,
      config: {
        modelsDir: modelsDirWith([REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH, ZIPVOICE]),
        cloning: { maxClonesPerAccount: MAX_CLONES, maxConcurrent: 4 },
      } as never,
    });
    const rel = womanSample();
    sample = { bytes: readFileSync(corpusFile(rel)), name: rel.split('/').pop()! };
  });
  after(() => s?.close());

  it('loads the fixture as a zero-shot pack with no voices of its own', async () => {
    const report = await (await s.api('/api/v1/admin/models')).json();
    assert.deepEqual(report.skipped, []);
    assert.deepEqual(
      report.loaded.find((p: any) => p.id === ZIPVOICE),
      { id: ZIPVOICE, kind: 'tts-zipvoice', languages: ['en'] },
    );
    const voices = (await (await s.api('/api/v1/tts-v2/get_voices')).json()).voices;
    assert.ok(voices.every((v: any) => !v.voiceId.includes('zipvoice')));
  });

  it('a new clone is processing in the response, then completed with engine zipvoice', async () => {
    for (const [name, bytes, transcript] of [
      ['plain', sample.bytes, 'The reader says a few clear sentences.'],
      ['raised', raised(sample.bytes, 1.25), 'The reader says a few clear sentences.'],
    ] as const) {
      const { status, body } = await addVoice(s, { displayName: `Reader ${name}`, transcript }, { bytes, name: `${name}.wav` });
      assert.equal(status, 200, JSON.stringify(body));
      assert.equal(body.data.status, 'processing');
      const listed = await settledClone(s, body.data.voiceId);
      assert.equal(listed.status, 'completed', JSON.stringify(listed));
      assert.equal(listed.engine, 'zipvoice');
      assert.ok(listed.profile.medianF0Hz > 0, 'the profile is measured as for every clone');
      clones[name] = body.data.voiceId;
    }
    const row = await s.server.storage.clonedVoices.findForAccount(s.accountId, clones.plain);
    assert.deepEqual(JSON.parse(row!.engine_settings!), { pack: ZIPVOICE, referenceText: 'The reader says a few clear sentences.' });
  });

  it("without a transcript, the sample is transcribed by Parley's own recogniser", async () => {
    const { status, body } = await addVoice(s, { displayName: 'Reader transcribed' }, sample, 'tts-v3.1');
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body.data.status, 'processing');
    const listed = await settledClone(s, body.data.voiceId);
    assert.equal(listed.status, 'completed', JSON.stringify(listed));
    assert.equal(listed.engine, 'zipvoice');
    const row = await s.server.storage.clonedVoices.findForAccount(s.accountId, body.data.voiceId);
    const { referenceText } = JSON.parse(row!.engine_settings!);
    assert.match(referenceText, /[a-z]{2,}/i, 'the recogniser heard words');
    assert.equal(row!.transcript, referenceText);
    clones.transcribed = body.data.voiceId;
  });

  it('speaks through tts-large stream, tts-v2/tts-v3.1 get_speech and the tts-v3.1 WebSocket, in the voice of its stored sample', async (t) => {
    const spoken: Record<string, Float32Array[]> = {};
    const socket = await connect(wsUrl(s.url, '/api/v1/tts-v3.1/get_speech/stream'), { authorization: `Bearer ${s.key}` });
    t.after(() => socket.close());
    for (const name of ['plain', 'raised', 'transcribed'] as const) {
      const voiceId = clones[name];
      spoken[name] = [];
      const stream = await s.api('/api/v1/tts-large/stream', { method: 'POST', json: { text: TEXT, voice_id: voiceId, output_format: 'pcm', sample_rate: 24000 } });
      assert.equal(stream.status, 200);
      const events = await allSseEvents(stream);
      assert.equal(events.at(-1)!.event, 'complete');
      const pcm = chunkBytes(events).bytes;
      assert.ok(pcm.length > 24000 * 2 * 0.5, 'more than half a second of audio');
      const streamed = new Float32Array(pcm.length / 2);
      const view = new DataView(pcm.buffer, pcm.byteOffset, pcm.byteLength);
      for (let i = 0; i < streamed.length; i++) streamed[i] = view.getInt16(i * 2, true) / 32768;
      spoken[name]!.push(streamed);
      for (const model of ['tts-v2', 'tts-v3.1']) {
        const res = await getSpeech(s, model, voiceId);
        assert.equal(res.status, 200, await res.clone().text());
        const wav = parseWav(new Uint8Array(await res.arrayBuffer()));
        assert.equal(wav.sampleRate, 24000);
        assert.ok(wav.samples.length > 12000, 'more than half a second of audio');
        spoken[name]!.push(wav.samples);
      }
      socket.send({ request_id: name, voice_id: voiceId, text: TEXT, sample_rate: 24000 });
      await socket.until((all) => all.some((m) => m.request_id === name && (m.status === 'complete' || m.status === 'error')), 60_000);
      const messages = socket.messages.filter((m) => m.request_id === name);
      assert.equal(messages.at(-1).status, 'complete', JSON.stringify(messages.at(-1)));
      const socketPcm = Buffer.concat(messages.filter((m) => m.status === 'chunk').map((m) => Buffer.from(m.data.audio, 'base64')));
      assert.ok(socketPcm.length > 24000 * 2 * 0.5, 'more than half a second of audio over the socket');
      spoken[name]!.push(Float32Array.from({ length: socketPcm.length / 2 }, (_, k) => socketPcm.readInt16LE(k * 2) / 32768));
    }
    for (let i = 0; i < 4; i++) {
      // Same speech, one sample 1.25 times higher: only the reference differs between the clones.
      const raisedBy = envelopeScale(spoken.plain![i]!, spoken.raised![i]!, 24000);
      const sameAs = envelopeScale(spoken.plain![i]!, spoken.transcribed![i]!, 24000);
      t.diagnostic(`route ${i}: raised clone's envelope x${raisedBy.toFixed(3)}, transcribed clone's x${sameAs.toFixed(3)}`);
      assert.ok(Math.abs(raisedBy - 1.25) <= 0.06, `the raised sample's clone speaks ${raisedBy.toFixed(3)} times higher, not 1.25`);
      // The same sample with another transcript speaks alike (the fixture ignores the text's words).
      assert.ok(Math.abs(sameAs - 1) <= 0.02, `the same sample's clone speaks ${sameAs.toFixed(3)} times higher, not 1`);
    }
  });

  it('concurrent add_voice requests cannot pass the clone limit', async () => {
    // 3 clones exist; 4 requests race for the last place.
    const results = await Promise.all(
      Array.from({ length: 4 }, (_, i) => addVoice(s, { displayName: `Racer ${i}`, transcript: 'A few words.' }, { bytes: sample.bytes, name: `racer-${i}.wav` })),
    );
    const statuses = results.map((r) => r.status).sort();
    assert.deepEqual(statuses, [200, 400, 400, 400], JSON.stringify(results.map((r) => r.body)));
    for (const r of results.filter((r) => r.status === 400)) assert.match(r.body.message, /the most it may keep \(4\)/);
    const listed = await (await s.api('/api/v1/tts-large/get_cloned_voices')).json();
    assert.equal(listed.voices.length, MAX_CLONES);
    const winner = results.find((r) => r.status === 200)!.body.data.voiceId;
    assert.equal((await settledClone(s, winner)).status, 'completed');
  });
});

describe('voice cloning with a zero-shot pack and no recogniser', { skip: needs({ models: [REAL_TEST_MODELS.VAD, ZIPVOICE], corpus: true }) }, () => {
  let s: TestServer;
  let sample: FilePart;

  before(async () => {
    s = await startTestServer({ engines: true, config: { modelsDir: modelsDirWith([REAL_TEST_MODELS.VAD, ZIPVOICE]) } as never });
    const rel = womanSample();
    sample = { bytes: readFileSync(corpusFile(rel)), name: rel.split('/').pop()! };
  });
  after(() => s?.close());

  it('a clone that cannot be transcribed ends failed, with the reason, and cannot speak', async () => {
    const { status, body } = await addVoice(s, { displayName: 'Untranscribed' }, sample);
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body.data.status, 'processing');
    const listed = await settledClone(s, body.data.voiceId);
    assert.equal(listed.status, 'failed');
    assert.equal(
      listed.error,
      'the voice could not be prepared: the sample could not be transcribed (Transcription is unavailable: no speech recognition model is installed. ' +
        'Install it with `parley models pull sherpa-onnx-moonshine-base-en-int8` (or, with an admin key, POST /api/v1/admin/models/sherpa-onnx-moonshine-base-en-int8/install).): ' +
        'send what it says in the transcript field',
    );
    const speech = await getSpeech(s, 'tts-v3.1', body.data.voiceId);
    assert.equal(speech.status, 400);
    assert.match((await speech.json()).message, /cannot speak: its status is failed/);
  });

  it('a creation left processing by a server that stopped is failed by the next server to start', async () => {
    const repo = s.server.storage.clonedVoices;
    const row = (id: string, createdAt: string) => ({
      id,
      account_id: s.accountId,
      display_name: id,
      accent: '',
      tags: '[]',
      model: 'tts-large',
      status: 'processing',
      created_at: createdAt,
      reference_path: null,
    });
    const sample = { sampleRate: 24_000, pcm: new Uint8Array(48_000) };
    await repo.insert(row('voice_STALE00001', new Date(Date.now() - 60 * 60_000).toISOString()), sample);
    await repo.insert(row('voice_RECENT0001', new Date().toISOString()), sample);
    // Another node on the same database.
    const other = await startTestServer({ engines: true, config: { dataDir: s.config.dataDir, modelsDir: modelsDirWith([REAL_TEST_MODELS.VAD]) } as never });
    try {
      const stale = await settledClone({ url: other.url, key: s.key }, 'voice_STALE00001');
      assert.equal(stale.status, 'failed');
      assert.match(stale.error, /interrupted: the server creating the clone stopped/);
      const listed = await (await fetch(`${other.url}/api/v1/tts-large/get_cloned_voices`, { headers: { authorization: `Bearer ${s.key}` } })).json();
      assert.equal(listed.voices.find((v: any) => v.voiceId === 'voice_RECENT0001').status, 'processing', 'a creation still within its time is left alone');
    } finally {
      await other.close();
      await repo.deleteForAccount(s.accountId, 'voice_STALE00001');
      await repo.deleteForAccount(s.accountId, 'voice_RECENT0001');
    }
  });

  it('a language no zero-shot pack speaks gets the built-in match', async () => {
    const { status, body } = await addVoice(s, { displayName: 'Leserin', language: 'de' }, sample);
    assert.equal(status, 200, JSON.stringify(body));
    const listed = await settledClone(s, body.data.voiceId);
    assert.equal(listed.status, 'completed', JSON.stringify(listed));
    assert.equal(listed.engine, 'espeak-ng-matched');
    assert.equal((await getSpeech(s, 'tts-v2', body.data.voiceId)).status, 200);
  });
});

describe('voice cloning with a Pocket TTS pack (fixture)', { skip: needs({ models: [REAL_TEST_MODELS.VAD, POCKET], corpus: true }) }, () => {
  let s: TestServer;

  before(async () => {
    s = await startTestServer({ engines: true, config: { modelsDir: modelsDirWith([REAL_TEST_MODELS.VAD, POCKET]) } as never });
  });
  after(() => s?.close());

  it('needs no transcript, and speaks at the pitch its stored sample sets', async (t) => {
    const rel = womanSample();
    const { status, body } = await addVoice(s, { displayName: 'Pocket reader' }, { bytes: readFileSync(corpusFile(rel)), name: 'pocket.wav' });
    assert.equal(status, 200, JSON.stringify(body));
    const listed = await settledClone(s, body.data.voiceId);
    assert.equal(listed.status, 'completed', JSON.stringify(listed));
    assert.equal(listed.engine, 'pocket-tts');

    // The fixture's tone is at 100 + 4000 · mean |reference| Hz, over the first 10 s it is given:
    // computed here from the sample the database holds.
    const stored = await s.server.storage.clonedVoices.findSample(s.accountId, body.data.voiceId);
    assert.equal(stored!.sampleRate, 24000);
    const view = new DataView(stored!.pcm.buffer, stored!.pcm.byteOffset, stored!.pcm.byteLength);
    const used = Math.min(stored!.pcm.byteLength / 2, 10 * 24000);
    let sum = 0;
    for (let i = 0; i < used; i++) sum += Math.abs(view.getInt16(i * 2, true) / 32768);
    const expectedHz = 100 + (4000 * sum) / used;

    for (const model of ['tts-v2', 'tts-v3.1']) {
      const res = await getSpeech(s, model, body.data.voiceId);
      assert.equal(res.status, 200, await res.clone().text());
      const wav = parseWav(new Uint8Array(await res.arrayBuffer()));
      assert.equal(wav.sampleRate, 24000);
      let crossings = 0;
      for (let i = 1; i < wav.samples.length; i++) if (wav.samples[i - 1]! < 0 !== wav.samples[i]! < 0) crossings++;
      const spokenHz = crossings / 2 / (wav.samples.length / 24000);
      t.diagnostic(`${model}: tone ${spokenHz.toFixed(1)} Hz, expected from the stored sample ${expectedHz.toFixed(1)} Hz`);
      assert.ok(Math.abs(spokenHz / expectedHz - 1) < 0.02, `${spokenHz} Hz vs ${expectedHz} Hz`);
    }
  });
});
