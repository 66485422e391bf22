/**
 * The Wyoming protocol over a real TCP socket, as Home Assistant's Wyoming integration speaks it.
 * The client below follows the protocol's published definitions, OHF-Voice/wyoming at commit
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
import { connect, createServer, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { parseWav } from '../../../src/audio/wav.js';
import { ConfigError, loadConfig } from '../../../src/config.js';
import { corpusFile, modelsDirWith, needs, REAL_TEST_MODELS } from '../../helpers/models.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { corpusEntries } from '../../engines/stt-fixtures.js';
import { wordErrorRate } from '../../helpers/transcript-accuracy.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH], corpus: true });
const FILE = 'en/jfk-inaugural-1961.wav';
const KEY = `sk_${'w'.repeat(40)}`;
const MAX_MESSAGE_BYTES = 64 * 1024;
const IDLE_MS = 3_000;
const MAX_CONNECTIONS = 3;

interface Event {
  type: string;
  data: Record<string, any>;
  payload?: Buffer;
}

/** A Wyoming client written from event.py: writes events as async_write_event does, reads them as async_read_event does. */
class WyomingClient {
  private buffer = Buffer.alloc(0);
  private readonly events: Event[] = [];
  private waiting: (() => void) | undefined;
  ended = false;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.parse();
    });
    socket.on('end', () => {
      this.ended = true;
      this.waiting?.();
    });
    socket.on('error', () => undefined);
  }

  static open(port: number): Promise<WyomingClient> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => resolve(new WyomingClient(socket)));
      socket.once('error', reject);
    });
  }

  private parse(): void {
    for (;;) {
      const newline = this.buffer.indexOf(10);
      if (newline < 0) return;
      const header = JSON.parse(this.buffer.subarray(0, newline).toString('utf8'));
      const dataLength = header.data_length ?? 0;
      const payloadLength = header.payload_length ?? 0;
      if (this.buffer.length < newline + 1 + dataLength + payloadLength) return;
      let at = newline + 1;
      const data = { ...(header.data ?? {}), ...(dataLength ? JSON.parse(this.buffer.subarray(at, at + dataLength).toString('utf8')) : {}) };
      at += dataLength;
      const payload = payloadLength ? Buffer.from(this.buffer.subarray(at, at + payloadLength)) : undefined;
      this.buffer = this.buffer.subarray(at + payloadLength);
      assert.equal(typeof header.version, 'string', 'every event carries the protocol version');
      this.events.push({ type: header.type, data, ...(payload && { payload }) });
      this.waiting?.();
    }
  }

  send(type: string, data: Record<string, unknown> = {}, payload?: Buffer): void {
    this.socket.write(WyomingClient.encode(type, data, payload));
  }

  static encode(type: string, data: Record<string, unknown> = {}, payload?: Buffer): Buffer {
    const header: Record<string, unknown> = { type, version: '1.8.0' };
    const dataBytes = Object.keys(data).length ? Buffer.from(JSON.stringify(data)) : undefined;
    if (dataBytes) header.data_length = dataBytes.length;
    if (payload) header.payload_length = payload.length;
    return Buffer.concat([Buffer.from(JSON.stringify(header) + '\n'), ...(dataBytes ? [dataBytes] : []), ...(payload ? [payload] : [])]);
  }

  /** The next event (in order), within timeoutMs. */
  async next(timeoutMs = 30_000): Promise<Event> {
    const deadline = Date.now() + timeoutMs;
    while (this.events.length === 0) {
      if (this.ended) throw new Error('connection ended');
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('no event in time');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiting = () => (clearTimeout(timer), resolve());
      });
    }
    return this.events.shift()!;
  }

  /** Events up to and including the first of `type`. */
  async until(type: string, timeoutMs = 60_000): Promise<Event[]> {
    const out: Event[] = [];
    for (;;) {
      const e = await this.next(timeoutMs);
      out.push(e);
      if (e.type === type) return out;
    }
  }

  close(): void {
    this.socket.destroy();
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

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
