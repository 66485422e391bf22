/**
 * The live transcription socket's transcript options, over real sockets, with speech made by the
 * Debian espeak-ng binary and the real tiny streaming zipformer (the keywords make it hear every
 * word of SENTENCE). What the client sees:
 * - the product name and /waves/v1/stt/live follow the service: finals formatted by default, spoken
 *   numbers kept unless itn_normalize (finals only), punctuate/capitalize, format=false turning
 *   all three off, a final every 10 words unless finalize_on_words=false, max_words, language and
 *   languages on finals, from_finalize on the final that answers a finalize, vad as vad_events'
 *   alias, external_session_id taken and never echoed;
 * - the neutral name keeps the original API's defaults (nothing added, numerals auto, a final per
 *   utterance, language on every message) and applies the service's flags when given;
 * - a bad value is a 400 naming the rule, before the upgrade.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { encodeInt16 } from '../../../src/audio/encode.js';
import { parseWav } from '../../../src/audio/wav.js';
import { modelsDirWith, needs, REAL_TEST_MODELS } from '../../helpers/models.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { connect, openSocket, TestSocket, wsUrl } from '../../helpers/websocket.js';
import { ESPEAK_MISSING } from '../../voice-analysis/espeak-voices.js';
import { spoken } from '../../helpers/espeak-speech.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH] }) || ESPEAK_MISSING;

/** Twelve words, heard exactly by the tiny model with KEYWORDS. */
const SENTENCE = 'well my name is john i live in london how are you today';
const KEYWORDS = 'well,john,london,today';
/** The rules' formatting of SENTENCE as one final: sentence case and an end mark. */
const FORMATTED = 'Well my name is john I live in london how are you today.';
/** Spoken numbers the tiny model hears as number words. */
const NUMBERS = 'my phone number is five five five one two three four';

const speech = new Map<string, Uint8Array>();
const speechOf = (text: string) => speech.get(text) ?? speech.set(text, spoken(text)).get(text)!;

interface Session {
  /** Sends the speech in 100 ms frames, at the pace of speech when asked (for partials on a loaded machine). */
  realTime?: boolean;
  /** The control messages after the speech; the last must be close_stream. */
  controls?: ('finalize' | 'close_stream')[];
}

const transcripts = (messages: any[]) => messages.filter((m) => m.type === 'transcription');
const finalsOf = (messages: any[]) => transcripts(messages).filter((m) => m.is_final);
const spokenFinals = (messages: any[]) => finalsOf(messages).filter((m) => m.transcript);
const partialsOf = (messages: any[]) => transcripts(messages).filter((m) => !m.is_final && m.transcript);
const wordsOf = (text: string) => text.split(/\s+/).filter(Boolean);
/** A transcript's words as spoken: lower case, no end marks. */
const plain = (text: string) => wordsOf(text.toLowerCase().replace(/[.,?!]+(\s|$)/g, '$1')).join(' ');

describe('live transcription options', { skip: NEEDS }, () => {
  let s: TestServer;

  before(async () => {
    const modelsDir = modelsDirWith([REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH]);
    s = await startTestServer({ engines: true, config: { modelsDir, logLevel: 'warn', rateLimits: { transcription: { perMinute: 0 } } } });
  });
  after(async () => s?.close());

  /** Every message of a socket on `path` that was sent `text` spoken, then `controls`; the socket closes normally. */
  async function live(path: string, query: Record<string, string>, text: string, { realTime = false, controls = ['close_stream'] }: Session = {}): Promise<any[]> {
    const wav = parseWav(speechOf(text));
    const q = new URLSearchParams({ sample_rate: String(wav.sampleRate), keywords: KEYWORDS, ...query });
    const socket = await connect(wsUrl(s.url, `${path}?${q}`), { authorization: `Bearer ${s.key}` });
    try {
      const pcm = encodeInt16(wav.samples);
      const frame = (wav.sampleRate / 10) * 2;
      for (let at = 0; at < pcm.length; at += frame) {
        socket.send(Buffer.from(pcm.subarray(at, at + frame)));
        if (realTime) await new Promise((r) => setTimeout(r, 100));
      }
      for (const control of controls) {
        const before = finalsOf(socket.messages).length;
        socket.send({ type: control });
        // Each finalize is answered before the next control, so its final is told apart.
        if (control === 'finalize') await socket.until((all) => finalsOf(all).length > before && finalsOf(all).at(-1).from_finalize !== false, 120_000);
      }
      assert.equal((await socket.untilClosed(120_000)).code, 1000);
      assert.deepEqual(socket.messages.filter((m) => m.type === 'error'), []);
      return socket.messages;
    } finally {
      socket.close();
    }
  }

  it('pulse and /stt/live by default: formatted finals of at most 10 words, spoken numbers kept, language and languages on finals only, from_finalize false on automatic finals, external_session_id not echoed', async () => {
    const messages = await live('/waves/v1/stt/live', { word_timestamps: 'true', external_session_id: 'call-42.a_b' }, SENTENCE);
    const finals = spokenFinals(messages);
    assert.ok(finals.length >= 2, `twelve words make at least two finals: ${JSON.stringify(finals.map((m) => m.transcript))}`);
    assert.equal(finals.map((m) => plain(m.transcript)).join(' '), SENTENCE, 'every word once, in order');
    for (const m of finals) {
      assert.ok(wordsOf(m.transcript).length <= 10, m.transcript);
      assert.match(m.transcript, /^[A-Z].*[.?!]$/, `formatted: ${m.transcript}`);
      assert.equal(m.words.map((w: any) => w.word).join(' '), m.transcript, 'the words carry the formatting');
      assert.equal(m.language, 'en');
      assert.deepEqual(m.languages, ['en']);
      assert.equal(m.from_finalize, false);
    }
    assert.equal(finalsOf(messages).at(-1).is_last, true);
    for (const m of transcripts(messages).filter((m) => !m.is_final)) {
      assert.equal(m.language, undefined, 'partials name no language');
      assert.equal(m.from_finalize, undefined);
    }
    assert.doesNotMatch(JSON.stringify(messages), /call-42/, 'external_session_id is not echoed');

    const numbers = spokenFinals(await live('/api/v1/pulse/get_text', { finalize_on_words: 'false' }, NUMBERS));
    assert.equal(numbers.length, 1);
    assert.doesNotMatch(numbers[0].transcript, /\d/, `itn_normalize is off by default: ${numbers[0].transcript}`);
    assert.match(numbers[0].transcript, /\b(one|two|three|four|five)\b/i);
  });

  it('the neutral name keeps the original defaults: the words as heard, one final per utterance, numerals auto, language on every message', async () => {
    const messages = await live('/api/v1/stt/get_text', { word_timestamps: 'true' }, SENTENCE);
    assert.deepEqual(spokenFinals(messages).map((m) => m.transcript), [SENTENCE.toUpperCase()]);
    for (const m of transcripts(messages)) {
      assert.equal(m.language, 'en');
      assert.equal(m.languages, undefined);
      assert.equal(m.from_finalize, undefined);
    }
    const numbers = spokenFinals(await live('/waves/v1/stt/get_text', {}, NUMBERS));
    assert.match(numbers.map((m) => m.transcript).join(' '), /\d{3}/, 'numerals=auto: digits');
  });

  it('itn_normalize=true writes numbers as digits in finals, never in partials; format=false overrides it, capitalize and punctuate', async () => {
    const spokenForm = spokenFinals(await live('/waves/v1/stt/live', { finalize_on_words: 'false', format: 'false' }, NUMBERS));
    assert.equal(spokenForm.length, 1);
    const heard = spokenForm[0].transcript;
    assert.equal(heard, heard.toLowerCase(), `format=false: lower case: ${heard}`);
    assert.doesNotMatch(heard, /[.,?!]|\d/, `format=false: no marks, no digits: ${heard}`);

    const withItn = await live('/waves/v1/stt/live', { finalize_on_words: 'false', itn_normalize: 'true' }, NUMBERS, { realTime: true });
    const [final] = spokenFinals(withItn);
    assert.match(final.transcript, /\d{3}/, `digits: ${final.transcript}`);
    assert.match(final.transcript, /^[A-Z].*[.?!]$/, 'still formatted');
    assert.ok(wordsOf(final.transcript).length < wordsOf(heard).length, 'spoken digits became one number');
    const partials = partialsOf(withItn);
    assert.ok(partials.length > 0, 'partials');
    for (const m of partials) assert.doesNotMatch(m.transcript, /\d/, `a partial keeps the spoken form: ${m.transcript}`);

    const overridden = spokenFinals(await live('/waves/v1/stt/live', { finalize_on_words: 'false', format: 'false', itn_normalize: 'true', punctuate: 'true', capitalize: 'true' }, NUMBERS));
    assert.deepEqual(overridden.map((m) => m.transcript), [heard], 'format=false wins over itn_normalize, punctuate and capitalize');
  });

  it('punctuate=false removes the marks, capitalize=false the capitals, each alone; vad is vad_events\' alias and loses to it', async () => {
    const formatted = await live('/waves/v1/stt/live', { finalize_on_words: 'false', vad: 'true' }, SENTENCE);
    assert.deepEqual(spokenFinals(formatted).map((m) => m.transcript), [FORMATTED]);
    assert.ok(formatted.some((m) => m.type === 'speech_started') && formatted.some((m) => m.type === 'speech_ended'), 'vad=true sends the VAD events');

    const unpunctuated = await live('/waves/v1/stt/live', { finalize_on_words: 'false', punctuate: 'false', word_timestamps: 'true', vad: 'true', vad_events: 'false' }, SENTENCE);
    assert.deepEqual(spokenFinals(unpunctuated).map((m) => m.transcript), ['Well my name is john I live in london how are you today']);
    assert.ok(!spokenFinals(unpunctuated)[0].words.some((w: any) => /[.,?!]/.test(w.word)), 'nor in the words');
    assert.ok(!unpunctuated.some((m) => m.type === 'speech_started'), 'vad_events=false wins over vad=true');

    const lowercase = await live('/waves/v1/stt/live', { finalize_on_words: 'false', capitalize: 'false' }, SENTENCE);
    assert.deepEqual(spokenFinals(lowercase).map((m) => m.transcript), [FORMATTED.toLowerCase()]);

    // The neutral name adds nothing by default and removes what the flags ask.
    const neutral = await live('/api/v1/stt/get_text', { capitalize: 'false' }, SENTENCE);
    assert.deepEqual(spokenFinals(neutral).map((m) => m.transcript), [SENTENCE]);
  });

  it('max_words caps every final, with or without finalize_on_words, on every name; no word is lost or repeated and times follow on', async () => {
    for (const [path, query] of [
      ['/waves/v1/stt/live', { max_words: '3', finalize_on_words: 'false', word_timestamps: 'true' }],
      ['/api/v1/stt/get_text', { max_words: '5', word_timestamps: 'true' }],
    ] as const) {
      const max = Number(query.max_words);
      const finals = spokenFinals(await live(path, query, SENTENCE));
      assert.equal(finals.map((m) => plain(m.transcript)).join(' '), SENTENCE, `${path}: every word once, in order`);
      assert.ok(finals.length >= Math.ceil(12 / max), `${path}: ${finals.length} finals`);
      let last = 0;
      for (const m of finals) {
        assert.ok(wordsOf(m.transcript).length <= max, `${path}: ${m.transcript}`);
        assert.equal(m.words.length, wordsOf(m.transcript).length);
        assert.ok(m.start >= last - 0.001 && m.end >= m.start, `${path}: ${m.start}..${m.end} after ${last}`);
        for (const w of m.words) assert.ok(w.start >= m.start - 0.001 && w.end <= m.end + 0.001, `${path}: ${w.word} ${w.start}..${w.end} inside ${m.start}..${m.end}`);
        last = m.end;
      }
    }
  });

  it('from_finalize is true on the final that answers a finalize, even an empty one, and false on the last final of close_stream', async () => {
    const messages = await live('/waves/v1/pulse/get_text', { finalize_on_words: 'false', endpointing: 'false' }, SENTENCE, { controls: ['finalize', 'finalize', 'close_stream'] });
    const finals = finalsOf(messages);
    assert.deepEqual(
      finals.map((m) => [m.transcript, m.from_finalize, m.is_last]),
      [
        [FORMATTED, true, false],
        ['', true, false],
        ['', false, true],
      ],
    );
  });

  it('refuses a bad value with 400 naming the rule, before the upgrade', async () => {
    const cases: [string, string][] = [
      ['max_words=0', 'max_words must be between 1 and 1000'],
      ['max_words=1001', 'max_words must be between 1 and 1000'],
      ['max_words=ten', 'max_words must be a whole number of words between 1 and 1000'],
      ['finalize_on_words=1', 'finalize_on_words must be one of true, false'],
      ['itn_normalize=yes', 'itn_normalize must be one of true, false'],
      ['punctuate=no', 'punctuate must be one of true, false'],
      ['capitalize=False', 'capitalize must be one of true, false'],
      ['vad=on', 'vad must be one of true, false'],
      ['external_session_id=a%20b', "external_session_id must be letters, digits, '_', '-' or '.'"],
      [`external_session_id=${'x'.repeat(129)}`, 'external_session_id must be at most 128 characters'],
    ];
    for (const path of ['/waves/v1/stt/live', '/api/v1/stt/get_text']) {
      for (const [query, sentence] of cases) {
        const result = await openSocket(wsUrl(s.url, `${path}?${query}`), { authorization: `Bearer ${s.key}` });
        assert.ok(!(result instanceof TestSocket), query);
        assert.equal(result.status, 400, query);
        // Each layout's error body: the current one's {status, error, message}, the legacy one's {error: sentence}.
        const said = path.startsWith('/waves/') ? result.body.message : result.body.error;
        assert.ok(String(said).startsWith(sentence), `${path}?${query}: ${JSON.stringify(result.body)}`);
      }
    }
  });
});
