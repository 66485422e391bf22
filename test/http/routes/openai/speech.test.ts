/**
 * POST /v1/audio/speech driven by the official `openai` npm package: every response_format
 * decoded by ffprobe, the SSE events, the model and voice aliases, and the errors the client
 * turns into its own classes. Real engines: the built-in eSpeak NG voices and a Piper fixture pack.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { countSentences } from '../../../helpers/counting-engines.js';
import { probeAudio } from '../../../helpers/ffprobe.js';
import { modelsDirWith } from '../../../helpers/models.js';
import { startTestServer, type TestServer } from '../../../helpers/server.js';
import { allSseEvents } from '../../../helpers/sse.js';
import { FFMPEG_MISSING } from '../../../audio/signal-fixtures.js';

const NEEDS = FFMPEG_MISSING;

const TEXT = 'Hello there. This is Parley, speaking through the OpenAI compatible API.';
const TONES = 'fake-piper-tones-en_US-16k';
const MAX_TEXT = 600;
const codecs = { mp3: 'mp3', opus: 'opus', aac: 'aac', flac: 'flac', wav: 'pcm_s16le', pcm: 'pcm_s16le' } as const;
const contentTypes = { mp3: 'audio/mpeg', opus: 'audio/ogg', aac: 'audio/aac', flac: 'audio/flac', wav: 'audio/wav', pcm: 'audio/pcm' } as const;

let s: TestServer;
let client: OpenAI;

before(async () => {
  if (NEEDS) return; // every suite below is skipped, naming what is missing
  s = await startTestServer({
    engines: true,
    config: { modelsDir: modelsDirWith([TONES]), logLevel: 'warn', limits: { maxTextChars: MAX_TEXT }, rateLimits: { synthesis: { perMinute: 0 } } },
  });
  client = new OpenAI({ apiKey: s.key, baseURL: `${s.url}/v1`, maxRetries: 0 });
});
after(() => s?.close());

async function speak(params: Partial<OpenAI.Audio.SpeechCreateParams> = {}) {
  const response = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: TEXT, ...params });
  return { response, bytes: new Uint8Array(await response.arrayBuffer()) };
}

/** The exact length of the 24 kHz 16-bit mono audio: the reference the compressed formats are held to. */
let referenceSeconds: number;

describe('POST /v1/audio/speech', { skip: NEEDS }, () => {
  before(async () => {
    const { bytes } = await speak({ response_format: 'pcm' });
    referenceSeconds = bytes.length / 2 / 24000;
    assert.ok(referenceSeconds > 2 && referenceSeconds < 12, `${referenceSeconds} s for ${TEXT.length} characters`);
  });

  for (const format of ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] as const) {
    it(`${format}: ${contentTypes[format]} that ffprobe decodes as ${codecs[format]}, as long as the speech`, async () => {
      const { response, bytes } = await speak({ response_format: format });
      assert.equal(response.headers.get('content-type'), contentTypes[format]);
      assert.equal(response.headers.get('x-voice-id'), 'espeak-en-us-female');
      const probe = await probeAudio(bytes, format === 'pcm' ? { format: 's16le', sampleRate: 24000, channels: 1 } : undefined);
      assert.equal(probe.codec, codecs[format]);
      assert.equal(probe.channels, 1);
      // Opus always decodes at 48 kHz; every other format keeps OpenAI's 24 kHz.
      assert.equal(probe.sampleRate, format === 'opus' ? 48000 : 24000);
      // Encoder delay and frame padding (mp3, aac) add a few tens of ms at most.
      assert.ok(Math.abs(probe.decodedSeconds - referenceSeconds) < 0.15, `${format}: ${probe.decodedSeconds} s decoded, ${referenceSeconds} s made`);
    });
  }

  it('mp3 is the default format', async () => {
    const { response, bytes } = await speak();
    assert.equal(response.headers.get('content-type'), 'audio/mpeg');
    assert.equal((await probeAudio(bytes)).codec, 'mp3');
  });

  it('stream_format sse: speech.audio.delta events whose audio concatenates into the file, then speech.audio.done', async () => {
    const response = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: TEXT, response_format: 'wav', stream_format: 'sse' });
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    const events = await allSseEvents(response);
    const payloads = events.map((e) => JSON.parse(e.data) as { type: string; audio?: string; audio_seconds?: number });
    assert.ok(payloads.length >= 3, `${payloads.length} events`);
    assert.deepEqual(new Set(payloads.slice(0, -1).map((p) => p.type)), new Set(['speech.audio.delta']));
    const done = payloads.at(-1)!;
    assert.equal(done.type, 'speech.audio.done');
    for (const e of events) assert.equal(e.event, JSON.parse(e.data).type, 'the event name repeats the type');
    const audio = Buffer.concat(payloads.slice(0, -1).map((p) => Buffer.from(p.audio!, 'base64')));
    const probe = await probeAudio(audio);
    assert.equal(probe.codec, 'pcm_s16le');
    assert.ok(Math.abs(probe.decodedSeconds - referenceSeconds) < 0.01, `${probe.decodedSeconds} s decoded, ${referenceSeconds} s made`);
    assert.ok(Math.abs(done.audio_seconds! - probe.decodedSeconds) < 0.001, `done says ${done.audio_seconds} s`);
  });

  for (const [speed, low, high] of [[2, 0.4, 0.7], [4, 0.2, 0.35], [0.25, 3, 5], [0.4, 2, 3.1]] as const) {
    it(`speed ${speed} is applied${speed > 2 || speed < 0.5 ? ' (the engine at its limit, then time-stretched)' : ''}: about ${1 / speed}x the length`, async () => {
      const { bytes } = await speak({ response_format: 'pcm', speed });
      const ratio = bytes.length / 2 / 24000 / referenceSeconds;
      assert.ok(ratio > low && ratio < high, `speed ${speed} gave ${ratio} of the length`);
    });
  }

  it('a stretched stream is a whole file of its format', async () => {
    const { bytes } = await speak({ response_format: 'opus', speed: 3.5 });
    const probe = await probeAudio(bytes);
    assert.equal(probe.codec, 'opus');
    assert.ok(probe.decodedSeconds > referenceSeconds / 4 && probe.decodedSeconds < referenceSeconds / 3, `${probe.decodedSeconds} s`);
  });

  it('instructions are accepted and ignored', async () => {
    const { bytes } = await speak({ response_format: 'pcm', instructions: 'Speak like a pirate.' });
    // Resampling may round the length by a sample or two between runs.
    assert.ok(Math.abs(bytes.length / 2 / 24000 - referenceSeconds) < 0.001);
  });

  for (const format of ['mp3', 'aac'] as const) {
    it(`${format}: the first bytes arrive before the last sentence is made, and a client that hangs up stops the synthesis`, async () => {
      const probe = countSentences(s.server.voices);
      const sentences = Array.from({ length: 12 }, (_, i) => `This is sentence number ${i + 1} of a long text.`).join(' ');
      try {
        const abort = new AbortController();
        const response = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: sentences, response_format: format }, { signal: abort.signal });
        const reader = response.body!.getReader();
        const first = await reader.read();
        assert.ok(first.value && first.value.length > 0);
        assert.ok(probe.finished() < 12, `sentences finished when the first bytes arrived: ${probe.finished()}`);
        abort.abort();
        await reader.cancel().catch(() => undefined);
        const seen = probe.started();
        await new Promise((resolve) => setTimeout(resolve, 800));
        assert.ok(probe.started() <= seen + 2, `sentences started after the hang-up: ${probe.started() - seen}`);
        assert.ok(probe.started() < 12);
        const again = await speak({ response_format: format, input: 'Still here.' });
        assert.ok(again.bytes.length > 0);
      } finally {
        probe.restore();
      }
    });
  }

  describe('models and voices', () => {
    for (const [voice, id] of [['onyx', 'espeak-en-us-male'], ['fable', 'espeak-en-gb-male'], ['shimmer', 'espeak-en-gb-female'], ['espeak-fr-male', 'espeak-fr-male']] as const) {
      it(`voice ${voice} speaks with ${id}`, async () => {
        for (const model of ['tts-1', 'tts-1-hd', 'gpt-4o-mini-tts', 'tts-v2']) {
          const { response } = await speak({ model, voice, input: 'Bonjour.', response_format: 'pcm' });
          assert.equal(response.headers.get('x-voice-id'), id, model);
        }
      });
    }

    it('a pack id as the model speaks with its own voice; an OpenAI voice name falls back to it', async () => {
      const { response, bytes } = await speak({ model: TONES, voice: 'nova', response_format: 'wav' });
      assert.equal(response.headers.get('x-voice-id'), TONES);
      assert.ok((await probeAudio(bytes)).decodedSeconds > 0.5);
    });

    it('a voice given as {id} is taken', async () => {
      const { response } = await speak({ voice: { id: 'espeak-en-us-male' }, response_format: 'pcm' });
      assert.equal(response.headers.get('x-voice-id'), 'espeak-en-us-male');
    });
  });

  describe('errors in OpenAI shape, as the client sees them', () => {
    async function refused(params: Partial<OpenAI.Audio.SpeechCreateParams>, apiKey = s.key) {
      const other = new OpenAI({ apiKey, baseURL: `${s.url}/v1`, maxRetries: 0 });
      try {
        await other.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: TEXT, ...params } as OpenAI.Audio.SpeechCreateParams);
      } catch (err) {
        return err as InstanceType<typeof OpenAI.APIError>;
      }
      assert.fail('the request was accepted');
    }

    it('a wrong key is the AuthenticationError', async () => {
      const err = await refused({}, 'sk_this_is_not_a_key_of_this_server_0000');
      assert.ok(err instanceof OpenAI.AuthenticationError);
      assert.equal(err.status, 401);
      assert.deepEqual(err.error, { message: 'Bearer token is invalid', type: 'invalid_request_error', param: null, code: 'invalid_api_key' });
    });

    it('an empty input is a BadRequestError naming input', async () => {
      const err = await refused({ input: '' });
      assert.ok(err instanceof OpenAI.BadRequestError);
      assert.deepEqual(err.error, { message: 'input must not be empty', type: 'invalid_request_error', param: 'input', code: null });
      assert.ok((await refused({ input: '  \n ' })) instanceof OpenAI.BadRequestError);
    });

    it('input longer than the synthesis limit, an unknown voice, model or format, a speed out of range: 400s naming the field', async () => {
      const cases: Array<[Partial<OpenAI.Audio.SpeechCreateParams>, string, RegExp]> = [
        [{ input: 'a'.repeat(MAX_TEXT + 1) }, 'input', new RegExp(`at most ${MAX_TEXT} characters`)],
        [{ voice: 'no-such-voice' }, 'voice', /not a voice of tts-1/],
        [{ model: 'tts-9' }, 'model', /does not exist/],
        [{ response_format: 'ogg' as 'mp3' }, 'response_format', /mp3, opus, aac, flac, wav, pcm/],
        [{ speed: 4.5 }, 'speed', /between 0.25 and 4/],
        [{ speed: 0.2 }, 'speed', /between 0.25 and 4/],
        [{ voice: 5 as unknown as string }, 'voice', /^voice must be a string$/],
        [{ input: ['a'] as unknown as string }, 'input', /^input must be a string$/],
      ];
      for (const [params, param, message] of cases) {
        const err = await refused(params);
        assert.ok(err instanceof OpenAI.BadRequestError, JSON.stringify(params));
        assert.equal((err.error as { param: string }).param, param);
        assert.match((err.error as { message: string }).message, message);
      }
      const model = await refused({ model: 'tts-9' });
      assert.equal((model.error as { code: string }).code, 'model_not_found');
    });
  });
});

describe('the synthesis rate limit applies to /v1/audio/speech', { skip: NEEDS }, () => {
  it('past the burst the client gets RateLimitError with Retry-After', async () => {
    const limited = await startTestServer({ engines: true, config: { logLevel: 'warn', rateLimits: { synthesis: { perMinute: 1, burst: 1 } } } });
    try {
      const c = new OpenAI({ apiKey: limited.key, baseURL: `${limited.url}/v1`, maxRetries: 0 });
      await (await c.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'One.', response_format: 'pcm' })).arrayBuffer();
      await assert.rejects(c.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'Two.', response_format: 'pcm' }), (err: unknown) => {
        assert.ok(err instanceof OpenAI.RateLimitError);
        assert.equal((err.error as { code: string }).code, 'rate_limit_exceeded');
        assert.ok(Number(err.headers?.get('retry-after')) >= 1);
        return true;
      });
    } finally {
      await limited.close();
    }
  });
});

describe('aac needs ffmpeg', { skip: NEEDS }, () => {
  it('with ffmpeg disabled, aac is a BadRequestError naming the formats that work; the others still do', async () => {
    const noFfmpeg = await startTestServer({ engines: true, config: { logLevel: 'warn', ffmpeg: { enabled: false } } });
    try {
      const c = new OpenAI({ apiKey: noFfmpeg.key, baseURL: `${noFfmpeg.url}/v1`, maxRetries: 0 });
      await assert.rejects(c.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'One.', response_format: 'aac' }), (err: unknown) => {
        assert.ok(err instanceof OpenAI.BadRequestError);
        assert.match((err.error as { message: string }).message, /aac needs ffmpeg.*use mp3, opus, flac, wav or pcm/);
        return true;
      });
      const flac = await c.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'One.', response_format: 'flac' });
      assert.equal((await probeAudio(new Uint8Array(await flac.arrayBuffer()))).codec, 'flac');
    } finally {
      await noFfmpeg.close();
    }
  });
});
