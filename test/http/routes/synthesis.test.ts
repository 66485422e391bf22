/**
 * Synthesis through real HTTP on the real engines: the built-in eSpeak NG voices and the sherpa
 * Piper fixture packs (tones, not speech: they prove the neural code path, not the sound).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeAudio } from '../../../src/audio/decode.js';
import { parseWav } from '../../../src/audio/wav.js';
import { countSentences } from '../../helpers/counting-engines.js';
import { modelsDirWith } from '../../helpers/models.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { allSseEvents, chunkBytes, sseEvents } from '../../helpers/sse.js';

const ESPEAK = 'espeak-en-us-female';
const TONES_16K = 'fake-piper-tones-en_US-16k';
const TONES_22K_SPEAKER_1 = 'fake-piper-tones-en_US-22k-2spk-1';
const models = ['tts-large', 'tts-v2', 'tts-v3.1'] as const;
const formats = ['pcm', 'wav', 'mp3', 'mulaw', 'alaw'] as const;
const defaultRate = { 'tts-large': 24000, 'tts-v2': 24000, 'tts-v3.1': 44100 } as const;

let s: TestServer;

before(async () => {
  s = await startTestServer({
    engines: true,
    config: { modelsDir: modelsDirWith(['fake-piper-tones-en_US-16k', 'fake-piper-tones-en_US-22k-2spk']) },
  });
});
after(() => s?.close());

function stream(model: string, body: Record<string, unknown>, init: RequestInit = {}) {
  return s.api(`/api/v1/${model}/stream`, { method: 'POST', json: body, ...init });
}

function speech(model: string, body: Record<string, unknown>) {
  return s.api(`/api/v1/${model}/get_speech`, { method: 'POST', json: body });
}

describe('voices', () => {
  it('lists a male and a female built-in voice for every tts-v2 language, and the installed pack voices', async () => {
    const r = await s.api('/api/v1/tts-v2/get_voices');
    assert.equal(r.status, 200);
    const { voices } = (await r.json()) as { voices: Array<{ voiceId: string; tags: { language: string[]; gender: string }; sampleRate: number }> };
    for (const lang of ['en', 'hi', 'ta', 'kn', 'mr', 'bn', 'gu', 'ar', 'he', 'fr', 'de', 'pl', 'ru', 'it', 'nl', 'es', 'sv', 'ml', 'te']) {
      const genders = new Set(voices.filter((v) => v.voiceId.startsWith('espeak-') && v.tags.language.includes(lang)).map((v) => v.tags.gender));
      assert.deepEqual([...genders].sort(), ['female', 'male'], `built-in voices for ${lang}`);
    }
    const ids = voices.map((v) => v.voiceId);
    for (const id of [TONES_16K, 'fake-piper-tones-en_US-22k-2spk-0', TONES_22K_SPEAKER_1]) assert.ok(ids.includes(id), id);
    assert.equal(voices.find((v) => v.voiceId === TONES_16K)!.sampleRate, 16000);
  });
});

describe('POST /{model}/stream', () => {
  for (const model of models) {
    for (const format of formats) {
      it(`${model} ${format}: chunks of at most 1024 bytes that concatenate into a valid ${format} stream`, async () => {
        const r = await stream(model, { text: 'Hello there. This is Parley speaking.', voice_id: ESPEAK, output_format: format });
        assert.equal(r.status, 200);
        assert.equal(r.headers.get('content-type'), 'text/event-stream');
        assert.equal(r.headers.get('cache-control'), 'no-cache');
        assert.ok(r.headers.get('x-request-id'));
        const events = await allSseEvents(r);
        const chunks = events.filter((e) => e.event === 'chunk');
        assert.ok(chunks.length > 2);
        for (const c of chunks) assert.deepEqual(c.fields.map(([k]) => k), ['event', 'data', 'done']);
        for (const c of chunks) assert.equal(c.fields[2]![1], 'false');
        const { bytes, sizes } = chunkBytes(events);
        assert.ok(sizes.every((n) => n > 0 && n <= 1024), `chunk sizes ${Math.max(...sizes)}`);
        assert.ok(sizes.slice(0, -1).every((n) => n === 1024), 'all chunks but the last are full');

        const last = events.at(-1)!;
        assert.equal(last.event, 'complete');
        assert.equal(last.fields.at(-1)![0], 'done');
        assert.equal(last.fields.at(-1)![1], 'true');
        const complete = JSON.parse(last.data);
        assert.equal(complete.done, true);
        assert.equal(complete.status, '200');
        assert.equal(complete.request_id, r.headers.get('x-request-id'));
        assert.equal(complete.chunks, chunks.length);
        const rate = defaultRate[model];

        if (format === 'pcm') {
          assert.equal(bytes.length % 2, 0);
          assert.ok(Math.abs(bytes.length / 2 / rate - complete.audio_seconds) < 0.01);
        } else if (format === 'mulaw' || format === 'alaw') {
          assert.ok(Math.abs(bytes.length / rate - complete.audio_seconds) < 0.01);
        } else if (format === 'wav') {
          assert.equal(bytes.subarray(0, 4).toString('latin1'), 'RIFF');
          assert.equal(bytes.readUInt32LE(4), 0xffffffff);
          assert.equal(bytes.readUInt32LE(24), rate);
          assert.equal(bytes.readUInt16LE(34), 16);
          assert.equal(bytes.readUInt32LE(40), 0xffffffff);
        } else {
          const audio = await decodeAudio(new Uint8Array(bytes), { contentType: 'audio/mpeg' });
          assert.ok(Math.abs(audio.samples.length / audio.sampleRate - complete.audio_seconds) < 0.1);
        }
        assert.ok(complete.audio_seconds > 1);
      });
    }
  }

  it('tts-large is marked deprecated with a link to tts-v2; the others are not', async () => {
    const r = await stream('tts-large', { text: 'Hi.', voice_id: ESPEAK });
    assert.equal(r.headers.get('deprecation'), 'true');
    assert.match(r.headers.get('link') ?? '', /rel="successor-version"/);
    await r.arrayBuffer();
    const v2 = await stream('tts-v2', { text: 'Hi.', voice_id: ESPEAK });
    assert.equal(v2.headers.get('deprecation'), null);
    await v2.arrayBuffer();
  });

  it('streams a neural pack voice at the requested rate', async () => {
    const r = await stream('tts-v2', { text: 'One sentence here. And another one.', voice_id: TONES_22K_SPEAKER_1, sample_rate: 8000 });
    const events = await allSseEvents(r);
    const complete = JSON.parse(events.at(-1)!.data);
    const { bytes } = chunkBytes(events);
    assert.ok(bytes.length > 0);
    assert.ok(Math.abs(bytes.length / 2 / 8000 - complete.audio_seconds) < 0.01);
  });
});

describe('POST /{model}/get_speech', () => {
  it('pcm (the default) and wav give a PCM int16 WAV at the requested rate, with rate and duration headers', async () => {
    for (const output_format of [undefined, 'wav']) {
      const r = await speech('tts-v2', { text: 'Testing one two three.', voice_id: ESPEAK, sample_rate: 16000, output_format });
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('content-type'), 'audio/wav');
      assert.equal(r.headers.get('x-sample-rate'), '16000');
      const wav = parseWav(new Uint8Array(await r.arrayBuffer()));
      assert.equal(wav.sampleRate, 16000);
      assert.ok(Math.abs(wav.samples.length / 16000 - Number(r.headers.get('x-audio-duration'))) < 0.002);
    }
  });

  it('tts-v3.1 defaults to 44.1 kHz', async () => {
    const r = await speech('tts-v3.1', { text: 'High rate.', voice_id: ESPEAK });
    assert.equal(r.headers.get('x-sample-rate'), '44100');
    assert.equal(parseWav(new Uint8Array(await r.arrayBuffer())).sampleRate, 44100);
  });

  it('add_wav_header false gives raw PCM; mp3 gives MPEG audio; mulaw gives a WAV with format tag 7', async () => {
    const raw = await speech('tts-v2', { text: 'Raw audio.', voice_id: ESPEAK, add_wav_header: false });
    assert.equal(raw.headers.get('content-type'), 'audio/pcm');
    const rawBytes = Buffer.from(await raw.arrayBuffer());
    assert.notEqual(rawBytes.subarray(0, 4).toString('latin1'), 'RIFF');
    assert.ok(Math.abs(rawBytes.length / 2 / 24000 - Number(raw.headers.get('x-audio-duration'))) < 0.002);

    const mp3 = await speech('tts-v2', { text: 'Compressed audio.', voice_id: ESPEAK, output_format: 'mp3' });
    assert.equal(mp3.headers.get('content-type'), 'audio/mpeg');
    const decoded = await decodeAudio(new Uint8Array(await mp3.arrayBuffer()), { contentType: 'audio/mpeg' });
    assert.ok(Math.abs(decoded.samples.length / decoded.sampleRate - Number(mp3.headers.get('x-audio-duration'))) < 0.1);

    const mulaw = await speech('tts-v2', { text: 'Telephone audio.', voice_id: ESPEAK, output_format: 'mulaw', sample_rate: 8000 });
    assert.equal(mulaw.headers.get('content-type'), 'audio/wav');
    const bytes = Buffer.from(await mulaw.arrayBuffer());
    assert.equal(bytes.subarray(0, 4).toString('latin1'), 'RIFF');
    assert.equal(bytes.readUInt16LE(20), 7);
    assert.equal(bytes.readUInt16LE(34), 8);
  });

  it('is not offered for tts-large', async () => {
    const r = await speech('tts-large', { text: 'Hi.', voice_id: ESPEAK });
    assert.equal(r.status, 404);
    assert.equal((await r.json()).error, 'NotFound');
  });

  it('speed changes the length of the audio', async () => {
    const duration = async (speed: number) =>
      Number((await speech('tts-v2', { text: 'A sentence long enough to hear the speed.', voice_id: ESPEAK, speed })).headers.get('x-audio-duration'));
    const slow = await duration(0.5);
    const fast = await duration(2);
    assert.ok(slow > fast * 2, `slow ${slow} s, fast ${fast} s`);
  });

  it('the neural fixture voice makes audio through get_speech', async () => {
    const r = await speech('tts-v3.1', { text: 'Tones for a test.', voice_id: TONES_16K, sample_rate: 16000 });
    assert.equal(r.status, 200);
    const wav = parseWav(new Uint8Array(await r.arrayBuffer()));
    assert.ok(wav.samples.some((x) => Math.abs(x) > 0.01));
  });
});

describe('validation', () => {
  const valid = { text: 'Hello.', voice_id: ESPEAK };
  const cases: Array<[string, string, Record<string, unknown>, RegExp]> = [
    ['tts-v2', 'text missing', { voice_id: ESPEAK }, /text/],
    ['tts-v2', 'text blank', { ...valid, text: '   \n ' }, /text/],
    ['tts-v2', 'text too long', { ...valid, text: 'a'.repeat(10_001) }, /text/],
    ['tts-v2', 'voice_id missing', { text: 'Hello.' }, /voice_id/],
    ['tts-v2', 'speed too low', { ...valid, speed: 0.4 }, /speed/],
    ['tts-v2', 'speed too high', { ...valid, speed: 2.1 }, /speed/],
    ['tts-v2', 'speed not a number', { ...valid, speed: 'fast' }, /speed/],
    ['tts-v2', 'sample_rate below range', { ...valid, sample_rate: 7999 }, /sample_rate/],
    ['tts-v2', 'sample_rate above range', { ...valid, sample_rate: 44100 }, /sample_rate/],
    ['tts-v3.1', 'sample_rate not in the enum', { ...valid, sample_rate: 22050 }, /sample_rate/],
    ['tts-v2', 'consistency out of range', { ...valid, consistency: 1.5 }, /consistency/],
    ['tts-v2', 'similarity out of range', { ...valid, similarity: -1 }, /similarity/],
    ['tts-v2', 'unknown output_format', { ...valid, output_format: 'ogg' }, /output_format/],
    ['tts-v2', 'language not of the model', { ...valid, language: 'xx' }, /language/],
    ['tts-v2', 'unknown voice', { ...valid, voice_id: 'no-such-voice' }, /voice_id/],
    ['tts-v2', 'language the voice cannot speak', { ...valid, language: 'de' }, /language "de".*espeak-en-us-female/],
    ['tts-v2', 'unknown dictionary', { ...valid, pronunciation_dicts: ['pd_nope'] }, /pronunciation_dicts/],
  ];
  for (const [model, what, body, message] of cases) {
    for (const endpoint of ['stream', 'get_speech']) {
      it(`${model}/${endpoint}: ${what} → 400 naming the field`, async () => {
        const r = await s.api(`/api/v1/${model}/${endpoint}`, { method: 'POST', json: body });
        assert.equal(r.status, 400);
        const err = await r.json();
        assert.deepEqual(Object.keys(err).sort(), ['error', 'message']);
        assert.equal(err.error, 'InvalidRequest');
        assert.match(err.message, message);
      });
    }
  }

  it('accepts and ignores consistency, similarity and enhancement on tts-v3.1', async () => {
    const r = await speech('tts-v3.1', { ...valid, consistency: 0.3, similarity: 0.9, enhancement: 1 });
    assert.equal(r.status, 200);
    await r.arrayBuffer();
  });

  it('accepts the 10,000-character maximum and ignores unknown fields', async () => {
    const text = 'Word. '.repeat(1666) + 'End.';
    assert.ok(text.length <= 10_000);
    const r = await stream('tts-v2', { text, voice_id: ESPEAK, unknown_field: 1 });
    assert.equal(r.status, 200);
    const it = sseEvents(r);
    const first = await it.next();
    assert.equal(first.value?.event, 'chunk');
    await it.return(undefined);
  });
});

describe('pronunciation dictionaries', () => {
  it('replace whole words, case-insensitively, before synthesis: the audio is that of the respelt text', async () => {
    const created = await s.api('/api/v1/pronunciation-dicts', {
      method: 'POST',
      json: { items: [{ word: 'Tomato', pronunciation: 'potato salad with extra cheese' }] },
    });
    assert.equal(created.status, 200);
    const { id } = await created.json();
    // eSpeak's voice variants add a little random pitch flutter, so equal audio means equal length, not equal bytes.
    const seconds = async (body: Record<string, unknown>) =>
      Number((await speech('tts-v2', { voice_id: ESPEAK, ...body })).headers.get('x-audio-duration'));
    const withDict = await seconds({ text: 'I like TOMATO soup.', pronunciation_dicts: [id] });
    const written = await seconds({ text: 'I like potato salad with extra cheese soup.' });
    const plain = await seconds({ text: 'I like TOMATO soup.' });
    assert.ok(Math.abs(withDict - written) < 0.05, `with the dictionary ${withDict} s, respelt text ${written} s`);
    assert.ok(withDict > plain * 1.3, `with the dictionary ${withDict} s, without ${plain} s`);
  });
});

describe('streaming behaviour', () => {
  const instrument = () => countSentences(s.server.voices);

  const sentences = Array.from({ length: 12 }, (_, i) => `This is sentence number ${i + 1} of a long text.`).join(' ');

  for (const voice of [ESPEAK, TONES_16K]) {
    it(`${voice}: the first chunk arrives before the last sentence is synthesised`, async () => {
      const probe = instrument();
      try {
        const r = await stream('tts-v2', { text: sentences, voice_id: voice });
        const events = sseEvents(r);
        const first = await events.next();
        assert.equal(first.value?.event, 'chunk');
        assert.ok(probe.finished() < 12, `sentences finished when the first chunk arrived: ${probe.finished()}`);
        let count = 1;
        for await (const e of events) if (e.event === 'chunk') count++;
        assert.equal(probe.finished(), 12);
        assert.ok(count > 1);
      } finally {
        probe.restore();
      }
    });
  }

  it('a client that disconnects stops the synthesis', async () => {
    const probe = instrument();
    try {
      const abort = new AbortController();
      const r = await stream('tts-v2', { text: sentences.repeat(3), voice_id: ESPEAK }, { signal: abort.signal });
      const events = sseEvents(r);
      await events.next();
      abort.abort();
      await events.return(undefined).catch(() => undefined);
      // Give the server time to notice; it stops within one sentence.
      const seen = probe.started();
      for (let i = 0; i < 20 && probe.started() === seen; i++) await new Promise((resolve) => setTimeout(resolve, 50));
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.ok(probe.started() < 36, `sentences started after disconnect: ${probe.started()} of 36`);
      assert.ok(probe.started() <= seen + 2);
      // The server is still fine.
      const again = await speech('tts-v2', { text: 'Still here.', voice_id: ESPEAK });
      assert.equal(again.status, 200);
      await again.arrayBuffer();
    } finally {
      probe.restore();
    }
  });
});
