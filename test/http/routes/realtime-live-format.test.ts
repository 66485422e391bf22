/**
 * format=true on the live transcription sockets, over real sockets with speech made by the Debian
 * espeak-ng binary and the real tiny streaming zipformer, with and without a punctuation pack.
 * The pack is the hand-made online (CNN-BiLSTM) fixture, test/fixtures/models/
 * fake-online-punct-en-cnn-bilstm-table, run by sherpa-onnx OnlinePunctuation in the inference
 * process: it gives "john" a capital and a full stop, "london" a capital and a comma, a comma after
 * "well" and a question mark after "today". The rules add no comma, capitalise no name and end no
 * sentence without a pause, so a final that has these marks went through the model.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { encodeInt16 } from '../../../src/audio/encode.js';
import { parseWav } from '../../../src/audio/wav.js';
import { modelsDirWith, needs, REAL_TEST_MODELS } from '../../helpers/models.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { connect, wsUrl } from '../../helpers/websocket.js';
import { ESPEAK_MISSING } from '../../voice-analysis/espeak-voices.js';
import { linkPunctuationFixture, ONLINE_PUNCTUATION_FIXTURE } from '../../fixtures/punctuation-pack.js';
import { spoken } from '../../helpers/espeak-speech.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH] }) || ESPEAK_MISSING;

const SENTENCE = 'well my name is john i live in london how are you today';
const KEYWORDS = 'well,john,london,today';
const PUNCTUATED = 'Well, my name is John. I live in London, how are you today?';
const BY_THE_RULES = 'Well my name is john I live in london how are you today.';

function serverWith(punctuationPack: boolean): Promise<TestServer> {
  const modelsDir = modelsDirWith([REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH]);
  if (punctuationPack) linkPunctuationFixture(modelsDir, ONLINE_PUNCTUATION_FIXTURE);
  return startTestServer({ engines: true, config: { modelsDir, logLevel: 'warn', rateLimits: { transcription: { perMinute: 0 } } } });
}

/**
 * The transcript messages of one socket on `path` that was sent each of `speeches` followed by a
 * finalize (the last by close_stream), all at once in 100 ms frames: the session takes them as fast
 * as the engines go, and each finalize ends an utterance.
 */
async function liveTranscripts(s: TestServer, path: string, speeches: Uint8Array[], query: Record<string, string>): Promise<any[]> {
  const sampleRate = parseWav(speeches[0]!).sampleRate;
  const q = new URLSearchParams({ sample_rate: String(sampleRate), keywords: KEYWORDS, ...query });
  const socket = await connect(wsUrl(s.url, `${path}?${q}`), { authorization: `Bearer ${s.key}` });
  try {
    speeches.forEach((speech, i) => {
      const pcm = encodeInt16(parseWav(speech).samples);
      for (let at = 0; at < pcm.length; at += sampleRate / 5) socket.send(Buffer.from(pcm.subarray(at, at + sampleRate / 5)));
      socket.send({ type: i === speeches.length - 1 ? 'close_stream' : 'finalize' });
    });
    assert.equal((await socket.untilClosed(60_000)).code, 1000);
    assert.deepEqual(socket.messages.filter((m) => m.type === 'error'), []);
    return socket.messages.filter((m) => m.type === 'transcription');
  } finally {
    socket.close();
  }
}

const finalsOf = (messages: any[]) => messages.filter((m) => m.is_final && m.transcript);

describe('live format=true with a punctuation pack installed', { skip: NEEDS }, () => {
  let s: TestServer;
  before(async () => {
    s = await serverWith(true);
  });
  after(async () => s?.close());

  it("a final goes through the pack's model: its commas, capitals and sentence end with no pause; partials keep the rules; word times kept", async () => {
    const speech = spoken(SENTENCE);
    // The neutral name adds no formatting by default; /stt/live finalises every 10 words unless told not to.
    const plain = finalsOf(await liveTranscripts(s, '/api/v1/stt/get_text', [speech], { word_timestamps: 'true' }));
    assert.equal(plain.map((m) => m.transcript).join(' '), 'WELL MY NAME IS JOHN I LIVE IN LONDON HOW ARE YOU TODAY', 'the tiny model heard every word, in one utterance');
    const messages = await liveTranscripts(s, '/waves/v1/stt/live', [speech], { word_timestamps: 'true', format: 'true', finalize_on_words: 'false' });
    const finals = finalsOf(messages);
    assert.equal(finals.length, 1);
    assert.equal(finals[0].transcript, PUNCTUATED);
    assert.equal(finals[0].words.map((w: any) => w.word).join(' '), PUNCTUATED, 'the words carry the marks');
    assert.deepEqual(finals[0].words.map((w: any) => [w.start, w.end]), plain[0].words.map((w: any) => [w.start, w.end]), 'times untouched');
    const partials = messages.filter((m) => !m.is_final && m.transcript);
    assert.ok(partials.length > 0, 'partials');
    for (const m of partials) assert.doesNotMatch(m.transcript, /,|John|London/, `partial "${m.transcript}": the rules' formatting`);
  });

  it('finals of utterances sent at once, each through the model, in the order spoken', async () => {
    const speeches = ['well my name is john', 'i live in london how are you today'].map((text) => spoken(text));
    const messages = await liveTranscripts(s, '/api/v1/stt/get_text', speeches, { format: 'true' });
    assert.deepEqual(finalsOf(messages).map((m) => m.transcript), ['Well, my name is John.', 'I live in London, how are you today?']);
    assert.equal(messages.at(-1).is_last, true);
  });

  it('batch transcription over HTTP uses the same pack', async () => {
    const res = await s.api(`/api/v1/stt/get_text?format=true&keywords=${KEYWORDS}`, { method: 'POST', headers: { 'content-type': 'audio/wav' }, body: spoken(SENTENCE) as Uint8Array<ArrayBuffer> });
    const body = (await res.json()) as any;
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.transcription, PUNCTUATED);
  });
});

describe('live format=true without a punctuation pack', { skip: NEEDS }, () => {
  let s: TestServer;
  before(async () => {
    s = await serverWith(false);
  });
  after(async () => s?.close());

  it('the rules format the final: sentence case and an end mark, no inner marks, names as heard', async () => {
    const finals = finalsOf(await liveTranscripts(s, '/waves/v1/stt/live', [spoken(SENTENCE)], { word_timestamps: 'true', format: 'true', finalize_on_words: 'false' }));
    assert.deepEqual(finals.map((m) => m.transcript), [BY_THE_RULES]);
  });
});
