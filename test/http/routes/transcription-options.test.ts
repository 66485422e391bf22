/**
 * The transcription options over real HTTP with the real engines (silero VAD, the tiny streaming
 * English transducer): speech made by the Debian espeak-ng binary, so what was said is known.
 * `keywords` carry the digit and cue words, as a call centre's would; the tiny model needs that
 * help to hear a card number at all, and it makes the card-number test one of boosting too.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { REAL_TEST_MODELS, modelsDirWith, needs, sharedModel } from '../../helpers/models.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { expectSttError } from '../../helpers/stt-errors.js';
import { parseWav } from '../../../src/audio/wav.js';
import { encodeInt16 } from '../../../src/audio/encode.js';
import { startReceiver } from '../../jobs/fixtures/receiver.js';
import { connect, wsUrl } from '../../helpers/websocket.js';
import { ESPEAK_MISSING } from '../../voice-analysis/espeak-voices.js';
import { linkPunctuationFixture } from '../../fixtures/punctuation-pack.js';
import { spoken, type Rendering } from '../../helpers/espeak-speech.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH] }) || ESPEAK_MISSING;

const CARD_SPEECH =
  'my card number is forty two forty two, forty two forty two, forty two forty two, forty two forty two. <break time="1s"/> the expiry date is twelve twenty eight. <break time="1s"/> the security code is one two three.';
/** What the plain decode must hear for each redaction to have its cue and its digits. */
const CARD_HEARD = [/FORTY TWO FORTY TWO FORTY TWO FORTY TWO/, /\bEXPIR/, /TWELVE TWENTY EIGHT/, /SECURITY CODE IS ONE TWO THREE/];
/**
 * The espeak-ng renderings tried in turn. The tiny recogniser mishears some words of some of
 * them, and which ones changes between espeak-ng builds; each test first checks that the plain
 * decode of the rendering it takes heard the words its options act on.
 */
const RENDERINGS: Rendering[] = [
  { voice: 'en+m3', speed: 130 },
  { voice: 'en+f3', speed: 120 },
  { voice: 'en+f3', speed: 130 },
  { voice: 'en', speed: 140 },
  { voice: 'en+m3', speed: 120 },
];
/** `count` distinct made-up names of letters only ("kwaaa", "kwaab", …), comma-separated. */
function names(count: number): string {
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  return Array.from({ length: count }, (_, i) => `kw${[2, 1, 0].map((p) => letters[Math.floor(i / 26 ** p) % 26]).join('')}`).join(',');
}

const CARD_KEYWORDS = 'one,two,three,four,five,six,seven,eight,nine,forty,twelve,twenty,card,number,expiry,security code';

describe('transcription options over HTTP', { skip: NEEDS }, () => {
  let s: TestServer;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let card: Uint8Array;
  let cardPlain: any;

  async function transcribe(query: string, bytes: Uint8Array, path = '/api/v1/stt/get_text?'): Promise<any> {
    const res = await s.api(`${path}${query}`, { method: 'POST', headers: { 'content-type': 'audio/wav' }, body: bytes as Uint8Array<ArrayBuffer> });
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    return body;
  }

  /** The first rendering of `text` whose decode with `query` hears every one of `heard`, and that decode. */
  async function heardSpeech(text: string, query: string, heard: RegExp[]): Promise<{ speech: Uint8Array; plain: any }> {
    const decodes: string[] = [];
    for (const rendering of RENDERINGS) {
      const speech = spoken(text, rendering);
      const plain = await transcribe(query, speech);
      if (heard.every((re) => re.test(plain.transcription))) return { speech, plain };
      decodes.push(`${rendering.voice} at ${rendering.speed}: ${plain.transcription}`);
    }
    assert.fail(`no rendering was heard with ${heard.join(', ')}:\n${decodes.join('\n')}`);
  }

  before(async () => {
    const modelsDir = modelsDirWith([REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH]);
    [s, receiver] = await Promise.all([
      startTestServer({
        engines: true,
        config: { modelsDir, logLevel: 'warn', rateLimits: { transcription: { perMinute: 0 } }, webhooks: { backoffBaseMs: 5, backoffCapMs: 40, timeoutMs: 2000, pollMs: 20 } },
      }),
      startReceiver(),
    ]);
    ({ speech: card, plain: cardPlain } = await heardSpeech(CARD_SPEECH, cardQuery('numerals=false'), CARD_HEARD));
  });
  after(async () => {
    await s?.close();
    await receiver?.close();
  });

  /** Every word of `plain` inside a numeral or placeholder's span: the span starts at the first one's start and ends at the last one's end. */
  function assertTimesKept(rewritten: any[], plain: any[]): number {
    let merged = 0;
    for (const w of rewritten) {
      const covered = plain.filter((p) => p.start >= w.start && p.end <= w.end);
      assert.ok(covered.length > 0, `${w.word}: covers words of the plain result`);
      assert.equal(covered[0].start, w.start, `${w.word} starts where its first word did`);
      assert.equal(covered.at(-1).end, w.end, `${w.word} ends where its last word did`);
      if (covered.length > 1) merged++;
    }
    return merged;
  }

  const cardQuery = (extra: string) => `word_timestamps=true&keywords=${encodeURIComponent(CARD_KEYWORDS)}&${extra}`;
  /** What no stored or delivered copy may hold: the card number as digits or as the words heard. */
  function assertNoCard(text: string, where: string): void {
    assert.doesNotMatch(text, /4242|42 42|forty[ -]?two/i, `${where} holds no part of the card number`);
    assert.doesNotMatch(text, /1228|twelve twenty eight/i, `${where} holds no expiry`);
  }

  it('redact_pci: a spoken card number, expiry and CVV come back as placeholders with their times', async () => {
    const plain = cardPlain;
    assert.equal(plain.keywords_applied, true);
    const redacted = await transcribe(cardQuery('redact_pci=true'), card);
    assert.deepEqual(redacted.redacted_entities, ['[CREDITCARDNUMBER_1]', '[CREDITCARDEXPIRY_1]', '[CREDITCARDCVV_1]']);
    for (const placeholder of redacted.redacted_entities) assert.ok(redacted.transcription.includes(placeholder));
    assertNoCard(JSON.stringify(redacted), 'the response');
    assert.doesNotMatch(JSON.stringify(redacted), /ONE TWO THREE|\b123\b/, 'the CVV is gone');
    const placeholders = redacted.words.filter((w: any) => w.word.startsWith('['));
    assert.equal(placeholders.length, 3);
    assertTimesKept(placeholders, plain.words);
    assert.ok(redacted.utterances.some((u: any) => u.text.includes('[CREDITCARDNUMBER_1]')), 'utterances are redacted too');
    assert.equal(redacted.names_redacted, undefined, 'names are a PII matter');
  });

  it('with webhook_url the job row and the delivered payload hold no digit of the card', async () => {
    const submit = await s.api(`/api/v1/stt/get_text?${cardQuery(`redact_pci=true&redact_pii=true&webhook_url=${encodeURIComponent(receiver.url)}`)}`, {
      method: 'POST',
      headers: { 'content-type': 'audio/wav' },
      body: card as Uint8Array<ArrayBuffer>,
    });
    const { request_id: requestId } = (await submit.json()) as { request_id: string };
    assert.equal(submit.status, 200);
    const deadline = Date.now() + 30_000;
    while (receiver.forRequest(requestId).length === 0) {
      assert.ok(Date.now() < deadline, 'the webhook arrives');
      await new Promise((r) => setTimeout(r, 50));
    }
    const [delivery] = receiver.forRequest(requestId);
    const payload = delivery!.json as any;
    assert.equal(payload.status, 'success');
    assert.deepEqual(payload.redacted_entities, ['[CREDITCARDNUMBER_1]', '[CREDITCARDEXPIRY_1]', '[CREDITCARDCVV_1]']);
    assert.equal(payload.names_redacted, false, 'the payload says names were not redacted (no named-entity pack)');
    assertNoCard(delivery!.body, 'the webhook payload');

    const { db } = s.server.storage.store;
    const row = await db.selectFrom('jobs').selectAll().where('request_id', '=', requestId).executeTakeFirstOrThrow();
    assertNoCard(JSON.stringify(row), 'the job row');
    assert.match(String(row.result), /\[CREDITCARDNUMBER_1\]/);
    const audio = await db.selectFrom('job_audio').select('job_id').where('job_id', '=', row.id).execute();
    assert.equal(audio.length, 0, 'the audio is gone once transcribed');
  });

  it('numerals=true: spoken amounts, years and ordinals as digits, each spanning the words it replaced', async () => {
    const keywords = `keywords=${encodeURIComponent('twenty,five,dollars,nineteen,eighty,four,first,day')}`;
    const { speech, plain } = await heardSpeech(
      'I paid twenty five dollars. <break time="1s"/> in nineteen eighty four. <break time="1s"/> on the twenty first day.',
      `word_timestamps=true&numerals=false&${keywords}`,
      [/TWENTY FIVE DOLLARS/, /NINETEEN EIGHTY FOUR/, /TWENTY FIRST/],
    );
    const numerals = await transcribe(`word_timestamps=true&numerals=true&${keywords}`, speech);
    assert.doesNotMatch(plain.transcription, /\d/, 'with numerals=false the words stay as spoken');
    assert.match(numerals.transcription, /\$25\b/);
    assert.match(numerals.transcription, /\b1984\b/);
    assert.match(numerals.transcription, /\b21st\b/);
    assert.ok(assertTimesKept(numerals.words, plain.words) >= 3, 'three numbers over several words each');
    assert.deepEqual(
      numerals.utterances.map((u: any) => u.text).join(' '),
      numerals.words.map((w: any) => w.word).join(' '),
      'utterances are made of the rewritten words',
    );
    // The API's default is auto: English has number rules, so digits.
    for (const query of [`word_timestamps=true&${keywords}`, `word_timestamps=true&numerals=auto&${keywords}`]) {
      const auto = await transcribe(query, speech);
      assert.equal(auto.transcription, numerals.transcription, `${query}: digits as with numerals=true`);
      assert.deepEqual(auto.words, numerals.words);
    }
  });

  it('the product name and /waves/v1: numbers as spoken unless numerals=true or itn_normalize=true asks for digits', async () => {
    const keywords = `keywords=${encodeURIComponent('twenty,five,dollars,nineteen,eighty,four')}`;
    const { speech, plain } = await heardSpeech('I paid twenty five dollars in nineteen eighty four.', `numerals=false&${keywords}`, [/TWENTY FIVE DOLLARS/, /NINETEEN EIGHTY FOUR/]);
    const digits = await transcribe(`numerals=true&${keywords}`, speech);
    assert.match(digits.transcription, /\$25\b.*\b1984\b/);
    assert.equal((await transcribe(keywords, speech)).transcription, digits.transcription, 'the neutral route keeps the seed default, auto: digits in English');
    for (const path of ['/api/v1/pulse/get_text?', '/waves/v1/pulse/get_text?', '/waves/v1/stt?model=pulse&']) {
      assert.equal((await transcribe(keywords, speech, path)).transcription, plain.transcription, `${path}: the words as spoken by default`);
      assert.equal((await transcribe(`itn_normalize=false&${keywords}`, speech, path)).transcription, plain.transcription, `${path}: itn_normalize=false`);
      assert.equal((await transcribe(`itn_normalize=true&${keywords}`, speech, path)).transcription, digits.transcription, `${path}: itn_normalize=true`);
      assert.equal((await transcribe(`numerals=true&${keywords}`, speech, path)).transcription, digits.transcription, `${path}: numerals=true`);
      assert.equal((await transcribe(`numerals=false&itn_normalize=true&${keywords}`, speech, path)).transcription, plain.transcription, `${path}: numerals=false wins`);
    }
    const refused = await s.api('/api/v1/pulse/get_text?itn_normalize=yes', { method: 'POST', headers: { 'content-type': 'audio/wav' }, body: speech as Uint8Array<ArrayBuffer> });
    await expectSttError(Promise.resolve({ res: refused, body: await refused.json() }), 400, /itn_normalize/);
  });

  it('redact_pii and redact_pci as lists of kinds (as the Python SDK joins them) redact like true; an unknown kind is a 400 naming the field', async () => {
    const listed = await transcribe(cardQuery('redact_pci=card,cvv&redact_pii=ssn,email'), card, '/waves/v1/stt?model=pulse&');
    const flagged = await transcribe(cardQuery('redact_pci=true&redact_pii=true'), card, '/waves/v1/stt?model=pulse&');
    assert.deepEqual(listed.redacted_entities, ['[CREDITCARDNUMBER_1]', '[CREDITCARDEXPIRY_1]', '[CREDITCARDCVV_1]'], 'every kind of the family, never fewer than asked');
    assert.equal(listed.transcription, flagged.transcription);
    assert.equal(listed.names_redacted, false);
    assertNoCard(JSON.stringify(listed), 'the response');
    const none = await transcribe(cardQuery('redact_pci=false&redact_pii=false'), card, '/api/v1/pulse/get_text?');
    assert.equal(none.redacted_entities, undefined);

    const post = async (path: string) => {
      const res = await s.api(path, { method: 'POST', headers: { 'content-type': 'audio/wav' }, body: card as Uint8Array<ArrayBuffer> });
      return { res, body: await res.json() };
    };
    await expectSttError(post('/api/v1/stt/get_text?redact_pii=ssn,shoe_size'), 400, /redact_pii .*"shoe_size"/);
    await expectSttError(post('/api/v1/pulse/get_text?redact_pci=ssn'), 400, /redact_pci/);
    await expectSttError(post('/api/v1/pulse/get_text?redact_pci='), 400, /redact_pci/);
    const waves = await post('/waves/v1/stt?model=pulse&redact_pii=card');
    assert.equal(waves.res.status, 400);
    assert.match(waves.body.message, /redact_pii/);
  });

  it('format=true: sentence case and end punctuation', async () => {
    const speech = spoken('good morning. <break time="1500ms"/> did you see it?');
    const plain = await transcribe('word_timestamps=true&keywords=good,morning', speech);
    const formatted = await transcribe('word_timestamps=true&keywords=good,morning&format=true', speech);
    assert.equal(plain.transcription, plain.transcription.toUpperCase(), 'the tiny model writes capitals only');
    const sentences = formatted.transcription.split(/(?<=[.?!]) /);
    assert.equal(sentences.length, 2, 'the pause ends the first sentence');
    for (const sentence of sentences) assert.match(sentence, /^\p{Lu}[^\p{Lu}]*[.?!]$/u, `"${sentence}": a capital, lower case, an end mark`);
    assert.match(sentences[1]!, /^Did .*\?$/, 'a question ends with a question mark');
    assert.equal(formatted.transcription.toLowerCase().replace(/[.?!,]/g, ''), plain.transcription.toLowerCase(), 'the same words');
    assert.ok(formatted.words.every((w: any, i: number) => w.start === plain.words[i].start && w.end === plain.words[i].end), 'times untouched');
  });

  it('the live socket: redacted finals with redacted_entities, partials never showing the digits, numerals and format per utterance', async () => {
    const { samples, sampleRate } = parseWav(card);
    const query = new URLSearchParams({ word_timestamps: 'true', sample_rate: String(sampleRate), keywords: CARD_KEYWORDS, redact_pci: 'true', format: 'true' });
    const socket = await connect(wsUrl(s.url, `/api/v1/stt/get_text?${query}`), { authorization: `Bearer ${s.key}` });
    const pcm = encodeInt16(samples);
    // 100 ms frames, sent at once: the session takes them as fast as the engines go.
    for (let at = 0; at < pcm.length; at += sampleRate / 5) socket.send(Buffer.from(pcm.subarray(at, at + sampleRate / 5)));
    socket.send({ type: 'close_stream' });
    assert.equal((await socket.untilClosed(60_000)).code, 1000);
    const transcripts = socket.messages.filter((m) => m.type === 'transcription');
    const finals = transcripts.filter((m) => m.is_final && m.transcript);
    const text = finals.map((m) => m.transcript).join(' ');
    assert.match(text, /\[CREDITCARDNUMBER_1\]/, text);
    assert.ok(finals.some((m) => m.redacted_entities?.includes('[CREDITCARDNUMBER_1]')), 'the final lists its placeholders');
    for (const m of transcripts) {
      // A partial may show up to 3 digits (an unfinished "forty two" is two); never four of the card.
      if (m.is_final) assertNoCard(JSON.stringify(m), `final "${m.transcript}"`);
      else assert.doesNotMatch(JSON.stringify(m), /4242|forty[ -]?two[ -]?forty/i, `partial "${m.transcript}" shows no four digits of the card`);
      assert.ok(Array.isArray(m.redacted_entities), 'every transcript message says what it redacted');
      assert.equal(m.keywords_applied, true, 'and that the keywords were boosted');
    }
    assert.match(finals[0].transcript, /^\p{Lu}/u, 'formatted: sentence case');
    assert.match(finals[0].transcript, /[.?!]$/, 'formatted: end punctuation');
    const placeholder = finals.flatMap((m) => m.words).find((w: any) => w.word.startsWith('[CREDITCARDNUMBER_1]'));
    assert.ok(placeholder && placeholder.end > placeholder.start, 'the placeholder word keeps a time span');
  });

  it('the live socket: numerals default to auto (digits in English), numerals=false keeps the words', async () => {
    const { samples, sampleRate } = parseWav(spoken('I paid twenty five dollars in nineteen eighty four.'));
    const finalsOf = async (extra: Record<string, string>) => {
      const query = new URLSearchParams({ sample_rate: String(sampleRate), keywords: 'twenty,five,dollars,nineteen,eighty,four', ...extra });
      const socket = await connect(wsUrl(s.url, `/api/v1/stt/get_text?${query}`), { authorization: `Bearer ${s.key}` });
      socket.send(Buffer.from(encodeInt16(samples)));
      socket.send({ type: 'close_stream' });
      assert.equal((await socket.untilClosed(30_000)).code, 1000);
      return socket.messages.filter((m) => m.type === 'transcription' && m.is_final).map((m) => m.transcript).join(' ');
    };
    const byDefault = await finalsOf({});
    assert.match(byDefault, /\$25\b/, byDefault);
    assert.match(byDefault, /\b1984\b/, byDefault);
    const words = await finalsOf({ numerals: 'false' });
    assert.doesNotMatch(words, /\d/, words);
    assert.match(words, /TWENTY FIVE DOLLARS/, words);
  });

  it('the OpenAI route (official client) boosts the words of `prompt`', async () => {
    const client = new OpenAI({ apiKey: s.key, baseURL: `${s.url}/v1`, maxRetries: 0 });
    const run = async (prompt?: string) =>
      (await client.audio.transcriptions.create({ model: 'whisper-1', file: await toFile(card, 'card.wav', { type: 'audio/wav' }), ...(prompt ? { prompt } : {}) })).text;
    const plain = await run();
    const prompted = await run('The caller reads the expiry and the security code.');
    assert.doesNotMatch(plain, /SECURITY CODE/, 'the plain decode misses "security code"');
    assert.match(prompted, /SECURITY CODE/, 'the prompt\'s words are boosted');
  });

  it('takes up to 10,000 keywords in one request, boosting them all', async () => {
    const res = await s.api(`/api/v1/stt/get_text?keywords=${names(9_999)},security code:2`, { method: 'POST', headers: { 'content-type': 'audio/wav' }, body: card as Uint8Array<ArrayBuffer> });
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.keywords_applied, true);
    assert.match(body.transcription, /security code/i);
  });

  it('bad keywords are a 400 naming the rule, before any audio is read', async () => {
    const post = async (query: string) => {
      const res = await s.api(`/api/v1/stt/get_text?${query}`, { method: 'POST', headers: { 'content-type': 'audio/wav' }, body: card as Uint8Array<ArrayBuffer> });
      return { res, body: await res.json() };
    };
    await expectSttError(post('keywords=parley:-1'), 400, /intensifiers must be numbers from 0 to 100/);
    await expectSttError(post(`keywords=${'x'.repeat(101)}:1`), 400, /1 to 100 characters/);
    await expectSttError(post(`keywords=${names(10_001)}`), 400, /at most 10000 entries \(got 10001\)/);
    await expectSttError(post(`keywords=${names(1_000)}&keywords=${names(9_001)}`), 400, /at most 10000 entries/);
    await expectSttError(post(`keywords=${Array.from({ length: 2_001 }, () => 'x'.repeat(100)).join(',')}`), 400, /keywords.*200000 characters/);
    await expectSttError(post('numerals=yes'), 400, /numerals/);
  });
});

describe('keywords on a recogniser that cannot boost them', { skip: NEEDS }, () => {
  let s: TestServer;
  before(async () => {
    // The same streaming pack without its BPE files: nothing spells a keyword in its tokens.
    const modelsDir = modelsDirWith([REAL_TEST_MODELS.VAD]);
    const source = sharedModel(REAL_TEST_MODELS.STREAMING_ENGLISH);
    const bare = path.join(modelsDir, 'streaming-en-without-bpe');
    mkdirSync(bare);
    for (const name of readdirSync(source)) if (!name.startsWith('bpe.')) symlinkSync(path.join(source, name), path.join(bare, name));
    s = await startTestServer({ engines: true, config: { modelsDir, logLevel: 'warn', rateLimits: { transcription: { perMinute: 0 } } } });
  });
  after(async () => s?.close());

  it('says keywords_applied: false and transcribes all the same', async () => {
    const res = await s.api('/api/v1/stt/get_text?keywords=parley:3', { method: 'POST', headers: { 'content-type': 'audio/wav' }, body: spoken('hello parley') as Uint8Array<ArrayBuffer> });
    const body = (await res.json()) as any;
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.keywords_applied, false);
    assert.ok(body.transcription.length > 0);
  });

  it('says so on the live socket too', async () => {
    const { samples, sampleRate } = parseWav(spoken('hello parley'));
    const socket = await connect(wsUrl(s.url, `/api/v1/stt/get_text?keywords=parley:3&sample_rate=${sampleRate}`), { authorization: `Bearer ${s.key}` });
    socket.send(Buffer.from(encodeInt16(samples)));
    socket.send({ type: 'close_stream' });
    await socket.untilClosed(30_000);
    const transcripts = socket.messages.filter((m) => m.type === 'transcription');
    assert.ok(transcripts.length > 0);
    for (const m of transcripts) assert.equal(m.keywords_applied, false);
  });
});

/**
 * format=true with a punctuation pack installed: the hand-made CT-Transformer fixture
 * (test/fixtures/models/fake-punct-ct-transformer-en-marks) marks "well" and "fine" with a comma
 * and "today" with a question mark, so the answer shows the model ran: the rules add no comma
 * and end no sentence without a pause.
 */
describe('format with a punctuation pack over HTTP', { skip: NEEDS }, () => {
  let s: TestServer;
  const speech = () => spoken('well how are you today i am fine thank you');
  const query = `word_timestamps=true&keywords=${encodeURIComponent('well,today,fine,thank you')}`;

  before(async () => {
    const modelsDir = linkPunctuationFixture(modelsDirWith([REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH]));
    s = await startTestServer({ engines: true, config: { modelsDir, logLevel: 'warn', rateLimits: { transcription: { perMinute: 0 } } } });
  });
  after(async () => s?.close());

  async function transcribe(q: string, bytes: Uint8Array): Promise<any> {
    const res = await s.api(`/api/v1/stt/get_text?${q}`, { method: 'POST', headers: { 'content-type': 'audio/wav' }, body: bytes as Uint8Array<ArrayBuffer> });
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    return body;
  }

  it("punctuates with the pack's model: its commas and its question mark, sentence case after them", async () => {
    const bytes = speech();
    const plain = await transcribe(query, bytes);
    assert.equal(plain.transcription, "WELL HOW ARE YOU TODAY I'M FINE THANK YOU", 'the tiny model heard every word');
    const formatted = await transcribe(`${query}&format=true`, bytes);
    assert.equal(formatted.transcription, "Well, how are you today? I'm fine, thank you.");
    assert.deepEqual(formatted.words.map((w: any) => [w.start, w.end]), plain.words.map((w: any) => [w.start, w.end]), 'times untouched');
    assert.equal(formatted.utterances.map((u: any) => u.text).join(' '), formatted.transcription, 'utterances carry the marks');
  });
});
