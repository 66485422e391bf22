/**
 * Synthesis bounds through real HTTP: dictionary size and count caps, the text limit checked again
 * after dictionaries and normalisation, and the cap on audio produced by one request.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { modelsDirWith } from '../../helpers/models.js';
import { skipWithoutPg, withPgSchema } from '../../helpers/pg-schema.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { allSseEvents, chunkBytes } from '../../helpers/sse.js';

const ESPEAK = 'espeak-en-us-female';
const TONES_16K = 'fake-piper-tones-en_US-16k';
const MAX_OUTPUT_SECONDS = 5;
const MAX_PREPARED = 12_000;

let s: TestServer;
before(async () => {
  s = await startTestServer({
    engines: true,
    config: {
      modelsDir: modelsDirWith([TONES_16K]),
      limits: { maxOutputSeconds: MAX_OUTPUT_SECONDS, maxPreparedTextChars: MAX_PREPARED, maxDictsPerAccount: 3 },
      rateLimits: { synthesis: { perMinute: 0 }, management: { perMinute: 0 } },
      logLevel: 'silent',
    },
  });
});
after(() => s?.close());

/** A fresh account on `server`: the per-account dictionary cap is under test. */
async function newAccount(server: TestServer = s): Promise<(path: string, init?: RequestInit & { json?: unknown }) => Promise<Response>> {
  const { key } = await server.server.storage.apiKeys.create({ name: 'limits' });
  return (path, init = {}) =>
    server.api(path, { ...init, headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${key}` } });
}

async function expectInvalid(r: Response, message: RegExp): Promise<void> {
  const body = await r.json();
  assert.equal(r.status, 400, JSON.stringify(body));
  assert.deepEqual(Object.keys(body).sort(), ['error', 'message']);
  assert.equal(body.error, 'InvalidRequest');
  assert.match(body.message, message);
}

const items = (n: number, pronunciation = (i: number) => `say ${i}`) =>
  Array.from({ length: n }, (_, i) => ({ word: `word${i}`, pronunciation: pronunciation(i) }));

describe('pronunciation dictionary caps', () => {
  it('a dictionary holds at most limits.maxDictEntries entries (POST and PUT)', async () => {
    const api = await newAccount();
    await expectInvalid(await api('/api/v1/pronunciation-dicts', { method: 'POST', json: { items: items(10_001) } }), /^items must have at most 10000 items$/);
    const ok = await api('/api/v1/pronunciation-dicts', { method: 'POST', json: { items: items(10_000) } });
    assert.equal(ok.status, 200);
    const { id } = await ok.json();
    await expectInvalid(await api('/api/v1/pronunciation-dicts', { method: 'PUT', json: { id, items: items(10_001) } }), /at most 10000 items/);
  });

  /** Six creations at once for an account allowed three: exactly three are made. */
  async function createAtOnce(api: Awaited<ReturnType<typeof newAccount>>): Promise<void> {
    const create = () => api('/api/v1/pronunciation-dicts', { method: 'POST', json: { items: items(1) } });
    const answers = await Promise.all(Array.from({ length: 6 }, create));
    assert.deepEqual(answers.map((r) => r.status).sort(), [200, 200, 200, 400, 400, 400]);
    for (const r of answers.filter((a) => a.status === 400)) {
      await expectInvalid(r, /^an account may hold at most 3 pronunciation dictionaries; delete one first$/);
    }
    const listed = (await (await api('/api/v1/pronunciation-dicts')).json()) as { id: string }[];
    assert.equal(listed.length, 3);
    await api('/api/v1/pronunciation-dicts', { method: 'DELETE', json: { id: listed[0]!.id } });
    assert.equal((await create()).status, 200, 'room again after a delete');
  }

  it('an account holds at most limits.maxDictsPerAccount dictionaries, also when it creates them all at once', async () =>
    createAtOnce(await newAccount(s)));

  it('the same on PostgreSQL, where the creations run in parallel transactions', { skip: skipWithoutPg }, () =>
    withPgSchema('dicts', async (databaseUrl) => {
      const onPg = await startTestServer({ config: { databaseUrl, limits: { maxDictsPerAccount: 3 }, rateLimits: { management: { perMinute: 0 } } } });
      try {
        await createAtOnce(await newAccount(onPg));
      } finally {
        await onPg.close();
      }
    }));

  it('a 10,000-entry dictionary applies: the audio is that of the respelt text', async () => {
    const api = await newAccount();
    const created = await api('/api/v1/pronunciation-dicts', {
      method: 'POST',
      json: { items: [...items(9_999), { word: 'Tomato', pronunciation: 'potato salad with extra cheese' }] },
    });
    assert.equal(created.status, 200);
    const { id } = await created.json();
    const seconds = async (body: Record<string, unknown>) => {
      const r = await api('/api/v1/tts-v2/get_speech', { method: 'POST', json: { voice_id: ESPEAK, ...body } });
      assert.equal(r.status, 200);
      await r.arrayBuffer();
      return Number(r.headers.get('x-audio-duration'));
    };
    const withDict = await seconds({ text: 'I like TOMATO soup.', pronunciation_dicts: [id] });
    const written = await seconds({ text: 'I like potato salad with extra cheese soup.' });
    assert.ok(Math.abs(withDict - written) < 0.05, `with the dictionary ${withDict} s, respelt text ${written} s`);
  });
});

describe('text length after expansion', () => {
  it('a dictionary that blows a short text up past limits.maxPreparedTextChars is a 400 naming the limit', async () => {
    const api = await newAccount();
    const created = await api('/api/v1/pronunciation-dicts', { method: 'POST', json: { items: [{ word: 'x', pronunciation: 'y'.repeat(480) }] } });
    const { id } = await created.json();
    const text = 'x '.repeat(100); // 200 characters become 48,100
    for (const endpoint of ['stream', 'get_speech']) {
      const r = await api(`/api/v1/tts-v2/${endpoint}`, { method: 'POST', json: { text, voice_id: ESPEAK, pronunciation_dicts: [id] } });
      await expectInvalid(r, new RegExp(`^text is 48100 characters long after applying pronunciation_dicts, more than the limit of ${MAX_PREPARED}$`));
    }
  });

  it('numbers spelt out past the limit are a 400 too (voices whose text Parley normalises)', async () => {
    const text = '1234567 '.repeat(1_200).trim(); // 9,599 characters, about 85,000 spelt out
    assert.ok(text.length <= 10_000);
    for (const endpoint of ['stream', 'get_speech']) {
      const r = await s.api(`/api/v1/tts-v2/${endpoint}`, { method: 'POST', json: { text, voice_id: TONES_16K, language: 'en' } });
      await expectInvalid(r, new RegExp(`after normalisation .* more than the limit of ${MAX_PREPARED}$`));
    }
  });
});

describe('audio per request (limits.maxOutputSeconds)', () => {
  const text = Array.from({ length: 10 }, (_, i) => `This is sentence number ${i + 1}, long enough to pass the limit.`).join(' ');
  const limitMessage = new RegExp(`^the audio would be longer than the limit of ${MAX_OUTPUT_SECONDS} seconds per request`);

  it('get_speech answers 400 naming the limit, before sending any audio', async () => {
    const r = await s.api('/api/v1/tts-v2/get_speech', { method: 'POST', json: { text, voice_id: ESPEAK } });
    await expectInvalid(r, limitMessage);
  });

  it('a stream sends the audio up to the limit, then the error event and no completion', async () => {
    const r = await s.api('/api/v1/tts-v2/stream', { method: 'POST', json: { text, voice_id: ESPEAK, output_format: 'pcm', sample_rate: 16000 } });
    assert.equal(r.status, 200);
    const events = await allSseEvents(r);
    const last = events.at(-1)!;
    assert.equal(last.event, 'error');
    const err = JSON.parse(last.data);
    assert.deepEqual(Object.keys(err).sort(), ['error', 'message', 'request_id', 'status']);
    assert.equal(err.error, 'InvalidRequest');
    assert.equal(err.status, '400');
    assert.match(err.message, limitMessage);
    assert.ok(!events.some((e) => e.event === 'complete'));
    const { bytes } = chunkBytes(events);
    assert.ok(bytes.length > 0 && bytes.length <= MAX_OUTPUT_SECONDS * 16000 * 2, `${bytes.length} bytes of 16 kHz PCM`);
  });

  it('a text within the limit still completes', async () => {
    const r = await s.api('/api/v1/tts-v2/get_speech', { method: 'POST', json: { text: 'Short.', voice_id: ESPEAK } });
    assert.equal(r.status, 200);
    assert.ok(Number(r.headers.get('x-audio-duration')) <= MAX_OUTPUT_SECONDS);
    await r.arrayBuffer();
  });
});
