/**
 * Pre-recorded transcription on the current layout, as the LiveKit Agents plugin calls it, and
 * the product name `pulse` on the legacy one.
 *
 * LiveKit's batch call, from livekit/agents at da6af86ac640a3bc54585764e64321d7048c1c16,
 * livekit-plugins/livekit-plugins-smallestai/livekit/plugins/smallestai/stt.py
 * (`STT._recognize_impl`): `POST {base_url}/stt/` with the query `model`, `language`, `encoding`,
 * `sample_rate`, `word_timestamps` and `diarize` (booleans as "true"/"false"), the headers
 * `Content-Type: application/octet-stream`, `X-Source: livekit` and `X-LiveKit-Version`, and as
 * body `combine_audio_frames(buffer).to_wav_bytes()`: a 16-bit PCM WAV file (44-byte header) of
 * the buffered frames. It reads `transcription`, `words` and their `start`, `end`, `confidence`.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { encodeInt16 } from '../../../src/audio/encode.js';
import { parseWav, wavFile, WavFormatTag } from '../../../src/audio/wav.js';
import { corpusFile, modelsDirWith, needs, REAL_TEST_MODELS, sttTestPacks } from '../../helpers/models.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { wordsOf } from '../../helpers/audio-formats.js';
import { startReceiver } from '../../jobs/fixtures/receiver.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH], corpus: true });
const SOURCE = 'en/jfk-inaugural-1961.wav';

describe('POST /waves/v1/stt and /api/v1/pulse/get_text', { skip: NEEDS }, () => {
  let s: TestServer;
  /** The corpus file as LiveKit's to_wav_bytes() writes it: 16-bit mono PCM, canonical header. */
  let livekitWav: Uint8Array;
  let pcm: Uint8Array;
  let sampleRate: number;
  let reference: { transcription: string; words: unknown[] };
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  before(async () => {
    [s, receiver] = await Promise.all([
      startTestServer({
        engines: true,
        config: {
          modelsDir: modelsDirWith(sttTestPacks),
          logLevel: 'warn',
          rateLimits: { transcription: { perMinute: 0 } },
          webhooks: { backoffBaseMs: 5, backoffCapMs: 40, timeoutMs: 2000, pollMs: 20 },
        },
      }),
      startReceiver(),
    ]);
    const audio = parseWav(readFileSync(corpusFile(SOURCE)));
    sampleRate = audio.sampleRate;
    pcm = encodeInt16(audio.samples);
    livekitWav = wavFile(pcm, { sampleRate, channels: 1, bitsPerSample: 16, formatTag: WavFormatTag.pcm });
    const res = await s.api('/api/v1/stt/get_text?word_timestamps=true', { method: 'POST', headers: { 'content-type': 'audio/wav' }, body: livekitWav as Uint8Array<ArrayBuffer> });
    assert.equal(res.status, 200);
    reference = (await res.json()) as typeof reference;
    assert.ok(wordsOf(reference.transcription).length >= 5, reference.transcription);
  });
  after(async () => {
    await s?.close();
    await receiver?.close();
  });

  const post = (path: string, body: Uint8Array, contentType: string | undefined, headers: Record<string, string> = {}) =>
    s.api(path, { method: 'POST', headers: { ...(contentType ? { 'content-type': contentType } : {}), ...headers }, body: body as Uint8Array<ArrayBuffer> });

  it("LiveKit's batch call: a WAV body as application/octet-stream gets the transcript and timed words", async () => {
    const query = new URLSearchParams({ model: 'pulse', language: 'en', encoding: 'linear16', sample_rate: String(sampleRate), word_timestamps: 'true', diarize: 'false' });
    const res = await post(`/waves/v1/stt/?${query}`, livekitWav, 'application/octet-stream', { 'X-Source': 'livekit', 'X-LiveKit-Version': '1.2.0' });
    const body = (await res.json()) as { transcription: string; words: { word: string; start: number; end: number; confidence?: number }[] };
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.transcription, reference.transcription);
    assert.ok(body.words.length > 0);
    for (const w of body.words) assert.ok(typeof w.word === 'string' && w.start <= w.end, JSON.stringify(w));
  });

  it('headerless 16-bit PCM, described by encoding and sample_rate, gives the same transcript (also without the trailing slash)', async () => {
    const res = await post(`/waves/v1/stt?model=pulse&language=en&encoding=linear16&sample_rate=${sampleRate}`, pcm, 'application/octet-stream');
    const body = (await res.json()) as { transcription: string };
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.transcription, reference.transcription);
  });

  it('any Content-Type, or none: the bytes say the format', async () => {
    for (const type of ['audio/wav', 'video/mp4', undefined]) {
      const res = await post('/waves/v1/stt?model=pulse', livekitWav, type);
      const body = (await res.json()) as { transcription: string };
      assert.equal(res.status, 200, `${type}: ${JSON.stringify(body)}`);
      assert.equal(body.transcription, reference.transcription);
    }
  });

  it('sentence_timestamps adds the utterances without the words', async () => {
    const res = await post('/waves/v1/stt?model=pulse&sentence_timestamps=true', livekitWav, 'application/octet-stream');
    const body = (await res.json()) as { words: unknown[]; utterances: { text: string; start: number; end: number }[] };
    assert.equal(res.status, 200);
    assert.deepEqual(body.words, []);
    assert.ok(body.utterances.length > 0);
    assert.equal(body.utterances.map((u) => u.text).join(' '), reference.transcription);
  });

  it('webhook_url: {status: processing, request_id} at once, the job under /waves/v1/stt/jobs, the transcript delivered', async () => {
    receiver.setAnswer(() => 200);
    const res = await post(`/waves/v1/stt?model=pulse&${new URLSearchParams({ webhook_url: receiver.url })}`, livekitWav, 'application/octet-stream');
    const body = (await res.json()) as { status: string; request_id: string };
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.deepEqual(Object.keys(body).sort(), ['request_id', 'status']);
    assert.equal(body.status, 'processing');
    let job: { state: string } = { state: 'queued' };
    for (const deadline = Date.now() + 30_000; job.state !== 'succeeded' && job.state !== 'failed' && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      const got = await s.api(`/waves/v1/stt/jobs/${body.request_id}`);
      assert.equal(got.status, 200);
      job = (await got.json()) as typeof job;
    }
    assert.equal(job.state, 'succeeded');
    const [delivered] = receiver.forRequest(body.request_id);
    assert.ok(delivered, 'delivered');
    assert.ok(delivered.body.includes(JSON.stringify(reference.transcription)), delivered.body.slice(0, 300));
  });

  it('bytes that are no audio: a 400 in the current error shape', async () => {
    const res = await post('/waves/v1/stt?model=pulse', new TextEncoder().encode('not audio at all, just some text'), 'application/octet-stream');
    const body = (await res.json()) as Record<string, string>;
    assert.equal(res.status, 400);
    assert.equal(body.status, 'error');
    assert.match(body.message, /could not be read/);
    assert.equal(body.request_id, res.headers.get('x-request-id'));
  });

  it('unknown option values are refused naming the rule', async () => {
    const res = await post('/waves/v1/stt?model=pulse&encoding=flac', livekitWav, 'application/octet-stream');
    const body = (await res.json()) as Record<string, string>;
    assert.equal(res.status, 400);
    assert.match(body.message, /encoding/);
  });

  it('/api/v1/pulse/get_text with model=pulse: the legacy route and body under the product name, raw bytes as application/octet-stream too', async () => {
    for (const type of ['audio/wav', 'application/octet-stream']) {
      const res = await post('/api/v1/pulse/get_text?model=pulse', livekitWav, type);
      const body = (await res.json()) as { transcription: string; request_id: string };
      assert.equal(res.status, 200, `${type}: ${JSON.stringify(body)}`);
      assert.equal(body.transcription, reference.transcription);
    }
    // The seed's neutral name keeps the seed's rule: raw bytes are audio/* only.
    const refused = await post('/api/v1/stt/get_text', livekitWav, 'application/octet-stream');
    assert.equal(refused.status, 400);
    assert.deepEqual(Object.keys(await refused.json()).sort(), ['error', 'request_id']);
    const notAudio = await post('/api/v1/pulse/get_text', new TextEncoder().encode('not audio at all, just some text'), 'application/octet-stream');
    const body = (await notAudio.json()) as Record<string, string>;
    assert.equal(notAudio.status, 400);
    assert.deepEqual(Object.keys(body).sort(), ['error', 'request_id']);
    assert.match(body.error!, /could not be read|format/i);
  });
});
