/**
 * The Wyoming protocol over a real TCP socket, as Home Assistant's Wyoming integration speaks it.
 * The client (helpers/wyoming-client.ts) follows the protocol's published definitions, OHF-Voice/wyoming at commit
 * 22f8dea4bcb84efbbb10460c8db00713f0130658: wyoming/event.py (one JSON line with `type`,
 * `version`, `data_length`, `payload_length`, then the data bytes merged into `data`, then the
 * payload), asr.py (transcribe, transcript, transcript-start/-chunk/-stop), tts.py (synthesize,
 * synthesize-start/-chunk/-stop/-stopped, voice {name, language, speaker}), audio.py (audio-start,
 * audio-chunk, audio-stop with rate, width, channels), info.py (describe, info with asr models and
 * tts voices), error.py (error with text and code). Real engines: silero VAD, the tiny streaming
 * zipformer and the built-in eSpeak NG voices.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { parseWav } from '../../../src/audio/wav.js';
import { ConfigError, loadConfig } from '../../../src/config.js';
import { corpusFile, modelsDirWith, needs, REAL_TEST_MODELS } from '../../helpers/models.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { corpusEntries } from '../../engines/stt-fixtures.js';
import { wordErrorRate } from '../../helpers/transcript-accuracy.js';
import { freePort } from '../../helpers/server-process.js';
import { WyomingClient, type WyomingEvent as Event } from '../../helpers/wyoming-client.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH], corpus: true });
const FILE = 'en/jfk-inaugural-1961.wav';
const KEY = `sk_${'w'.repeat(40)}`;
const MAX_MESSAGE_BYTES = 64 * 1024;
const IDLE_MS = 3_000;
const MAX_CONNECTIONS = 3;

function label(file: string): string {
  const text = corpusEntries().find((e) => e.file === file)?.text;
  assert.ok(text, `${file} has a transcript in the corpus manifest`);
  return text;
}

/** Speech-like: at least a tenth of 50 ms windows above -30 dBFS, every sample within 16-bit range. */
function assertSpeechPcm(bytes: Buffer, rate: number, minSeconds: number, maxSeconds: number): void {
  assert.equal(bytes.length % 2, 0, 'whole 16-bit samples');
  const samples = new Int16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
  const seconds = samples.length / rate;
  assert.ok(seconds >= minSeconds && seconds <= maxSeconds, `${seconds.toFixed(2)} s of audio at ${rate} Hz`);
  const window = Math.round(rate * 0.05);
  let loud = 0;
  let windows = 0;
  for (let at = 0; at + window <= samples.length; at += window, windows++) {
    let sum = 0;
    for (let i = at; i < at + window; i++) sum += samples[i]! * samples[i]!;
    if (Math.sqrt(sum / window) / 32768 > 10 ** (-30 / 20)) loud++;
  }
  assert.ok(loud / windows > 0.1, `${loud} of ${windows} windows hold sound`);
}

describe('Wyoming on its own TCP port', { skip: NEEDS }, () => {
  let s: TestServer;
  let port: number;
  let restWer: number;
  let pcm16k: Buffer;

  before(async () => {
    port = await freePort();
    s = await startTestServer({
      engines: true,
      config: {
        modelsDir: modelsDirWith([REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH]),
        logLevel: 'warn',
        apiKey: KEY,
        wyoming: { port, apiKey: KEY },
        realtime: { maxMessageBytes: MAX_MESSAGE_BYTES, idleTimeoutMs: IDLE_MS, maxSocketsPerAccount: MAX_CONNECTIONS },
        rateLimits: { transcription: { perMinute: 0 } },
      },
    });
    const wav = readFileSync(corpusFile(FILE));
    const parsed = parseWav(wav);
    assert.equal(parsed.sampleRate, 16_000);
    pcm16k = Buffer.from(new Int16Array(parsed.samples.map((x) => Math.max(-32768, Math.min(32767, Math.round(x * 32768))))).buffer);
    const form = new FormData();
    form.append('model', 'whisper-1');
    form.append('file', new Blob([wav], { type: 'audio/wav' }), 'a.wav');
    const rest = (await (await s.api('/v1/audio/transcriptions', { method: 'POST', body: form })).json()) as { text: string };
    restWer = wordErrorRate(label(FILE), rest.text);
  });
  after(() => s?.close());

  it('describe → info: the recogniser with its languages, the voices with theirs, both streaming', async () => {
    const c = await WyomingClient.open(port);
    c.send('describe');
    const info = await c.next();
    c.close();
    assert.equal(info.type, 'info');
    const [asr] = info.data.asr;
    assert.equal(asr.supports_transcript_streaming, true);
    const model = asr.models.find((m: any) => m.name === REAL_TEST_MODELS.STREAMING_ENGLISH || m.name.startsWith('sherpa-onnx-kws-zipformer'));
    assert.ok(model, JSON.stringify(asr.models.map((m: any) => m.name)));
    assert.deepEqual(model.languages, ['en']);
    for (const field of ['attribution', 'installed', 'description', 'version']) assert.ok(field in model, field);
    const [tts] = info.data.tts;
    assert.equal(tts.supports_synthesize_streaming, true);
    const voice = tts.voices.find((v: any) => v.name === 'espeak-en-us-female');
    assert.ok(voice);
    assert.ok(voice.languages.includes('en-US') || voice.languages.includes('en'), JSON.stringify(voice.languages));
    assert.equal(voice.installed, true);
  });

  it('transcribe + audio-start/-chunk/-stop: transcript-start, transcript-chunks that add up to the transcript, transcript-stop; within 5 WER points of REST', async () => {
    const c = await WyomingClient.open(port);
    c.send('transcribe', { language: 'en' });
    const format = { rate: 16_000, width: 2, channels: 1 };
    c.send('audio-start', { ...format, timestamp: 0 });
    // 1024-sample chunks, as Home Assistant's satellite sends them (sent as fast as the socket takes them).
    for (let at = 0; at < pcm16k.length; at += 2048) c.send('audio-chunk', format, pcm16k.subarray(at, at + 2048));
    c.send('audio-stop');
    const events = await c.until('transcript-stop');
    c.close();
    assert.equal(events[0]!.type, 'transcript-start');
    assert.equal(events[0]!.data.language, 'en');
    const types = events.map((e) => e.type);
    assert.deepEqual(types.slice(-2), ['transcript', 'transcript-stop']);
    const chunks = events.filter((e) => e.type === 'transcript-chunk');
    assert.ok(chunks.length >= 1);
    assert.deepEqual([...new Set(types)], ['transcript-start', 'transcript-chunk', 'transcript', 'transcript-stop']);
    const transcript = events.at(-2)!.data;
    assert.equal(chunks.map((e) => e.data.text).join(''), transcript.text);
    assert.equal(transcript.language, 'en');
    const wer = wordErrorRate(label(FILE), transcript.text);
    assert.ok(wer <= restWer + 0.05, `"${transcript.text}": WER ${(wer * 100).toFixed(1)} vs REST ${(restWer * 100).toFixed(1)}`);
  });

  it('synthesize: audio-start, audio-chunks of valid 16-bit PCM at the announced rate, audio-stop', async () => {
    const c = await WyomingClient.open(port);
    c.send('synthesize', { text: 'Welcome home. The kitchen lights are now on.', voice: { name: 'espeak-en-us-female' } });
    const events = await c.until('audio-stop');
    c.close();
    const [start, ...rest] = events;
    assert.equal(start!.type, 'audio-start');
    assert.deepEqual({ width: start!.data.width, channels: start!.data.channels }, { width: 2, channels: 1 });
    assert.equal(start!.data.rate, 22050, 'eSpeak NG speaks at 22.05 kHz');
    const chunks = rest.filter((e) => e.type === 'audio-chunk');
    assert.equal(chunks.length, rest.length - 1);
    for (const chunk of chunks) assert.deepEqual([chunk.data.rate, chunk.data.width, chunk.data.channels], [22050, 2, 1]);
    assertSpeechPcm(Buffer.concat(chunks.map((e) => e.payload!)), start!.data.rate, 1.5, 8);
  });

  it('a voice chosen by language, and the default voice when none is named', async () => {
    const c = await WyomingClient.open(port);
    c.send('synthesize', { text: 'Guten Morgen.', voice: { language: 'de' } });
    const german = await c.until('audio-stop');
    c.send('synthesize', { text: 'Good morning.' });
    const english = await c.until('audio-stop');
    c.close();
    assertSpeechPcm(Buffer.concat(german.filter((e) => e.type === 'audio-chunk').map((e) => e.payload!)), german[0]!.data.rate, 0.4, 4);
    assertSpeechPcm(Buffer.concat(english.filter((e) => e.type === 'audio-chunk').map((e) => e.payload!)), english[0]!.data.rate, 0.4, 4);
  });

  it('streaming synthesis: each finished sentence is spoken while the text still streams; the compatibility synthesize is not spoken twice; synthesize-stopped ends it', async () => {
    const c = await WyomingClient.open(port);
    c.send('synthesize-start', { voice: { name: 'espeak-en-us-male' } });
    c.send('synthesize-chunk', { text: 'The front door ' });
    c.send('synthesize-chunk', { text: 'is locked. The gar' });
    // The first sentence is spoken before the rest of the text exists.
    const first = await c.until('audio-stop');
    assert.equal(first[0]!.type, 'audio-start');
    assertSpeechPcm(Buffer.concat(first.filter((e) => e.type === 'audio-chunk').map((e) => e.payload!)), first[0]!.data.rate, 0.5, 4);
    c.send('synthesize-chunk', { text: 'age is open' });
    c.send('synthesize', { text: 'The front door is locked. The garage is open' });
    c.send('synthesize-stop');
    const restEvents = await c.until('synthesize-stopped');
    c.close();
    const starts = restEvents.filter((e) => e.type === 'audio-start').length;
    assert.equal(starts, 1, 'one more audio stream: the last sentence, once');
    assert.equal(restEvents.at(-1)!.type, 'synthesize-stopped');
    assert.equal(restEvents.at(-2)!.type, 'audio-stop');
    assertSpeechPcm(Buffer.concat(restEvents.filter((e) => e.type === 'audio-chunk').map((e) => e.payload!)), first[0]!.data.rate, 0.5, 4);
  });

  it('malformed events and oversize payloads get an error event and the connection goes on', async () => {
    const c = await WyomingClient.open(port);
    c.socket.write('this is not json\n');
    assert.deepEqual(pick(await c.next()), ['error', 'malformed-event']);
    c.socket.write('{"data": {"text": "no type"}}\n');
    assert.deepEqual(pick(await c.next()), ['error', 'malformed-event']);
    c.send('audio-chunk', { rate: 16000, width: 2, channels: 1 }, Buffer.alloc(MAX_MESSAGE_BYTES + 2));
    assert.deepEqual(pick(await c.next()), ['error', 'payload-too-large']);
    c.send('audio-chunk', { rate: 16000, width: 2, channels: 1 }, Buffer.alloc(320));
    assert.deepEqual(pick(await c.next()), ['error', 'malformed-event'], 'audio-chunk without audio-start');
    c.send('audio-start', { rate: 16000, width: 4, channels: 1 });
    assert.deepEqual(pick(await c.next()), ['error', 'unsupported-audio']);
    c.send('synthesize', { text: '' });
    assert.deepEqual(pick(await c.next()), ['error', 'malformed-event']);
    c.send('synthesize', { text: 'Hello.', voice: { name: 'no-such-voice' } });
    assert.deepEqual(pick(await c.next()), ['error', 'unknown-voice']);
    // Data that parses to many objects is refused unparsed; events of other Wyoming services are read past, unanswered.
    c.send('synthesize', { text: 'Hello.', x: Array.from({ length: 5_000 }, () => ({})) });
    assert.deepEqual(pick(await c.next()), ['error', 'payload-too-large']);
    c.send('detection', { name: 'ok_nabu', x: Array.from({ length: 5_000 }, () => ({})) }, Buffer.alloc(320));
    c.send('transcribe', { language: 'tlh' });
    c.send('audio-start', { rate: 16000, width: 2, channels: 1 });
    assert.deepEqual(pick(await c.next()), ['error', 'unsupported-language']);
    c.send('ping', { text: 'still there?' });
    const pong = await c.next();
    assert.deepEqual([pong.type, pong.data.text], ['pong', 'still there?']);
    c.send('describe');
    assert.equal((await c.next()).type, 'info');
    // A header line that never ends cannot be read past: an error, then the server closes the connection.
    c.socket.write(Buffer.alloc(70 * 1024, 'x'));
    assert.deepEqual(pick(await c.next()), ['error', 'payload-too-large']);
    await new Promise((resolve) => (c.ended ? resolve(undefined) : c.socket.once('end', resolve)));
    c.close();
  });

  it('limits: connections per account, and an idle connection closed with an error saying why', async () => {
    const open = await Promise.all(Array.from({ length: MAX_CONNECTIONS }, () => WyomingClient.open(port)));
    for (const c of open) c.send('ping');
    for (const c of open) assert.equal((await c.next()).type, 'pong');
    const extra = await WyomingClient.open(port);
    assert.deepEqual(pick(await extra.next()), ['error', 'too-many-connections']);
    extra.close();
    for (const c of open.slice(1)) c.close();
    const idle = open[0]!;
    const event = await idle.next(IDLE_MS + 5_000);
    assert.deepEqual(pick(event), ['error', 'closed']);
    assert.match(event.data.text, /idle for 3 s/);
    idle.close();
  });
});

function pick(e: Event): [string, string] {
  return [e.type, e.data.code];
}

describe('Wyoming settings', () => {
  it('a port without wyoming.apiKey is a configuration error naming it', () => {
    assert.throws(
      () => loadConfig({ PARLEY_WYOMING__PORT: '10300' }),
      (err: unknown) => err instanceof ConfigError && err.problems.some((p) => /wyoming\.apiKey \(PARLEY_WYOMING__API_KEY\) must be set/.test(p)),
    );
  });

  it('a key that is not (or no longer) valid: each connection gets an unauthorized error and is closed', async () => {
    const port = await freePort();
    const s = await startTestServer({ config: { wyoming: { port, apiKey: `sk_${'u'.repeat(40)}` } } });
    try {
      const c = await WyomingClient.open(port);
      assert.deepEqual(pick(await c.next()), ['error', 'unauthorized']);
      await new Promise((resolve) => (c.ended ? resolve(undefined) : c.socket.once('end', resolve)));
      c.close();
    } finally {
      await s.close();
    }
  });
});

describe('Wyoming synthesis and the account rate limit', () => {
  const BURST = 5;
  let s: TestServer;
  let port: number;

  before(async () => {
    port = await freePort();
    s = await startTestServer({
      engines: true,
      config: { logLevel: 'warn', apiKey: KEY, wyoming: { port, apiKey: KEY }, rateLimits: { synthesis: { perMinute: 60, burst: BURST } } },
    });
  });
  after(() => s?.close());

  it('200 synthesize events in one burst: each beyond the bucket gets a rate-limited error, the connection goes on, and REST with the same key then gets 429', async () => {
    const c = await WyomingClient.open(port);
    const sent = 200;
    for (let i = 0; i < sent; i++) c.send('synthesize', { text: 'Hi.', voice: { name: 'espeak-en-us-female' } });
    let spoken = 0;
    let refused = 0;
    while (spoken + refused < sent) {
      const e = await c.next();
      if (e.type === 'audio-stop') spoken++;
      else if (e.type === 'error') {
        assert.equal(e.data.code, 'rate-limited', e.data.text);
        refused++;
      }
    }
    console.log(`${sent} synthesize events in one burst (bucket of ${BURST}, 1 a second): ${spoken} spoken, ${refused} refused`);
    assert.ok(spoken < 30, `${spoken} of ${sent} spoken (the bucket holds ${BURST}, refilled at 1 a second)`);
    assert.equal(refused, sent - spoken);
    // A stream is one request too: refused at its start, it still ends with synthesize-stopped.
    c.send('synthesize-start', { voice: { name: 'espeak-en-us-female' } });
    c.send('synthesize-chunk', { text: 'Refused. ' });
    c.send('synthesize', { text: 'Refused.' });
    c.send('synthesize-stop');
    const stream = await c.until('synthesize-stopped');
    assert.deepEqual(stream.map(pick), [['error', 'rate-limited'], ['synthesize-stopped', undefined]]);
    c.send('ping', { text: 'still there?' });
    assert.deepEqual(await c.next(), { type: 'pong', data: { text: 'still there?' } });
    c.close();
    const rest = await s.api('/api/v1/tts-v2/get_speech', {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}` },
      json: { text: 'Hi.', voice_id: 'espeak-en-us-female', output_format: 'wav' },
    });
    await rest.arrayBuffer();
    assert.equal(rest.status, 429, 'the REST request is charged to the same bucket');
  });
});
