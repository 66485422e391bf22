/**
 * The official Python SDK, 5.5.0 (smallest-inc/smallest-python-sdk @ 86842be), pointed at Parley
 * with `SmallestAI(environment=SmallestAIEnvironment(waves=<url>, waves_ws=<ws url>, atoms=…,
 * payment=…))`: every request and frame of its `client.waves` calls and helpers, replayed as the
 * source builds them, each checked by what the SDK does with the answer.
 *
 * Sources (under src/smallestai/): core/client_wrapper.py (the headers of every call),
 * core/http_client.py (`<waves>/<path>`, the JSON body without omitted fields, httpx 0.28's compact
 * JSON), waves/raw_client.py (pronunciation dicts, synthesis, voices, voice cloning),
 * waves/speech_to_text/raw_client.py (transcribe; stream → `<waves_ws>/waves/v1/stt/live`),
 * waves/tts/raw_client.py and socket_client.py (`<waves_ws>/waves/v1/tts/live`),
 * waves/streaming_tts/raw_client.py and socket_client.py (`<waves_ws>/waves/v1/streaming-tts/stream`),
 * waves/helpers/tts.py, waves/helpers/streaming_stt.py and waves/stream_tts.py (WavesStreamingTTS).
 * The async clients (AsyncRawWavesClient, …) send the same requests and frames as the sync ones.
 * Socket frames are `json.dumps` of the message (Python's ", " and ": " separators).
 *
 * Not replayed: `electron.complete` (POST /waves/v1/chat/completions, a hosted language model) and
 * `speech_to_speech.connect` (/waves/v1/s2s): Parley serves neither.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { encodeInt16 } from '../../../src/audio/encode.js';
import { parseWav } from '../../../src/audio/wav.js';
import { corpusFile, modelsDirWith, needs, REAL_TEST_MODELS } from '../../helpers/models.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { allSseEvents } from '../../helpers/sse.js';
import { connect, wsUrl, type TestSocket } from '../../helpers/websocket.js';
import { startReceiver } from '../../jobs/fixtures/receiver.js';

const VOICE = 'espeak-en-us-female';
const TEXT = 'Hello from the Python SDK.';

/** core/client_wrapper.py get_headers(), and what httpx adds to every request. */
function sdkHeaders(key: string): Record<string, string> {
  return {
    'X-Fern-Language': 'Python',
    'X-Fern-Runtime': 'python/3.12.3',
    'X-Fern-Platform': 'linux/6.8.0',
    'X-Fern-SDK-Name': 'smallest-ai',
    'X-Fern-SDK-Version': '5.5.0',
    'X-Source': 'smallest-python-sdk',
    Authorization: `Bearer ${key}`,
    accept: '*/*',
    'accept-encoding': 'gzip, deflate',
    'user-agent': 'python-httpx/0.28.1',
  };
}

interface SdkRequest {
  json?: unknown;
  body?: BodyInit;
  headers?: Record<string, string>;
}

/** One HTTP call as HttpClient.request sends it: `<waves>/<path>`, the JSON body compact. */
function sdkCall(s: TestServer, method: string, path: string, request: SdkRequest = {}): Promise<Response> {
  const headers: Record<string, string> = { ...sdkHeaders(s.key), ...request.headers };
  let body = request.body;
  if (request.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(request.json);
  }
  return fetch(`${s.url}/${path}`, { method, headers, body });
}

/** A socket as the SDK opens it: `<waves_ws><path>` with the client's headers (websockets 13.1). */
function sdkSocket(s: TestServer, path: string): Promise<TestSocket> {
  const { accept: _accept, 'accept-encoding': _encoding, 'user-agent': _agent, ...headers } = sdkHeaders(s.key);
  return connect(wsUrl(s.url, path), { ...headers, 'user-agent': 'Python/3.12 websockets/13.1' });
}

/** Sends the frames, then the decoded audio of the chunks up to `complete` (an error fails). */
async function spoken(socket: TestSocket, frames: string[]): Promise<Buffer> {
  for (const frame of frames) socket.send(frame);
  await socket.until((all) => all.some((m) => m.status === 'complete' || m.status === 'error'));
  socket.close();
  assert.equal(socket.messages.at(-1).status, 'complete', JSON.stringify(socket.messages.at(-1)));
  return Buffer.concat(socket.messages.filter((m) => m.status === 'chunk').map((m) => Buffer.from(m.data.audio, 'base64')));
}

/** Waves' error body, as the SDK's ApiError carries it. */
async function wavesError(res: Response, status: number, message: RegExp): Promise<void> {
  const body = (await res.json()) as Record<string, unknown>;
  assert.equal(res.status, status, JSON.stringify(body));
  assert.equal(body.status, 'error');
  assert.match(String(body.message), message);
}

describe('the Python SDK 5.5.0: synthesis, voices, dictionaries', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ engines: true });
  });
  after(() => s?.close());

  it('get/create/update/delete_pronunciation_dict: GET, POST {items}, PUT {id, items}, DELETE {id} on waves/v1/pronunciation-dicts', async () => {
    const created = await sdkCall(s, 'POST', 'waves/v1/pronunciation-dicts', { json: { items: [{ word: 'Parley', pronunciation: 'par-lee' }] } });
    assert.equal(created.status, 200);
    const dict = (await created.json()) as { id: string; items: { word: string; pronunciation: string }[] };
    assert.deepEqual(dict.items, [{ word: 'Parley', pronunciation: 'par-lee' }]);

    const listed = await sdkCall(s, 'GET', 'waves/v1/pronunciation-dicts');
    assert.equal(listed.status, 200);
    assert.ok(((await listed.json()) as { id: string }[]).some((d) => d.id === dict.id));

    const updated = await sdkCall(s, 'PUT', 'waves/v1/pronunciation-dicts', { json: { id: dict.id, items: [{ word: 'Parley', pronunciation: 'parr-lay' }] } });
    assert.equal(updated.status, 200);
    assert.deepEqual(((await updated.json()) as typeof dict).items, [{ word: 'Parley', pronunciation: 'parr-lay' }]);

    // delete_pronunciation_dict sends its id as a JSON body, with content-type set by the call.
    const deleted = await sdkCall(s, 'DELETE', 'waves/v1/pronunciation-dicts', { json: { id: dict.id } });
    assert.equal(deleted.status, 200);
    assert.deepEqual(await deleted.json(), { id: dict.id, deleted: true });
  });

  it('get_voices(model="lightning-v3.1"): GET waves/v1/lightning-v3.1/get_voices', async () => {
    const res = await sdkCall(s, 'GET', 'waves/v1/lightning-v3.1/get_voices');
    assert.equal(res.status, 200);
    const { voices } = (await res.json()) as { voices: { voiceId: string; displayName: string; tags: unknown }[] };
    assert.ok(voices.some((v) => v.voiceId === VOICE));
  });

  it('synthesize_tts (and helpers synthesize_bytes, synthesize_to_file): POST waves/v1/tts with Accept: audio/wav, the body without omitted fields', async () => {
    // helpers/tts.py: model lightning_v3.1 and output_format wav unless given.
    const res = await sdkCall(s, 'POST', 'waves/v1/tts', {
      json: { text: TEXT, voice_id: VOICE, model: 'lightning_v3.1', output_format: 'wav' },
      headers: { Accept: 'audio/wav' },
    });
    assert.equal(res.status, 200);
    const wav = parseWav(new Uint8Array(await res.arrayBuffer()));
    assert.ok(wav.samples.length > wav.sampleRate, 'more than a second of speech');
  });

  it('synthesize_tts(text=…, voice_id=…): the generated call alone sends only those two, with Accept: audio/wav', async () => {
    const res = await sdkCall(s, 'POST', 'waves/v1/tts', { json: { text: TEXT, voice_id: VOICE }, headers: { Accept: 'audio/wav' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'audio/wav');
    assert.ok(parseWav(new Uint8Array(await res.arrayBuffer())).samples.length > 0);
  });

  it('synthesize_tts with every option it types: sample_rate, speed, language, output_format pcm, word_timestamps, session_id, request_id', async () => {
    const res = await sdkCall(s, 'POST', 'waves/v1/tts', {
      json: { text: TEXT, voice_id: VOICE, model: 'lightning_v3.1', sample_rate: 16000, speed: 1.2, language: 'en', output_format: 'pcm', word_timestamps: true, session_id: 'session-1', request_id: 'request-1' },
      headers: { Accept: 'audio/wav' },
    });
    assert.equal(res.status, 200);
    const pcm = new Uint8Array(await res.arrayBuffer());
    assert.notEqual(Buffer.from(pcm.subarray(0, 4)).toString('latin1'), 'RIFF', 'pcm is raw samples');
    assert.ok(pcm.length > 16000 * 2 * 0.8);
  });

  it('synthesize_with_expiry: the same request with x-expire-content: true still speaks (Parley keeps no audio)', async () => {
    const res = await sdkCall(s, 'POST', 'waves/v1/tts', {
      json: { text: TEXT, voice_id: VOICE, model: 'lightning_v3.1', output_format: 'wav' },
      headers: { Accept: 'audio/wav', 'x-expire-content': 'true' },
    });
    assert.equal(res.status, 200);
    assert.ok(parseWav(new Uint8Array(await res.arrayBuffer())).samples.length > 0);
  });

  it('synthesize_sse_tts: POST waves/v1/tts/live, SSE whose data the SDK yields as strings', async () => {
    const res = await sdkCall(s, 'POST', 'waves/v1/tts/live', { json: { text: TEXT, voice_id: VOICE, model: 'lightning_v3.1', sample_rate: 24000 } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    const events = await allSseEvents(res);
    const frames = events.map((e) => JSON.parse(e.data) as { audio?: string; done?: boolean });
    const audio = Buffer.concat(frames.filter((f) => f.audio).map((f) => Buffer.from(f.audio!, 'base64')));
    assert.ok(audio.length > 24000 * 2, 'more than a second of 16-bit audio');
    assert.equal(frames.at(-1)!.done, true);
  });

  for (const [call, path] of [
    ['synthesize_lightning', 'lightning/get_speech'],
    ['synthesize_lightning_large', 'lightning-large/get_speech'],
    ['synthesize_lightning_v2', 'lightning-v2/get_speech'],
    ['synthesize_sse_lightning_large', 'lightning-large/stream'],
    ['synthesize_sse_lightning_v2', 'lightning-v2/stream'],
  ] as const) {
    it(`${call}: its only parameter is output_format, so the body lacks text: a 400 naming it; with the text as additional_body_parameters it speaks, marked deprecated`, async () => {
      await wavesError(await sdkCall(s, 'POST', `waves/v1/${path}`, { json: { output_format: 'wav' } }), 400, /text/);

      // request_options={"additional_body_parameters": {"text": …, "voice_id": …}} merges into the body.
      const res = await sdkCall(s, 'POST', `waves/v1/${path}`, { json: { output_format: 'wav', text: TEXT, voice_id: VOICE } });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('deprecation'), 'true');
      if (path.endsWith('/stream')) {
        // A product name's /stream has the service's frames of today (the SDK yields each event's data).
        const events = await allSseEvents(res);
        assert.ok(events.some((e) => e.event === 'audio'));
        assert.deepEqual(JSON.parse(events.at(-1)!.data), { status: '200', done: true });
      } else {
        assert.ok(parseWav(new Uint8Array(await res.arrayBuffer())).samples.length > 0);
      }
    });
  }

  it('tts.connect + synthesize_streaming_tts: <waves_ws>/waves/v1/tts/live, one TtsRequestMessage, chunks then complete', async () => {
    const socket = await sdkSocket(s, '/waves/v1/tts/live');
    const audio = await spoken(socket, [`{"voice_id": "${VOICE}", "text": "${TEXT}", "model": "lightning_v3.1", "sample_rate": 24000, "request_id": "py-1"}`]);
    // The client's request_id comes back as external_request_id; request_id is the service's own.
    assert.ok(socket.messages.every((m) => m.external_request_id === 'py-1' && m.request_id !== 'py-1'));
    assert.ok(audio.length > 24000 * 2);
  });

  it('streaming_tts.connect + synthesize_streaming: <waves_ws>/waves/v1/streaming-tts/stream, a StreamTtsRequestMessage with is_streaming/is_final', async () => {
    const socket = await sdkSocket(s, '/waves/v1/streaming-tts/stream');
    const audio = await spoken(socket, [`{"voice_id": "${VOICE}", "text": "${TEXT}", "is_streaming": false, "is_final": true, "language": "en", "sample_rate": 24000, "speed": 1.0}`]);
    assert.ok(audio.length > 24000 * 2);
  });

  /** WavesStreamingTTS._create_payload with TTSConfig's defaults. */
  const helperFrame = (text: string, flags: string) =>
    `{"voice_id": "${VOICE}", "model": "lightning_v3.1", "text": "${text}", "language": "en", "sample_rate": 24000, "speed": 1.0, "max_buffer_flush_ms": 0, ${flags}}`;

  it('WavesStreamingTTS.synthesize (waves/stream_tts.py, its ws_url set to Parley): TTSConfig defaults, continue and flush false', async () => {
    const audio = await spoken(await sdkSocket(s, '/waves/v1/tts/live'), [helperFrame(TEXT, '"continue": false, "flush": false')]);
    assert.ok(audio.length > 24000 * 2);
  });

  it('WavesStreamingTTS.synthesize_streaming: text chunks with continue true, then an empty flush; the audio speaks every chunk', async () => {
    const chunks = ['Hello from ', 'the streaming ', 'helper.'].map((chunk) => helperFrame(chunk, '"continue": true, "flush": false'));
    const audio = await spoken(await sdkSocket(s, '/waves/v1/tts/live'), [...chunks, helperFrame('', '"continue": false, "flush": true')]);
    assert.ok(audio.length > 24000 * 2 * 1.2, 'the three chunks are spoken');
  });
});

const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH], corpus: true });
const SPEECH = 'en/librispeech-1089-134686-0001.wav';

/** The corpus speech as 16 kHz 16-bit PCM, what send_audio_chunk_out is given. */
function speechPcm(): Buffer {
  const wav = parseWav(readFileSync(corpusFile(SPEECH)));
  assert.equal(wav.sampleRate, 16000);
  return Buffer.from(encodeInt16(wav.samples));
}

/** send_close_stream, then the final transcripts up to is_last: the speech's words. */
async function closedTranscript(socket: TestSocket): Promise<void> {
  socket.send('{"type": "close_stream"}');
  await socket.until((all) => all.some((m) => m.is_last), 60_000);
  socket.close();
  const text = socket.messages.filter((m) => m.is_final && m.transcript).map((m) => m.transcript).join(' ');
  assert.ok(text.split(/\s+/).length >= 5, text);
}

/** Binary frames of 100 ms. */
function sendInFrames(socket: TestSocket, pcm: Buffer): void {
  for (let at = 0; at < pcm.length; at += 3200) socket.send(pcm.subarray(at, at + 3200));
}

describe('the Python SDK 5.5.0: transcription and voice cloning', { skip: NEEDS }, () => {
  let s: TestServer;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  before(async () => {
    const modelsDir = modelsDirWith([REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH]);
    [s, receiver] = await Promise.all([
      startTestServer({
        engines: true,
        config: { modelsDir, logLevel: 'silent', rateLimits: { transcription: { perMinute: 0 } }, webhooks: { backoffBaseMs: 5, backoffCapMs: 40, timeoutMs: 5000, pollMs: 20 } },
      }),
      startReceiver(),
    ]);
  });
  after(async () => {
    await s?.close();
    await receiver?.close();
  });

  it('speech_to_text.transcribe: POST waves/v1/stt/?model=pulse&language=en&word_timestamps=true, the audio as application/octet-stream', async () => {
    // The 5.5.0 call passes no base_url, so httpx's client raises before sending; this is the
    // request the call describes, as a client with that fixed would send it.
    const res = await sdkCall(s, 'POST', 'waves/v1/stt/?model=pulse&language=en&word_timestamps=true', {
      body: readFileSync(corpusFile(SPEECH)),
      headers: { 'content-type': 'application/octet-stream' },
    });
    // TranscriptionResponse: status and transcription required; words (word, start, end), utterances, metadata.duration read.
    const body = (await res.json()) as { status: string; transcription: string; words: { word: string; start: number; end: number }[]; utterances: unknown[]; metadata: { duration: number } };
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.status, 'success');
    assert.ok(body.transcription.split(/\s+/).length >= 5, body.transcription);
    assert.ok(body.words.length >= 5);
    for (const w of body.words) assert.ok(typeof w.word === 'string' && typeof w.start === 'number' && typeof w.end === 'number', JSON.stringify(w));
    assert.ok(Array.isArray(body.utterances));
    assert.ok(body.metadata.duration > 1);
  });

  it('speech_to_text.transcribe with every parameter it types: the params dict in its order (None dropped, True as "true"), AsyncAccepted, then the result delivered with webhook_method GET', async () => {
    // raw_client.py transcribe: params model, language, word_timestamps, diarize, webhook_url,
    // webhook_method, webhook_extra, redact_pii, redact_pci, emotion_detection, gender_detection.
    receiver.setAnswer(() => 200);
    const params = new URLSearchParams({
      model: 'pulse',
      language: 'en',
      word_timestamps: 'true',
      diarize: 'false',
      webhook_url: receiver.url,
      webhook_method: 'GET',
      webhook_extra: 'ticket:7,team:support',
      redact_pii: 'true',
      redact_pci: 'true',
      emotion_detection: 'false',
      gender_detection: 'false',
    });
    const res = await sdkCall(s, 'POST', `waves/v1/stt/?${params}`, { body: readFileSync(corpusFile(SPEECH)), headers: { 'content-type': 'application/octet-stream' } });
    const accepted = (await res.json()) as { status: string; request_id: string };
    assert.equal(res.status, 200, JSON.stringify(accepted));
    assert.deepEqual(Object.keys(accepted).sort(), ['request_id', 'status'], 'AsyncAccepted');
    assert.equal(accepted.status, 'processing');
    const deadline = Date.now() + 60_000;
    while (receiver.forRequest(accepted.request_id).length === 0) {
      assert.ok(Date.now() < deadline, 'the webhook arrives');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const [delivered] = receiver.forRequest(accepted.request_id);
    assert.equal(delivered!.method, 'GET');
    const payload = delivered!.json as { status: string; transcription: string; words: unknown[]; ticket: string; team: string; redacted_entities: unknown[] };
    assert.equal(payload.status, 'success');
    assert.ok(payload.transcription.split(/\s+/).length >= 5, payload.transcription);
    assert.ok(payload.words.length >= 5);
    assert.deepEqual([payload.ticket, payload.team], ['7', 'support']);
    assert.ok(Array.isArray(payload.redacted_entities), 'redaction was asked for');
  });

  it('stream_speech_to_text (helpers/streaming_stt.py): the handshake query, binary PCM, finalize, close_stream', async () => {
    const socket = await sdkSocket(s, '/waves/v1/stt/live?model=pulse&language=en&sample_rate=16000&encoding=linear16');
    sendInFrames(socket, speechPcm());
    socket.send('{"type": "finalize"}');
    await socket.until((all) => all.some((m) => m.is_final), 60_000);
    await closedTranscript(socket);
  });

  it('stream_speech_to_text(redact_pii=["ssn", "email"], redact_pci=["card"]): the lists comma-joined (urlencoded), accepted, every transcript saying what it redacted', async () => {
    // build_stt_stream_query's dict order, then urllib.parse.urlencode (the comma as %2C).
    const socket = await sdkSocket(s, '/waves/v1/stt/live?model=pulse&language=en&sample_rate=16000&encoding=linear16&redact_pii=ssn%2Cemail&redact_pci=card');
    sendInFrames(socket, speechPcm());
    await closedTranscript(socket);
    const transcripts = socket.messages.filter((m) => m.type === 'transcription');
    assert.ok(transcripts.length > 0);
    for (const m of transcripts) assert.ok(Array.isArray(m.redacted_entities), JSON.stringify(m));
  });

  it('speech_to_text.stream() without request_options: <waves_ws>/waves/v1/stt/live with no query, 16 kHz linear16 by default', async () => {
    const socket = await sdkSocket(s, '/waves/v1/stt/live');
    sendInFrames(socket, speechPcm());
    await closedTranscript(socket);
  });

  it('create_voice_clone and list_voice_clones: multipart displayName + file on POST waves/v1/voice-cloning, then GET', async () => {
    const form = new FormData();
    form.append('displayName', 'python sdk');
    // httpx names the part after the file and guesses its type from the name.
    form.append('file', new Blob([readFileSync(corpusFile('en/jfk-inaugural-1961.wav'))], { type: 'audio/x-wav' }), 'sample.wav');
    const created = await sdkCall(s, 'POST', 'waves/v1/voice-cloning', { body: form });
    const { data } = (await created.json()) as { data: { voiceId: string; displayName: string; status: string } };
    assert.equal(created.status, 200, JSON.stringify(data));
    assert.equal(data.displayName, 'python sdk');

    const listed = await sdkCall(s, 'GET', 'waves/v1/voice-cloning');
    assert.equal(listed.status, 200);
    assert.ok(((await listed.json()) as { data: { voiceId: string }[] }).data.some((c) => c.voiceId === data.voiceId));
  });
});

/**
 * The Python SDK 4.3.0 (smallest-inc/smallest-python-sdk @ 3cb474dc3b38e5ddf979aa9648d34928489b7a7b,
 * the last commit before the Fern-generated 5.0.0), `WavesClient.transcribe` and
 * `AsyncWavesClient.transcribe` (smallestai/waves/waves_client.py, async_waves_client.py):
 * `POST <API_BASE_URL>/speech-to-text` (API_BASE_URL = https://waves-api.smallest.ai/api/v1) with
 * `Authorization: Bearer <key>` and a multipart form: the text fields model ("lightning", the
 * only one utils.py validate_asr_input allows), language (default "en"), word_timestamps,
 * age_detection, gender_detection, emotion_detection (`str(bool(x)).lower()`), and the file part
 * `file` named after the file, typed `audio/<extension>` (audio/wav, audio/mp3). The sync client
 * (requests) writes the fields before the file, the async one (aiohttp FormData) the file first.
 * Anything but 200 raises APIError; the JSON answer is returned to the caller as it is.
 */
describe('the Python SDK 4.3.0: transcribe', { skip: NEEDS }, () => {
  let s: TestServer;
  before(async () => {
    const modelsDir = modelsDirWith([REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH]);
    s = await startTestServer({ engines: true, config: { modelsDir, logLevel: 'silent', rateLimits: { transcription: { perMinute: 0 } } } });
  });
  after(() => s?.close());

  type Fields = { language?: string; word_timestamps?: boolean; age_detection?: boolean; gender_detection?: boolean; emotion_detection?: boolean };

  /** The form of transcribe(file_path, **fields), in the order of the sync or the async client. */
  function transcribeForm(file: string, fields: Fields, order: 'sync' | 'async'): FormData {
    const form = new FormData();
    const name = file.split('/').pop()!;
    const part = () => form.append('file', new Blob([readFileSync(corpusFile(file))], { type: `audio/${name.split('.').pop()}` }), name);
    const text = () => {
      form.append('model', 'lightning');
      form.append('language', fields.language ?? 'en');
      for (const flag of ['word_timestamps', 'age_detection', 'gender_detection', 'emotion_detection'] as const) form.append(flag, String(Boolean(fields[flag])));
    };
    if (order === 'async') {
      part();
      text();
    } else {
      text();
      part();
    }
    return form;
  }

  /** The request: requests 2.32 (sync) or aiohttp 3.x (async) with the SDK's one header. */
  function transcribe(form: FormData, order: 'sync' | 'async'): Promise<Response> {
    const agent: Record<string, string> = order === 'sync' ? { 'User-Agent': 'python-requests/2.32.3', Accept: '*/*', 'Accept-Encoding': 'gzip, deflate' } : { 'User-Agent': 'Python/3.12 aiohttp/3.11.18', Accept: '*/*' };
    return fetch(`${s.url}/api/v1/speech-to-text`, { method: 'POST', headers: { ...agent, Authorization: `Bearer ${s.key}` }, body: form });
  }

  for (const order of ['sync', 'async'] as const) {
    it(`${order === 'sync' ? 'WavesClient' : 'AsyncWavesClient'}.transcribe(file_path) with its defaults: the transcript and the metadata`, async () => {
      const res = await transcribe(transcribeForm(SPEECH, {}, order), order);
      const body = (await res.json()) as { status: string; transcription: string; text: string; metadata: { filename: string; duration: number }; word_timestamps?: unknown };
      assert.equal(res.status, 200, JSON.stringify(body));
      assert.equal(body.status, 'success');
      assert.ok(body.transcription.split(/\s+/).length >= 5, body.transcription);
      assert.equal(body.text, body.transcription);
      assert.equal(body.metadata.filename, SPEECH.split('/').pop());
      assert.ok(body.metadata.duration > 1);
      assert.equal(body.word_timestamps, undefined, 'not asked for');
    });
  }

  it('transcribe(file_path="jfk.mp3", word_timestamps=True, gender_detection=True): word_timestamps and gender, the mp3 read from its bytes', async () => {
    const res = await transcribe(transcribeForm('formats/jfk.mp3', { word_timestamps: true, gender_detection: true }, 'sync'), 'sync');
    const body = (await res.json()) as { transcription: string; word_timestamps: { word: string; start: number; end: number }[]; gender: string };
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.ok(body.word_timestamps.length >= 5);
    for (const w of body.word_timestamps) assert.deepEqual(Object.keys(w), ['word', 'start', 'end']);
    assert.equal(body.word_timestamps.map((w) => w.word).join(' '), body.transcription);
    assert.ok(body.gender === 'male' || body.gender === 'female', body.gender);
  });

  it('what the SDK turns into APIError: a 400 {error, request_id} naming what is wrong', async () => {
    const refused = async (form: FormData | string, contentType?: string) => {
      const res = await fetch(`${s.url}/api/v1/speech-to-text`, { method: 'POST', headers: { Authorization: `Bearer ${s.key}`, ...(contentType ? { 'content-type': contentType } : {}) }, body: form });
      const body = (await res.json()) as Record<string, string>;
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.deepEqual(Object.keys(body).sort(), ['error', 'request_id']);
      return body.error!;
    };
    const withoutFile = new FormData();
    withoutFile.append('model', 'lightning');
    assert.match(await refused(withoutFile), /file is required/);
    const otherModel = transcribeForm(SPEECH, {}, 'sync');
    otherModel.set('model', 'pulse');
    assert.match(await refused(otherModel), /model must be one of lightning/);
    assert.match(await refused(transcribeForm(SPEECH, { language: 'xx' }, 'sync')), /language must be one of/);
    const badFlag = transcribeForm(SPEECH, {}, 'sync');
    badFlag.set('word_timestamps', 'yes');
    assert.match(await refused(badFlag), /word_timestamps must be true or false/);
    const extra = transcribeForm(SPEECH, {}, 'sync');
    extra.append('webhook_url', 'http://example.com/');
    assert.match(await refused(extra), /Unknown field "webhook_url"/);
    assert.match(await refused('{"model": "lightning"}', 'application/json'), /multipart\/form-data/);
  });
});
