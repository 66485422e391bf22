/**
 * number_pronunciation_language and math_notation, as documented by
 * smallest-inc/smallest-ai-documentation@bfc4ef1 (fern/apis/waves/openapi/tts-openapi.yaml,
 * changelog-entries/lightning-v3.1/2026-07-10-number-pronunciation-language.mdx,
 * changelog-entries/general/2026-08-05-tts-math-notation-param.mdx), on the real eSpeak NG engine.
 * What the listener gets is read from the words the socket times (the text eSpeak NG is given),
 * with Pipecat's message (pipecat-ai/pipecat@acead0507d7de44e216d24533964106ca1d1d044,
 * src/pipecat/services/smallest/tts.py _build_msg: word_timestamps on) plus the documented fields;
 * the REST routes take the Python SDK 5.5.0 body (smallest-inc/smallest-python-sdk@86842be,
 * src/smallestai/waves/raw_client.py synthesize_tts, which sends number_pronunciation_language).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { connect, wsUrl } from '../../helpers/websocket.js';

const VOICE = 'espeak-en-us-female';

let s: TestServer;

before(async () => {
  s = await startTestServer({ engines: true, config: { rateLimits: { synthesis: { perMinute: 0 } } } });
});
after(() => s?.close());

/** The words eSpeak NG is given for `text` with `fields`, and the request's complete message. */
async function spoken(text: string, fields: object): Promise<{ words: string[]; complete: any }> {
  const socket = await connect(wsUrl(s.url, '/waves/v1/tts/live'), { authorization: `Bearer ${s.key}` });
  socket.send({ text, voice_id: VOICE, model: 'lightning_v3.1', language: 'en', sample_rate: 16000, word_timestamps: true, output_format: 'pcm', ...fields });
  const all = await socket.until((m) => m.some((x) => x.status === 'complete' || x.status === 'error'));
  socket.close();
  const complete = all.at(-1);
  assert.equal(complete.status, 'complete', JSON.stringify(complete));
  return { words: all.filter((m) => m.status === 'word_timestamp').map((m) => m.data.word.replace(/[.,]$/, '')), complete };
}

const pythonSdkBody = (fields: Record<string, unknown>) => ({ voice_id: VOICE, model: 'lightning_v3.1', sample_rate: 24000, speed: 1, language: 'en', output_format: 'pcm', ...fields });

describe('math_notation', () => {
  it('off by default: "6 x 7" and "3 - 1" are left to the number reader', async () => {
    assert.deepEqual((await spoken('The answer is 6 x 7, the ratio 3 - 1.', {})).words, ['The', 'answer', 'is', '6', 'x', '7', 'the', 'ratio', '3', '1']); // a lone '-' is no word to time
  });

  it('true: digit-flanked operators are read as words; glued - and / stay a range and a fraction', async () => {
    const { words } = await spoken('The answer is 6 x 7, the ratio 3 - 1, 2^10 = 1024, pages 5-3 and 1/2.', { math_notation: true });
    assert.deepEqual(words, ['The', 'answer', 'is', '6', 'times', '7', 'the', 'ratio', '3', 'minus', '1', '2', 'to', 'the', 'power', 'of', '10', 'equals', '1024', 'pages', '5-3', 'and', '1/2']);
  });

  it('the operator word follows number_pronunciation_language, not language: hi reads 6 x 7 as छह गुणा सात', async () => {
    const { words, complete } = await spoken('The answer is 6 x 7.', { math_notation: true, number_pronunciation_language: 'hi' });
    assert.deepEqual(words, ['The', 'answer', 'is', 'छह', 'गुणा', 'सात']);
    assert.equal(complete.number_pronunciation_language_applied, true);
  });
});

describe('number_pronunciation_language', () => {
  it('reads only the numeric content in that language; the words around it stay', async () => {
    assert.deepEqual((await spoken('Gate 12 closes at 10:30.', { number_pronunciation_language: 'de' })).words, ['Gate', 'zwölf', 'closes', 'at', 'zehn', 'Uhr', 'dreißig']);
  });

  it('the synthesis language itself, or auto, changes nothing and is reported as applied', async () => {
    for (const code of ['en', 'auto']) {
      const { words, complete } = await spoken('Gate 12.', { number_pronunciation_language: code });
      assert.deepEqual(words, ['Gate', '12'], code);
      assert.equal(complete.number_pronunciation_language_applied, true, code);
    }
    assert.equal('number_pronunciation_language_applied' in (await spoken('Gate 12.', {})).complete, false, 'not reported when not asked');
  });

  it('a language Parley cannot spell numbers in is accepted, the numbers read in the synthesis language, and reported as not applied', async () => {
    const { words, complete } = await spoken('Gate 12.', { number_pronunciation_language: 'ta' });
    assert.deepEqual(words, ['Gate', '12']);
    assert.equal(complete.number_pronunciation_language_applied, false);
    const res = await s.api('/waves/v1/tts', { method: 'POST', json: pythonSdkBody({ text: 'Gate 12.', number_pronunciation_language: 'ta' }) });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-number-pronunciation-language-applied'), 'false');
    await res.arrayBuffer();
  });

  it('REST and SSE say whether it was applied; the product names take it too', async () => {
    for (const path of ['/waves/v1/tts', '/waves/v1/tts/live']) {
      const res = await s.api(path, { method: 'POST', json: pythonSdkBody({ text: 'Gate 12.', number_pronunciation_language: 'hi' }) });
      assert.equal(res.status, 200, path);
      assert.equal(res.headers.get('x-number-pronunciation-language-applied'), 'true', path);
      await res.arrayBuffer();
    }
    const product = await s.api('/waves/v1/lightning-v3.1/get_speech', { method: 'POST', json: { text: 'Gate 12.', voice_id: VOICE, number_pronunciation_language: 'es', math_notation: true } });
    assert.equal(product.status, 200);
    assert.equal(product.headers.get('x-number-pronunciation-language-applied'), 'true');
    const plain = await s.api('/waves/v1/tts', { method: 'POST', json: pythonSdkBody({ text: 'Gate 12.' }) });
    assert.equal(plain.headers.get('x-number-pronunciation-language-applied'), null);
    await Promise.all([product.arrayBuffer(), plain.arrayBuffer()]);
  });

  it('bad values are refused with the field named', async () => {
    for (const [field, value] of [
      ['number_pronunciation_language', 'xx'],
      ['math_notation', 'yes'],
    ] as const) {
      const res = await s.api('/waves/v1/tts', { method: 'POST', json: pythonSdkBody({ text: 'Hi.', [field]: value }) });
      assert.equal(res.status, 400, field);
      assert.match((await res.json()).message, new RegExp(field));
    }
  });
});
