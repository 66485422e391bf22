/**
 * Issue 39: the product routes' language codes (every documented code, the multi-eu, multi-asian,
 * multi-indic aggregators, multi) and the current layout's word and utterance fields (per-word
 * confidence, integer speaker with speaker_confidence, utterances with an integer speaker), on real
 * transcriptions of the corpus with the tiny English recogniser, Silero VAD and the speaker fixtures.
 * The installed recogniser is English only and detects no language, so every other code is one
 * "this language has no pack" answer.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { englishEntries } from '../../engines/stt-fixtures.js';
import { corpusFile, modelsDirWith, needs, REAL_TEST_MODELS, sttTestPacks } from '../../helpers/models.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { openSocket, TestSocket, wsUrl } from '../../helpers/websocket.js';

const NEEDS = needs({ models: [...sttTestPacks, REAL_TEST_MODELS.VAD], corpus: true });
const MULTI_SPEAKER = 'diarization/picovoice-falcon-3spk.wav';

interface WireWord {
  word: string;
  start: number;
  end: number;
  confidence?: number | null;
  speaker?: number | string;
  speaker_confidence?: number;
}

/** Lower case letters and digits only: how a word is compared with the reference. */
const norm = (w: string) => w.toLowerCase().replace(/[^\p{L}\p{N}']+/gu, '');

/**
 * Which recognised words the reference has at that place: a longest common subsequence of the
 * two word lists (compared normalised). True for a word in it (right), false otherwise (wrong).
 */
function rightWords(recognised: string[], reference: string[]): boolean[] {
  const a = recognised.map(norm);
  const b = reference.map(norm);
  const table = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      table[i]![j] = a[i] === b[j] ? table[i + 1]![j + 1]! + 1 : Math.max(table[i + 1]![j]!, table[i]![j + 1]!);
    }
  }
  const right = new Array<boolean>(a.length).fill(false);
  for (let i = 0, j = 0; i < a.length && j < b.length; ) {
    if (a[i] === b[j]) {
      right[i] = true;
      i++;
      j++;
    } else if (table[i + 1]![j]! >= table[i]![j + 1]!) i++;
    else j++;
  }
  return right;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

describe('issue 39: /waves/v1 languages and word fields', { skip: NEEDS }, () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({
      engines: true,
      config: { modelsDir: modelsDirWith(sttTestPacks), logLevel: 'warn', rateLimits: { transcription: { perMinute: 0 } } },
    });
  });
  after(() => s?.close());

  const post = (path: string, file: string) =>
    s.api(path, { method: 'POST', headers: { 'content-type': 'audio/wav' }, body: new Uint8Array(readFileSync(corpusFile(file))) as Uint8Array<ArrayBuffer> });

  describe('languages', () => {
    it('an aggregator or a code with no installed pack: 400 at once, not retryable, naming the pack and the command', async () => {
      const cases: [string, string | undefined][] = [
        ['multi-eu', 'sherpa-onnx-whisper-base'],
        ['multi-asian', 'sherpa-onnx-sense-voice-zh-en-ja-ko-yue-int8-2024-07-17'],
        ['multi-indic', 'sherpa-onnx-whisper-base'],
        ['multi', 'sherpa-onnx-whisper-base'],
        ['de', 'sherpa-onnx-whisper-base'],
        ['ja', 'sherpa-onnx-whisper-base'],
        // Odia: no catalogue recogniser transcribes it (Whisper's tokenizer has no Odia).
        ['or', undefined],
      ];
      for (const [language, pack] of cases) {
        const res = await post(`/waves/v1/stt?model=pulse&language=${language}`, 'en/jfk-inaugural-1961.wav');
        const body = (await res.json()) as Record<string, string>;
        assert.equal(res.status, 400, `${language}: ${JSON.stringify(body)}`);
        assert.equal(res.headers.get('retry-after'), null, language);
        assert.equal(body.status, 'error');
        assert.equal(body.error_code, 'LANGUAGE_NOT_INSTALLED', language);
        assert.equal(body.language, language);
        assert.equal(body.request_id, res.headers.get('x-request-id'));
        if (pack) {
          assert.equal(body.pack, pack, language);
          assert.ok(body.message.includes(`\`parley models pull ${pack}\``), body.message);
        } else {
          assert.ok(!('pack' in body), language);
          assert.match(body.message, /no pack in the model catalogue transcribes it/);
        }
      }
    });

    it('the same answer on /api/v1/pulse/get_text in the legacy shape, and on the live socket before the upgrade', async () => {
      const legacy = await post('/api/v1/pulse/get_text?language=multi-eu', 'en/jfk-inaugural-1961.wav');
      const body = (await legacy.json()) as Record<string, string>;
      assert.equal(legacy.status, 400);
      assert.deepEqual(Object.keys(body).sort(), ['error', 'request_id']);
      assert.match(body.error, /^language multi-eu \(automatic detection among en, de, .*\) needs a language-detecting recogniser.*`parley models pull sherpa-onnx-whisper-base`/);

      for (const path of ['/waves/v1/stt/live?language=multi-asian', '/waves/v1/pulse/get_text?language=multi-indic']) {
        const refused = await openSocket(wsUrl(s.url, path), { authorization: `Bearer ${s.key}` });
        assert.ok(!(refused instanceof TestSocket), path);
        assert.equal(refused.status, 400, path);
        assert.equal(refused.body.error_code, 'LANGUAGE_NOT_INSTALLED', path);
      }
    });

    it('the neutral route keeps the seed codes: an aggregator is not one of them', async () => {
      const res = await post('/api/v1/stt/get_text?language=multi-eu', 'en/jfk-inaugural-1961.wav');
      const body = (await res.json()) as Record<string, string>;
      assert.equal(res.status, 400);
      assert.match(body.error, /^language must be one of/);
      const seedSocket = await openSocket(wsUrl(s.url, '/api/v1/stt/get_text?language=multi-asian'), { authorization: `Bearer ${s.key}` });
      assert.ok(!(seedSocket instanceof TestSocket));
      assert.match(seedSocket.body.error, /^language must be one of/);
    });
  });

  describe('word fields', () => {
    it('confidence is in [0, 1] and lower on the words the recogniser got wrong than on those it got right, over the English corpus', async () => {
      const right: number[] = [];
      const wrong: number[] = [];
      for (const entry of englishEntries()) {
        const res = await post('/waves/v1/stt?model=pulse&language=en&word_timestamps=true', entry.file);
        const body = (await res.json()) as { words: WireWord[] };
        assert.equal(res.status, 200, entry.file);
        const marks = rightWords(body.words.map((w) => w.word), entry.text!.split(/\s+/));
        body.words.forEach((w, i) => {
          assert.equal(typeof w.confidence, 'number', `${entry.file}: ${JSON.stringify(w)}`);
          assert.ok(w.confidence! >= 0 && w.confidence! <= 1, JSON.stringify(w));
          assert.ok(!('speaker' in w) && !('speaker_confidence' in w), 'no speaker without diarize');
          (marks[i] ? right : wrong).push(w.confidence!);
        });
      }
      assert.ok(right.length >= 10 && wrong.length >= 10, `right ${right.length}, wrong ${wrong.length}`);
      const [r, w] = [mean(right), mean(wrong)];
      console.log(`word confidence over the English corpus: right words ${r.toFixed(3)} (n=${right.length}), wrong words ${w.toFixed(3)} (n=${wrong.length})`);
      assert.ok(w < r, `mean confidence of wrong words ${w} is not below that of right words ${r}`);
    });

    it('diarize=true: integer speakers from 0 in order of appearance, speaker_confidence in [0, 1], utterances with an integer speaker', async () => {
      const res = await post('/waves/v1/stt?model=pulse&language=en&word_timestamps=true&diarize=true', MULTI_SPEAKER);
      const body = (await res.json()) as { words: WireWord[]; utterances: { text: string; speaker?: number | string }[] };
      assert.equal(res.status, 200);
      assert.ok(body.words.length > 0);
      const order: number[] = [];
      for (const w of body.words) {
        assert.ok(Number.isInteger(w.speaker), JSON.stringify(w));
        assert.ok(typeof w.speaker_confidence === 'number' && w.speaker_confidence >= 0 && w.speaker_confidence <= 1, JSON.stringify(w));
        if (!order.includes(w.speaker as number)) order.push(w.speaker as number);
      }
      assert.deepEqual(order, order.map((_, n) => n));
      assert.ok(body.utterances.length > 0);
      for (const u of body.utterances) assert.ok(Number.isInteger(u.speaker) && order.includes(u.speaker as number), JSON.stringify(u));
    });

    it('the legacy layout keeps speaker_<n> labels and no confidence fields', async () => {
      for (const path of ['/api/v1/stt/get_text', '/api/v1/pulse/get_text']) {
        const res = await post(`${path}?word_timestamps=true&diarize=true`, MULTI_SPEAKER);
        const body = (await res.json()) as { words: WireWord[]; utterances: { speaker?: unknown }[] };
        assert.equal(res.status, 200);
        for (const w of body.words) assert.deepEqual(Object.keys(w).sort(), ['end', 'speaker', 'start', 'word'], path);
        for (const w of body.words) assert.match(String(w.speaker), /^speaker_\d+$/);
        for (const u of body.utterances) assert.match(String(u.speaker), /^speaker_\d+$/);
      }
    });
  });
});
