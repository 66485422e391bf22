/**
 * The current layout's live transcription socket (GET /waves/v1/stt/live) and the product-name
 * paths, over real sockets, on corpus speech and the real tiny streaming zipformer, opened with the
 * exact query strings real clients build:
 * - LiveKit Agents' plugin, livekit/agents@da6af86ac640a3bc54585764e64321d7048c1c16,
 *   livekit-plugins/livekit-plugins-smallestai/livekit/plugins/smallestai/stt.py
 *   (SpeechStream._connect_ws with the plugin's defaults; 50 ms binary frames; close_stream at the end).
 * - Pipecat's service, pipecat-ai/pipecat@acead0507d7de44e216d24533964106ca1d1d044,
 *   src/pipecat/services/smallest/stt.py (_connect_websocket with the service's defaults;
 *   {"type": "finalize"} when the user stops speaking).
 * These are the sockets the LiveKit and Pipecat set-ups of docs/clients.md open.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { encodeInt16 } from '../../../src/audio/encode.js';
import { parseWav } from '../../../src/audio/wav.js';
import { corpusFile, modelsDirWith, needs, REAL_TEST_MODELS } from '../../helpers/models.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { connect, openSocket, TestSocket, wsUrl } from '../../helpers/websocket.js';
import { wordErrorRate } from '../../helpers/transcript-accuracy.js';
import { corpusEntries } from '../../engines/stt-fixtures.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH], corpus: true });

const SPEECH = 'en/librispeech-1089-134686-0001.wav';

/** urllib.parse.urlencode of SpeechStream._connect_ws's params, the plugin's defaults. */
const LIVEKIT_QUERY =
  'model=pulse&language=en&encoding=linear16&sample_rate=16000&word_timestamps=true&diarize=false&eou_timeout_ms=100&endpointing=true&format=true&sentence_timestamps=false&redact_pii=false&redact_pci=false';
/** urlencode of _connect_websocket's query_params, the service's defaults at a 16 kHz pipeline. */
const PIPECAT_QUERY =
  'model=pulse&language=en&encoding=linear16&sample_rate=16000&word_timestamps=false&full_transcript=false&sentence_timestamps=false&redact_pii=false&redact_pci=false&numerals=auto&diarize=false&endpointing=true&format=true';

function pcmOf(file: string): Uint8Array {
  const { samples, sampleRate } = parseWav(new Uint8Array(readFileSync(corpusFile(file))));
  assert.equal(sampleRate, 16_000);
  return encodeInt16(samples);
}

function labelOf(file: string): string {
  const entry = corpusEntries().find((e) => e.file === file);
  assert.ok(entry?.text, `a label for ${file}`);
  return entry.text;
}

const transcripts = (messages: any[]) => messages.filter((m) => typeof m.transcript === 'string');

/** Sends `pcm` in frames of `frameBytes` as fast as the socket takes them (the server paces nothing). */
async function stream(socket: TestSocket, pcm: Uint8Array, frameBytes: number, pauseMs = 0): Promise<void> {
  for (let at = 0; at < pcm.length; at += frameBytes) {
    socket.send(Buffer.from(pcm.subarray(at, at + frameBytes)));
    if (pauseMs) await new Promise((r) => setTimeout(r, pauseMs));
  }
}

describe('live transcription with real clients\' query strings', { skip: NEEDS }, () => {
  let s: TestServer;
  const open = (path: string) => connect(wsUrl(s.url, path), { authorization: `Bearer ${s.key}` });

  before(async () => {
    const modelsDir = modelsDirWith([REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH]);
    s = await startTestServer({ engines: true, config: { modelsDir, logLevel: 'silent', rateLimits: { transcription: { perMinute: 0 } } } });
  });
  after(() => s?.close());

  it("LiveKit's query string: partials, finals with integer speakers, and is_last after close_stream; the transcript follows the corpus label", async () => {
    const socket = await open(`/waves/v1/stt/live?${LIVEKIT_QUERY}`);
    // 50 ms frames, as the plugin sends them (sample_rate // 20 samples), at the pace of speech.
    await stream(socket, pcmOf(SPEECH), 1600, 50);
    socket.send({ type: 'close_stream' });
    assert.equal((await socket.untilClosed(60_000)).code, 1000);
    const all = transcripts(socket.messages);
    assert.deepEqual(socket.messages.filter((m) => m.type === 'error'), []);
    assert.ok(all.some((m) => !m.is_final && m.transcript), 'partials');
    const finals = all.filter((m) => m.is_final);
    assert.ok(finals.length >= 1);
    assert.equal(all.at(-1).is_last, true, 'the last message is_last');
    assert.equal(all.filter((m) => m.is_last).length, 1);
    for (const m of all) {
      assert.equal(typeof m.session_id, 'string');
      // The language on finals only (the plugin falls back to the one it asked for).
      assert.equal(m.language, m.is_final ? 'en' : undefined);
      // format=true: a final is sentence-cased and ends in punctuation; the service's cadence, 10 words at most.
      if (m.is_final && m.transcript) assert.match(m.transcript, /^[A-Z0-9[].*[.?!]$/, m.transcript);
      if (m.is_final) assert.ok(m.transcript.split(' ').length <= 10, m.transcript);
      assert.equal(m.utterances, undefined, 'sentence_timestamps=false');
    }
    const words = finals.flatMap((m) => m.words);
    assert.ok(words.length > 5);
    for (const w of words) {
      assert.equal(w.speaker, 0, 'an integer speaker on this layout');
      assert.ok(w.end >= w.start && typeof w.word === 'string');
    }
    const text = finals.map((m) => m.transcript).filter(Boolean).join(' ');
    const wer = wordErrorRate(labelOf(SPEECH), text);
    assert.ok(wer < 0.5, `WER ${wer}: ${text}`);
  });

  it("Pipecat's query string: partials, a final on its finalize, then is_last on close_stream, formatted, nothing redacted", async () => {
    const socket = await open(`/waves/v1/stt/live?${PIPECAT_QUERY}`);
    await stream(socket, pcmOf(SPEECH), 3200, 100);
    socket.send({ type: 'finalize' });
    await socket.until((all) => transcripts(all).some((m) => m.from_finalize), 60_000);
    socket.send({ type: 'close_stream' });
    assert.equal((await socket.untilClosed(60_000)).code, 1000);
    const all = transcripts(socket.messages);
    assert.ok(all.some((m) => !m.is_final && m.transcript), 'partials');
    assert.ok(all.some((m) => m.is_final && m.transcript && !m.is_last), 'a final before the end');
    assert.equal(all.at(-1).is_last, true);
    // Its finalize is answered by one final marked from_finalize; close_stream's last final is not.
    assert.deepEqual(all.filter((m) => m.from_finalize).length, 1, 'one final answers the finalize');
    assert.equal(all.at(-1).from_finalize, false, 'close_stream is not a finalize');
    for (const m of all) {
      assert.equal(m.redacted_entities, undefined, 'redaction not asked for');
      if (m.is_final && m.transcript) assert.match(m.transcript, /^[A-Z0-9[].*[.?!]$/, m.transcript);
      assert.equal(m.full_transcript, undefined);
      assert.deepEqual(m.words, [], 'word_timestamps=false');
    }
  });

  it('sentence_timestamps adds utterances, full_transcript the running transcript', async () => {
    const socket = await open(`/waves/v1/stt/live?model=pulse&language=en&sentence_timestamps=true&full_transcript=true&keywords=${encodeURIComponent('Christmas:2,dinner:1.5')}`);
    await stream(socket, pcmOf(SPEECH), 3200);
    socket.send({ type: 'close_stream' });
    await socket.untilClosed(60_000);
    const all = transcripts(socket.messages);
    const finals = all.filter((m) => m.is_final && m.transcript);
    assert.ok(finals.length >= 1);
    for (const m of finals) {
      assert.ok(Array.isArray(m.utterances) && m.utterances.length >= 1, JSON.stringify(m));
      assert.equal(m.utterances.map((u: any) => u.text).join(' '), m.transcript);
      for (const u of m.utterances) assert.ok(u.start >= m.start - 0.001 && u.end <= m.end + 0.001 && u.end > u.start);
      assert.equal(m.keywords_applied, true, 'the streaming transducer boosts keywords');
    }
    // The running transcript: every final so far.
    const last = all.at(-1);
    assert.equal(last.full_transcript, finals.map((m) => m.transcript).join(' '));
    const partial = all.find((m) => !m.is_final && m.transcript);
    if (partial) assert.ok(partial.full_transcript.endsWith(partial.transcript));
  });

  it('serves the product names of the legacy layout too (speakers stay labels there)', async () => {
    for (const path of ['/api/v1/pulse/get_text', '/waves/v1/pulse/get_text', '/waves/v1/stt/get_text']) {
      const socket = await open(`${path}?model=pulse&word_timestamps=true`);
      await stream(socket, pcmOf(SPEECH).subarray(0, 16000 * 2 * 3), 3200);
      socket.send({ type: 'close_stream' });
      await socket.untilClosed(60_000);
      const last = transcripts(socket.messages).at(-1);
      assert.equal(last.is_last, true, path);
      const words = transcripts(socket.messages).flatMap((m) => m.words);
      assert.ok(words.length > 0 && words.every((w: any) => w.speaker === 'speaker_0'), path);
    }
  });

  it('refuses a value no rule allows with 400 naming the rule, before the upgrade', async () => {
    const cases: [string, string][] = [
      ['encoding=flac', 'encoding must be one of linear16, linear32, mulaw, alaw, opus, ogg_opus'],
      ['model=pulse-ultra', 'model must be one of stt, pulse, pulse-pro'],
      ['numerals=yes', 'numerals must be one of true, false, auto'],
      ['endpointing=1', 'endpointing must be one of true, false'],
      ['keywords=NVIDIA:-1', 'keyword intensifiers must be numbers from 0 to 100 (got "-1" for "NVIDIA")'],
      ['eou_timeout_ms=50', 'eou_timeout_ms must be between 100 and 10000'],
      ['language=xx', 'language must be one of'],
    ];
    for (const [query, sentence] of cases) {
      const result = await openSocket(wsUrl(s.url, `/waves/v1/stt/live?${query}`), { authorization: `Bearer ${s.key}` });
      assert.ok(!(result instanceof TestSocket), query);
      assert.equal(result.status, 400, query);
      assert.equal(result.body.error, 'InvalidRequest', query);
      assert.ok(String(result.body.message).startsWith(sentence), `${query}: ${JSON.stringify(result.body)}`);
    }
  });

  it('accepts ogg_opus; language=multi is accepted and refused only for want of a detecting recogniser', async () => {
    const socket = await open('/waves/v1/stt/live?encoding=ogg_opus&sample_rate=48000');
    socket.send({ type: 'close_stream' });
    await socket.untilClosed(30_000);
    assert.equal(transcripts(socket.messages).at(-1).is_last, true);
    const multi = await openSocket(wsUrl(s.url, '/waves/v1/stt/live?language=multi'), { authorization: `Bearer ${s.key}` });
    assert.ok(!(multi instanceof TestSocket));
    assert.equal(multi.status, 400);
    assert.match(multi.body.message, /^language multi \(automatic detection\) needs a language-detecting recogniser/);
  });
});
