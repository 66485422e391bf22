/**
 * POST /api/v1/stt/get_text over real HTTP with the real engines:
 * silero VAD, the tiny streaming English transducer, and the stand-in diarization packs. The tiny
 * model is not accurate, so nothing here measures accuracy: the tests compare formats with each
 * other, and check shapes, types, timing invariants and the error contract.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { englishEntries, rttmTurns } from '../../engines/stt-fixtures.js';
import { formatSpecs, makeFormatSet, sharedWordRatio, wavDuration, wordsOf, type FormatSet } from '../../helpers/audio-formats.js';
import { REAL_TEST_MODELS, corpusFile, modelsDirWith, needs, sttTestPacks } from '../../helpers/models.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { expectSttError } from '../../helpers/stt-errors.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH], corpus: true });

const SOURCE = 'en/jfk-inaugural-1961.wav';
const MULTI_SPEAKER = 'diarization/picovoice-falcon-3spk.wav';
const INVALID_FORMAT = 'Invalid file format. Supported formats: audio/*';
const RESULT_FIELDS = ['status', 'request_id', 'transcription', 'language', 'words', 'utterances', 'duration', 'metadata'];
const EMOTION_KEYS = ['anger', 'disgust', 'fear', 'happiness', 'sadness'];

interface Word {
  word: string;
  start: number;
  end: number;
  speaker: string;
}
interface Utterance {
  text: string;
  start: number;
  end: number;
  speaker: string;
}
type Result = Record<string, any> & { words: Word[]; utterances: Utterance[] };

describe('POST /api/v1/stt/get_text', { skip: NEEDS }, () => {
  let s: TestServer;
  let formats: FormatSet;
  let reference: Result;

  /** POST raw bytes; checks the X-Request-Id contract on every answer. */
  async function post(
    query: string,
    bytes: Uint8Array,
    contentType = 'audio/wav',
    headers: Record<string, string> = {},
  ): Promise<{ res: Response; body: any }> {
    const res = await s.api(`/api/v1/stt/get_text${query}`, { method: 'POST', headers: { 'content-type': contentType, ...headers }, body: bytes as Uint8Array<ArrayBuffer> });
    const body = await res.json();
    const requestId = res.headers.get('x-request-id');
    assert.ok(requestId, 'every response carries X-Request-Id');
    assert.equal(body.request_id, requestId, 'the body names the request id of the header');
    return { res, body };
  }

  async function transcribe(query: string, bytes: Uint8Array, contentType = 'audio/wav', headers: Record<string, string> = {}): Promise<Result> {
    const { res, body } = await post(query, bytes, contentType, headers);
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    return body as Result;
  }


  before(async () => {
    const modelsDir = modelsDirWith(sttTestPacks);
    [s, formats] = await Promise.all([
      // The rate limit is not under test here (its burst is smaller than the number of requests below).
      startTestServer({ engines: true, config: { modelsDir, logLevel: 'warn', rateLimits: { transcription: { perMinute: 0 } } } }),
      makeFormatSet(corpusFile(SOURCE)),
    ]);
    reference = await transcribe('', formats.reference.bytes);
  });
  after(async () => {
    await s?.close();
    formats?.cleanup();
  });

  describe('accepted formats', () => {
    it('the 16-bit WAV reference gives a non-empty transcript', () => {
      assert.ok(wordsOf(reference.transcription).length >= 5, reference.transcription);
    });

    for (const spec of formatSpecs.filter((f) => f.name !== 'wav pcm 16-bit')) {
      it(`${spec.name} (${spec.contentType}) gives the transcript of the 16-bit WAV`, async () => {
        const variant = formats.variants.find((v) => v.name === spec.name)!;
        const got = await transcribe('', variant.bytes, variant.contentType);
        assert.equal(got.metadata.fileSize, variant.bytes.byteLength);
        // Codec priming and padding may lengthen the decoded audio a little.
        assert.ok(Math.abs(got.duration - reference.duration) < 0.1, `duration ${got.duration} vs ${reference.duration}`);
        if (spec.fidelity === 'exact') {
          // Same samples as the reference (wider PCM of 16-bit samples, float, FLAC): same words.
          assert.equal(got.transcription, reference.transcription);
        } else if (got.transcription !== reference.transcription) {
          // Quantised PCM (8-bit, G.711), resampled stereo and perceptual codecs change the samples,
          // and the tiny test model is fragile enough to change a word or two on such changes: at
          // least half of the reference words must still be there.
          const ratio = sharedWordRatio(reference.transcription, got.transcription);
          assert.ok(ratio >= 0.5, `only ${Math.round(ratio * 100)}% of "${reference.transcription}" in "${got.transcription}"`);
        }
      });
    }

    it('headerless PCM takes its rate from the Content-Type parameters (audio/pcm;rate=24000)', async () => {
      const seconds = 1.5;
      const n = 24_000 * seconds;
      const pcm = Buffer.alloc(n * 2);
      for (let i = 0; i < n; i++) pcm.writeInt16LE(Math.round(2000 * Math.sin((2 * Math.PI * 300 * i) / 24_000)), i * 2);
      const got = await transcribe('', new Uint8Array(pcm), 'audio/pcm;rate=24000');
      assert.equal(got.duration, seconds);
    });
  });

  describe('result', () => {
    it('has every field of point 19 with the right types', async () => {
      const got = await transcribe('', formats.reference.bytes);
      for (const field of RESULT_FIELDS) assert.ok(field in got, `missing ${field}`);
      assert.equal(got.status, 'success');
      assert.match(got.request_id, /^[A-Za-z0-9._-]{1,128}$/);
      assert.equal(typeof got.transcription, 'string');
      assert.equal(got.language, 'en', 'language defaults to en');
      assert.deepEqual(got.words, [], 'words are present and empty without word_timestamps');
      assert.deepEqual(got.utterances, [], 'utterances are present and empty without word_timestamps');
      assert.equal(typeof got.duration, 'number');
      assert.deepEqual(Object.keys(got.metadata).sort(), ['duration', 'fileSize', 'filename']);
      assert.equal(got.metadata.filename, 'audio');
      assert.equal(got.metadata.duration, got.duration);
      assert.ok(Number.isInteger(got.metadata.fileSize));
      assert.equal(got.metadata.fileSize, formats.reference.bytes.byteLength);
      const expected = wavDuration(formats.reference.bytes);
      assert.ok(Math.abs(got.duration - expected) <= 0.05, `duration ${got.duration} vs ${expected}`);
      for (const key of ['age', 'gender', 'emotions', 'speakers']) assert.ok(!(key in got), `${key} only when requested`);
    });

    it('explicit defaults (model=stt, language=en, flags false) give the same result', async () => {
      const got = await transcribe(
        '?model=stt&language=en&word_timestamps=false&diarize=false&age_detection=false&gender_detection=false&emotion_detection=false',
        formats.reference.bytes,
      );
      assert.equal(got.transcription, reference.transcription);
      assert.deepEqual(got.words, []);
      for (const key of ['age', 'gender', 'emotions', 'speakers']) assert.ok(!(key in got));
    });

    it('metadata.filename comes from X-Filename, from ?filename=, else "audio"', async () => {
      const wav = readFileSync(corpusFile('en/ljspeech-LJ002-0020.wav'));
      const bytes = new Uint8Array(wav);
      assert.equal((await transcribe('', bytes, 'audio/wav', { 'x-filename': 'call-42.wav' })).metadata.filename, 'call-42.wav');
      assert.equal((await transcribe('?filename=meeting.wav', bytes)).metadata.filename, 'meeting.wav');
      const plain = await transcribe('', bytes);
      assert.equal(plain.metadata.filename, 'audio');
      assert.equal(plain.metadata.fileSize, wav.byteLength);
      assert.ok(Math.abs(plain.duration - wavDuration(bytes)) <= 0.05);
    });

    it('echoes a client X-Request-Id in the header and the result', async () => {
      const got = await transcribe('', formats.reference.bytes, 'audio/wav', { 'x-request-id': 'client-req.123_abc' });
      assert.equal(got.request_id, 'client-req.123_abc');
    });
  });

  describe('word timestamps and speakers (points 17-18)', () => {
    function checkWords(got: Result): void {
      assert.ok(got.words.length > 0, 'some words');
      let previousEnd = 0;
      for (const w of got.words) {
        assert.equal(typeof w.word, 'string');
        assert.ok(w.word.length > 0);
        assert.ok(w.start <= w.end, `${w.word}: start ${w.start} > end ${w.end}`);
        assert.ok(w.start >= previousEnd, `${w.word} starts at ${w.start}, before the previous word ends (${previousEnd})`);
        assert.ok(w.start >= 0 && w.end <= got.duration, `${w.word} [${w.start}, ${w.end}] outside [0, ${got.duration}]`);
        assert.match(w.speaker, /^speaker_\d+$/);
        previousEnd = w.end;
      }
      // Utterances cover the words: in order, each word inside the utterance that holds it.
      const fromUtterances = got.utterances.flatMap((u) => u.text.split(' '));
      assert.deepEqual(fromUtterances, got.words.map((w) => w.word));
      let i = 0;
      for (const u of got.utterances) {
        assert.ok(u.start <= u.end);
        const count = u.text.split(' ').length;
        const inside = got.words.slice(i, i + count);
        i += count;
        assert.equal(u.start, inside[0]!.start);
        assert.equal(u.end, inside.at(-1)!.end);
        for (const w of inside) assert.equal(w.speaker, u.speaker, `"${w.word}" belongs to ${u.speaker}`);
      }
    }

    it('word_timestamps=true gives ordered, non-overlapping words inside the audio, all speaker_0, covered by utterances', async () => {
      const got = await transcribe('?word_timestamps=true', formats.reference.bytes);
      checkWords(got);
      for (const w of got.words) assert.equal(w.speaker, 'speaker_0');
      for (const u of got.utterances) assert.equal(u.speaker, 'speaker_0');
      assert.equal(got.words.map((w) => w.word).join(' '), got.transcription, 'the words spell the transcription');
    });

    it('diarize=true labels speakers speaker_0, speaker_1… in order of first appearance', async () => {
      assert.ok(rttmTurns(MULTI_SPEAKER.replace(/\.wav$/, '.rttm')).length > 0, 'the file has a reference with several speakers');
      const got = await transcribe('?word_timestamps=true&diarize=true', new Uint8Array(readFileSync(corpusFile(MULTI_SPEAKER))));
      checkWords(got);
      // The stand-in diarization packs assign arbitrary speakers, so only the labelling rules are checked.
      assert.equal(got.words[0]!.speaker, 'speaker_0');
      const order: string[] = [];
      for (const w of got.words) if (!order.includes(w.speaker)) order.push(w.speaker);
      assert.deepEqual(order, order.map((_, n) => `speaker_${n}`));
      for (const u of got.utterances) assert.ok(order.includes(u.speaker));
    });

    it('diarize without word_timestamps still leaves words and utterances empty', async () => {
      const got = await transcribe('?diarize=true', new Uint8Array(readFileSync(corpusFile(MULTI_SPEAKER))));
      assert.deepEqual(got.words, []);
      assert.deepEqual(got.utterances, []);
      assert.ok(got.transcription.length > 0);
    });
  });

  describe('speaker analysis flags (point 17)', () => {
    const cases = [
      { flag: 'age_detection', field: 'age' },
      { flag: 'gender_detection', field: 'gender' },
      { flag: 'emotion_detection', field: 'emotions' },
    ] as const;

    function checkField(field: string, value: unknown): void {
      if (field === 'age') assert.ok(['infant', 'teenager', 'adult', 'old'].includes(value as string), `age ${value}`);
      if (field === 'gender') assert.ok(['male', 'female'].includes(value as string), `gender ${value}`);
      if (field === 'emotions') {
        const emotions = value as Record<string, unknown>;
        assert.deepEqual(Object.keys(emotions).sort(), EMOTION_KEYS);
        for (const [k, v] of Object.entries(emotions)) {
          assert.equal(typeof v, 'number', k);
          assert.ok((v as number) >= 0 && (v as number) <= 1, `${k} = ${v}`);
        }
      }
    }

    for (const { flag, field } of cases) {
      it(`${flag}=true adds exactly \`${field}\` and names its analyzer`, async () => {
        const got = await transcribe(`?${flag}=true`, formats.reference.bytes);
        assert.ok(field in got, `${field} requested`);
        checkField(field, got[field]);
        for (const other of cases.filter((c) => c.field !== field)) assert.ok(!(other.field in got), `${other.field} not requested`);
        assert.ok(!('speakers' in got), 'speakers only with diarize');
        assert.deepEqual(
          Object.keys(got).sort(),
          [...RESULT_FIELDS, field].sort(),
          'no other top-level field appears',
        );
        assert.equal(typeof got.metadata.analyzers?.[field], 'string', 'metadata.analyzers names the analyzer');
        assert.ok(got.metadata.analyzers[field].length > 0);
      });
    }

    it('all three flags together give age, gender and emotions with an analyzer each', async () => {
      const got = await transcribe('?age_detection=true&gender_detection=true&emotion_detection=true', formats.reference.bytes);
      for (const { field } of cases) {
        checkField(field, got[field]);
        assert.equal(typeof got.metadata.analyzers[field], 'string');
      }
    });

    it('diarize with a flag adds a `speakers` array of {speaker, …} for the labelled speakers', async () => {
      const got = await transcribe(
        '?word_timestamps=true&diarize=true&gender_detection=true&age_detection=true',
        new Uint8Array(readFileSync(corpusFile(MULTI_SPEAKER))),
      );
      assert.ok(Array.isArray(got.speakers) && got.speakers.length > 0, 'speakers array');
      const labels = new Set(got.words.map((w) => w.speaker));
      for (const entry of got.speakers) {
        assert.match(entry.speaker, /^speaker_\d+$/);
        assert.ok(labels.has(entry.speaker), `${entry.speaker} is a label of the words`);
        for (const key of Object.keys(entry)) assert.ok(['speaker', 'age', 'gender'].includes(key), `unexpected ${key}`);
        if ('age' in entry) checkField('age', entry.age);
        if ('gender' in entry) checkField('gender', entry.gender);
      }
      checkField('gender', got.gender);
      checkField('age', got.age);
      assert.ok(!('emotions' in got));
    });
  });

  describe('errors (point 20)', () => {
    const wav = () => new Uint8Array(readFileSync(corpusFile('en/ljspeech-LJ002-0020.wav')));

    it('a Content-Type that is not audio/* is 400 with the fixed sentence', async () => {
      await expectSttError(post('', wav(), 'text/plain'), 400, INVALID_FORMAT);
      await expectSttError(post('', wav(), 'application/octet-stream'), 400, INVALID_FORMAT);
    });

    it('audio/wav holding bytes that are not audio is 400 with the same sentence', async () => {
      let seed = 7;
      const noise = new Uint8Array(5000).map(() => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 24) & 0xff);
      await expectSttError(post('', noise, 'audio/wav'), 400, INVALID_FORMAT);
      await expectSttError(post('', new TextEncoder().encode('this is plain text, not audio at all'), 'audio/mpeg'), 400, INVALID_FORMAT);
      // A WAV header with nothing after it.
      await expectSttError(post('', wav().subarray(0, 44), 'audio/wav'), 400, INVALID_FORMAT);
    });

    it('model other than stt is 400 naming the field', async () => {
      const message = await expectSttError(post('?model=other', wav()), 400, /model/);
      assert.ok(message.length > 0);
    });

    it('a language with no installed recogniser is 400 naming the language', async () => {
      await expectSttError(post('?language=de', wav()), 400, /\bde\b/);
    });

    it('a language outside the list is 400 naming the field', async () => {
      await expectSttError(post('?language=xx', wav()), 400, /language/);
    });

    it('booleans accept true/false only', async () => {
      for (const q of ['word_timestamps=yes', 'diarize=1', 'age_detection=TRUE', 'emotion_detection=']) {
        const name = q.split('=')[0]!;
        await expectSttError(post(`?${q}`, wav()), 400, new RegExp(name));
      }
    });

    it('a missing or wrong key is 401 Unauthorized - Invalid API key', async () => {
      for (const authorization of [undefined, 'Bearer sk_thisisnotakeythisisnotakeythisisnot', 'Basic Zm9vOmJhcg==']) {
        const headers: Record<string, string> = { 'content-type': 'audio/wav' };
        if (authorization) headers.authorization = authorization;
        const res = await fetch(`${s.url}/api/v1/stt/get_text`, { method: 'POST', headers, body: wav() });
        assert.equal(res.status, 401);
        const body = await res.json();
        assert.deepEqual(body, { error: 'Unauthorized - Invalid API key', request_id: res.headers.get('x-request-id') });
      }
    });

    it('a body over 25 MB is 413 File size exceeds maximum limit of 25MB', async () => {
      assert.equal(s.config.limits.maxUploadBytes, 25 * 1024 * 1024);
      const big = new Uint8Array(26 * 1024 * 1024);
      big.set(wav().subarray(0, 44));
      await expectSttError(post('', big), 413, 'File size exceeds maximum limit of 25MB');
      await expectSttError(post('', new Uint8Array(25 * 1024 * 1024 + 1)), 413, 'File size exceeds maximum limit of 25MB');
    });
  });

  describe('English corpus: word times lie within the labelled speech', () => {
    for (const entry of englishEntries()) {
      it(entry.file, async () => {
        const bytes = new Uint8Array(readFileSync(corpusFile(entry.file)));
        const got = await transcribe('?word_timestamps=true', bytes);
        assert.ok(Math.abs(got.duration - entry.duration_s) <= 0.05, `duration ${got.duration} vs ${entry.duration_s}`);
        let lo = 0;
        let hi = got.duration;
        if (entry.words?.length) {
          // Labelled word times are approximate (±0.2 s, see the corpus README): half a second of slack.
          lo = Math.max(0, entry.words[0]!.start - 0.5);
          hi = Math.min(got.duration, entry.words.at(-1)!.end + 0.5);
        }
        for (const w of got.words) {
          assert.ok(w.start >= lo && w.end <= hi, `${w.word} [${w.start}, ${w.end}] outside [${lo}, ${hi}]`);
          assert.ok(w.start <= w.end);
        }
      });
    }
  });
});

describe('POST /api/v1/stt/get_text with an operator-set upload cap', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ engines: true, config: { modelsDir: modelsDirWith([]), logLevel: 'warn', limits: { maxUploadBytes: 1.5 * 1024 * 1024 } } });
  });
  after(async () => s?.close());

  it('the 413 sentence names the cap in force, not the default 25MB', async () => {
    const post = async (bytes: Uint8Array) => {
      const res = await s.api('/api/v1/stt/get_text', { method: 'POST', headers: { 'content-type': 'audio/wav' }, body: bytes as Uint8Array<ArrayBuffer> });
      return { res, body: await res.json() };
    };
    await expectSttError(post(new Uint8Array(1.5 * 1024 * 1024 + 1)), 413, 'File size exceeds maximum limit of 1.5MB');
    await expectSttError(post(new Uint8Array(4 * 1024 * 1024)), 413, 'File size exceeds maximum limit of 1.5MB');
  });
});
