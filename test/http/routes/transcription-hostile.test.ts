/**
 * Hostile and malformed input to POST /api/v1/stt/get_text over real HTTP, with the real engines:
 * every case gets a 4xx with the transcription error body, never a 500.
 * Decompression bombs of every codec get the 400 that names the duration cap
 * (limits.maxAudioSeconds); ffmpeg's concurrency limit answers 503 with Retry-After, and an
 * ffmpeg decode ends when its client goes away.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { adtsBomb, allBombs, flacBomb, oggOpusBomb } from '../../fuzz/bombs.js';
import { aiff, flacHeader, floatsWith, tone16, wav } from '../../fuzz/hostile-audio.js';
import { REAL_TEST_MODELS, modelsDirWith, needs } from '../../helpers/models.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { expectSttError } from '../../helpers/stt-errors.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH] });

const INVALID_FORMAT = 'Invalid file format. Supported formats: audio/*';
const MODELS = ['silero-vad-v5', 'sherpa-onnx-kws-zipformer-gigaspeech-3.3M-2024-01-01-mobile'];
/** Three hours: past the default cap of two. */
const BOMB_SECONDS = 3 * 3600;

async function post(s: TestServer, bytes: Uint8Array, contentType?: string, init: RequestInit = {}): Promise<{ res: Response; body: any }> {
  const headers: Record<string, string> = contentType === undefined ? {} : { 'content-type': contentType };
  const res = await s.api('/api/v1/stt/get_text', { method: 'POST', headers, body: bytes as Uint8Array<ArrayBuffer>, ...init });
  return { res, body: await res.json() };
}

/** ffmpeg processes started by this test process (the test servers run in it). */
function ffmpegChildren(): number {
  try {
    const out = execFileSync('ps', ['-o', 'comm=', '--ppid', String(process.pid)], { encoding: 'utf8' });
    return out.split('\n').filter((name) => name.trim() === 'ffmpeg').length;
  } catch {
    return 0; // ps exits 1 when there is no child at all
  }
}

/** A server with the real engines, rate limits off, and `limits`/`ffmpeg` settings of the test's own. */
function startHostileServer(config: { limits?: Record<string, number>; ffmpeg?: Record<string, number> } = {}): Promise<TestServer> {
  return startTestServer({
    engines: true,
    config: { modelsDir: modelsDirWith(MODELS), logLevel: 'silent', rateLimits: { transcription: { perMinute: 0 } }, ...config },
  });
}

describe('POST /api/v1/stt/get_text with hostile input', { skip: NEEDS }, () => {
  let s: TestServer;
  before(async () => {
    s = await startHostileServer();
  });
  after(() => s?.close());

  describe('bodies that are no audio', () => {
    const cases: Record<string, [Uint8Array, string | undefined]> = {
      'an empty body': [new Uint8Array(0), 'audio/wav'],
      'a 1-byte body': [Uint8Array.of(0x52), 'audio/wav'],
      'a 1-byte body as raw PCM': [Uint8Array.of(0x01), 'audio/pcm'],
      'text/plain': [tone16(0.5), 'text/plain'],
      'application/octet-stream': [wav(tone16(0.5)), 'application/octet-stream'],
      'image/png': [wav(tone16(0.5)), 'image/png'],
      'multipart/form-data without a boundary': [wav(tone16(0.5)), 'multipart/form-data'],
      'a bare "audio/"': [wav(tone16(0.5)), 'audio/'],
      'no Content-Type': [wav(tone16(0.5)), undefined],
    };
    for (const [name, [bytes, type]] of Object.entries(cases)) {
      it(`${name} is 400 with the fixed sentence`, async () => {
        await expectSttError(post(s, bytes, type), 400, INVALID_FORMAT);
      });
    }
  });

  describe('WAV headers that stop short or lie', () => {
    const data = tone16(0.5);
    const cases: Record<string, Uint8Array> = {
      'a header only (no data chunk body)': wav(new Uint8Array(0)),
      'a file cut inside the fmt chunk': wav(data).subarray(0, 30),
      'a file cut after RIFF/WAVE': wav(data).subarray(0, 12),
      'half a sample frame': wav(Uint8Array.of(1), { bitsPerSample: 16 }),
      'an fmt chunk that claims 1 GB': wav(data, { declaredFmtBytes: 2 ** 30 }),
      'a sample rate of 1,000,001 Hz': wav(data, { sampleRate: 1_000_001 }),
      'a sample rate of 8 Hz (1 MB of it)': wav(new Uint8Array(1024 * 1024), { sampleRate: 8 }),
      'a sample rate of 0': wav(data, { sampleRate: 0 }),
      'a sample rate of 2^32 - 1': wav(data, { sampleRate: 2 ** 32 - 1 }),
      '0 channels': wav(data, { channels: 0 }),
      '65,535 channels': wav(data, { channels: 65_535 }),
      '9 channels': wav(new Uint8Array(18 * 100), { channels: 9 }),
      '0-bit samples': wav(data, { bitsPerSample: 0 }),
      '48-bit integer samples': wav(data, { bitsPerSample: 48 }),
      '16-bit float samples': wav(data, { formatTag: 3, bitsPerSample: 16 }),
      '16-bit mu-law samples': wav(data, { formatTag: 7, bitsPerSample: 16 }),
      'float samples holding NaN': wav(floatsWith(NaN), { formatTag: 3, bitsPerSample: 32 }),
      'float samples holding +Infinity': wav(floatsWith(Infinity), { formatTag: 3, bitsPerSample: 32 }),
      'float samples holding -Infinity': wav(floatsWith(-Infinity), { formatTag: 3, bitsPerSample: 32 }),
      'an unknown format tag (0x1234)': wav(data, { formatTag: 0x1234 }),
    };
    for (const [name, bytes] of Object.entries(cases)) {
      it(`${name} is 400 with the fixed sentence`, async () => {
        await expectSttError(post(s, bytes, 'audio/wav'), 400, INVALID_FORMAT);
      });
    }

    it('a data chunk that claims 2 GB but holds 1 s is read for what is there', async () => {
      const { res, body } = await post(s, wav(tone16(1), { declaredDataBytes: 2 ** 31 }), 'audio/wav');
      assert.equal(res.status, 200, JSON.stringify(body));
      assert.equal(body.duration, 1);
    });

    it('float samples past full scale are clipped, not refused', async () => {
      const { res, body } = await post(s, wav(floatsWith(1e30), { formatTag: 3, bitsPerSample: 32 }), 'audio/wav');
      assert.equal(res.status, 200, JSON.stringify(body));
    });
  });

  describe('other headers that declare the impossible', () => {
    const cases: Record<string, [Uint8Array, string]> = {
      'AIFF at 0 Hz': [aiff(tone16(0.5), { sampleRate: 0 }), 'audio/aiff'],
      'AIFF at 1 MHz': [aiff(tone16(0.5), { sampleRate: 1_000_000 }), 'audio/aiff'],
      'AIFF with 0 channels': [aiff(tone16(0.5), { channels: 0 }), 'audio/aiff'],
      'AIFF with 65,535 channels': [aiff(tone16(0.5), { channels: 65_535 }), 'audio/aiff'],
      'AIFF with 0-bit samples': [aiff(tone16(0.5), { bitsPerSample: 0 }), 'audio/aiff'],
      'AIFF header only': [aiff(new Uint8Array(0)), 'audio/aiff'],
      'raw PCM at 1000 Hz': [tone16(0.5), 'audio/pcm;rate=1000'],
      'raw PCM at 500 kHz': [tone16(0.5), 'audio/pcm;rate=500000'],
      'raw PCM with 9 channels': [tone16(0.5), 'audio/pcm;channels=9'],
      'raw PCM with 0 channels': [tone16(0.5), 'audio/pcm;channels=0'],
      'raw PCM with a rate that is no number': [tone16(0.5), 'audio/L16;rate=fast'],
      'FLAC STREAMINFO only': [flacHeader(), 'audio/flac'],
      'FLAC at 1 Hz': [flacHeader({ sampleRate: 1 }), 'audio/flac'],
      'FLAC magic only': [Buffer.from('fLaC'), 'audio/flac'],
      'Ogg capture pattern only': [Buffer.from('OggS'), 'audio/ogg'],
      'an Ogg Opus head with 255 channels': [oggOpusWithChannels(255), 'audio/ogg'],
      'a WebM magic only': [Uint8Array.of(0x1a, 0x45, 0xdf, 0xa3), 'audio/webm'],
    };
    for (const [name, [bytes, type]] of Object.entries(cases)) {
      it(`${name} is 400 with the fixed sentence`, async () => {
        await expectSttError(post(s, bytes, type), 400, INVALID_FORMAT);
      });
    }
  });

  describe('decompression bombs (3 hours of silence each; the cap is 2 hours)', () => {
    const bombs = allBombs(BOMB_SECONDS);
    for (const [name, bomb] of Object.entries(bombs)) {
      it(`${name}: ${bomb.bytes.length} bytes are 400 naming the cap`, async () => {
        await expectSttError(post(s, bomb.bytes, bomb.contentType), 400, 'Audio duration exceeds maximum limit of 2 hours');
      });
    }

    it('a bomb given as a URL is refused the same way', async () => {
      const bytes = flacBomb(BOMB_SECONDS, false);
      const files = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'audio/flac' }).end(bytes));
      await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
      try {
        const url = `http://127.0.0.1:${(files.address() as AddressInfo).port}/bomb.flac`;
        const res = await s.api('/api/v1/stt/get_text', { method: 'POST', json: { url } });
        await expectSttError(res.json().then((body) => ({ res, body })), 400, 'Audio duration exceeds maximum limit of 2 hours');
      } finally {
        files.close();
      }
    });

    it('ffmpeg is killed when the client goes away', async () => {
      const controller = new AbortController();
      const request = post(s, adtsBomb(BOMB_SECONDS), 'audio/aac', { signal: controller.signal }).catch(() => undefined);
      for (let i = 0; i < 200 && ffmpegChildren() === 0; i++) await sleep(10);
      assert.equal(ffmpegChildren(), 1, 'ffmpeg runs while the request is open');
      controller.abort();
      await request;
      for (let i = 0; i < 100 && ffmpegChildren() > 0; i++) await sleep(20);
      assert.equal(ffmpegChildren(), 0, 'no ffmpeg left once the client is gone');
    });
  });
});

describe('POST /api/v1/stt/get_text with a 10 s cap and one ffmpeg slot', { skip: NEEDS }, () => {
  let s: TestServer;
  before(async () => {
    s = await startHostileServer({ limits: { maxAudioSeconds: 10 }, ffmpeg: { maxConcurrent: 1, queueSize: 0 } });
  });
  after(() => s?.close());

  it('audio just under the cap is transcribed, just over it is 400 naming the configured limit', async () => {
    const under = await post(s, wav(tone16(9.9)), 'audio/wav');
    assert.equal(under.res.status, 200, JSON.stringify(under.body));
    await expectSttError(post(s, wav(tone16(10.1)), 'audio/wav'), 400, 'Audio duration exceeds maximum limit of 10 seconds');
    await expectSttError(post(s, oggOpusBomb(11), 'audio/ogg'), 400, 'Audio duration exceeds maximum limit of 10 seconds');
  });

  it('ffmpeg decodes past the one slot are 503 with Retry-After, the others go through', async () => {
    const answers = await Promise.all([1, 2, 3, 4].map(() => post(s, adtsBomb(5), 'audio/aac')));
    const busy = answers.filter((a) => a.res.status === 503);
    assert.ok(busy.length >= 1, `statuses ${answers.map((a) => a.res.status)}`);
    for (const { res, body } of answers) {
      if (res.status === 503) {
        assert.ok(Number(res.headers.get('retry-after')) >= 1);
        assert.deepEqual(Object.keys(body).sort(), ['error', 'request_id']);
        assert.match(body.error, /busy/);
      } else {
        assert.equal(res.status, 200, JSON.stringify(body));
      }
    }
  });
});

/** An Ogg Opus file whose OpusHead declares `channels` channels (mapping family 255). */
function oggOpusWithChannels(channels: number): Uint8Array {
  const bytes = oggOpusBomb(1);
  const out = Buffer.from(bytes);
  // OpusHead is the first packet: page header (27) + 1 lacing byte, then "OpusHead", version, channels.
  const at = 28 + 9;
  out[at] = channels;
  return new Uint8Array(out);
}

describe('POST /api/v1/stt/get_text with one decode slot and no queue', { skip: NEEDS }, () => {
  let s: TestServer;
  before(async () => {
    s = await startHostileServer({ limits: { maxConcurrentDecodes: 1, decodeQueueSize: 0 } });
  });
  after(() => s?.close());

  it('decodes past the slot are 503 with Retry-After while a bomb is being counted', async () => {
    // A FLAC of unknown length is decoded up to the 2-hour cap: a second or more in the slot.
    const bomb = flacBomb(BOMB_SECONDS, false);
    const answers = await Promise.all([bomb, bomb, bomb].map((bytes) => post(s, bytes, 'audio/flac')));
    const statuses = answers.map((a) => a.res.status).sort();
    assert.deepEqual(statuses, [400, 503, 503]);
    for (const { res, body } of answers) {
      assert.deepEqual(Object.keys(body).sort(), ['error', 'request_id']);
      if (res.status === 503) {
        assert.ok(Number(res.headers.get('retry-after')) >= 1);
        assert.match(body.error, /busy/);
      } else {
        assert.equal(body.error, 'Audio duration exceeds maximum limit of 2 hours');
      }
    }
  });
});
