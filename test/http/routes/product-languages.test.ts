/**
 * The languages of the service's product models over real HTTP and sockets, on the real eSpeak NG
 * voices: every code lightning_v3.1 and lightning_v3.1_pro accept is spoken by a voice of that
 * language (`Content-Language` names the language, `X-Voice-Id` the voice that spoke), a voice that
 * does not speak the asked language is routed to the one most like it that does, `auto` and an
 * omitted language detect the text's, the Pro pool's voice list, and the 400s. The neutral names
 * keep the seed's rules.
 *
 * The language values real clients send are replayed with their exact requests:
 * - LiveKit Agents, livekit/agents@da6af86ac640a3bc54585764e64321d7048c1c16:
 *   livekit-plugins/livekit-plugins-smallestai/livekit/plugins/smallestai/tts.py sends
 *   `LanguageCode(language).language` (livekit-agents/livekit/agents/language.py: a language name
 *   through LANGUAGE_NAMES_TO_CODE of _language_data.py, an ISO 639-3 code through ISO_639_3_TO_1,
 *   a BCP-47 tag cut to its base) in SynthesizeStream._base_payload (token frames with continue:
 *   true, then the empty flush, on wss …/waves/v1/tts/live) and in _to_smallest_options (POST
 *   …/waves/v1/tts); its default model is lightning_v3.1_pro.
 * - Pipecat, pipecat-ai/pipecat@acead0507d7de44e216d24533964106ca1d1d044:
 *   src/pipecat/services/smallest/tts.py language_to_smallest_tts_language (its 16 verified codes,
 *   else resolve_language's base code of the Language, src/pipecat/transcriptions/language.py) in
 *   _build_msg (one frame per sentence on …/waves/v1/tts/live, word_timestamps true, output_format
 *   pcm); its default model is lightning_v3.1_pro.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { powerSpectrum } from '../../../src/voice-analysis/fft.js';
import { documentedProductLanguages, productModelLanguages, type ProductSpeechModel } from '../../../src/synthesis/languages.js';
import { sampleSentences } from '../../helpers/sentences.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { allSseEvents } from '../../helpers/sse.js';
import { connect, wsUrl, type TestSocket } from '../../helpers/websocket.js';

/** An English voice: the service routes any English or Hindi voice across its languages. */
const ENGLISH = 'espeak-en-us-female';
const RATE = 24000;
const PRODUCT_MODELS: ProductSpeechModel[] = ['lightning_v3.1', 'lightning_v3.1_pro'];

let s: TestServer;
/** Voice id → the ISO 639-1 codes it speaks, from the Pro pool's voice list. */
let voiceLanguages: Map<string, string[]>;
let voiceGenders: Map<string, string>;

before(async () => {
  s = await startTestServer({ engines: true, config: { rateLimits: { synthesis: { perMinute: 0 } } } });
  const listed = (await (await s.api('/waves/v1/lightning-v3.1-pro/get_voices')).json()) as { voices: { voiceId: string; tags: { language: string[]; gender: string } }[] };
  voiceLanguages = new Map(listed.voices.map((v) => [v.voiceId, [...new Set(v.tags.language.map((t) => t.toLowerCase().split('-')[0]!))]]));
  voiceGenders = new Map(listed.voices.map((v) => [v.voiceId, v.tags.gender]));
});
after(() => s?.close());

/** The first listed voice whose first language is `code`, of `gender`. */
function fittingVoice(code: string, gender = 'female'): string {
  const id = [...voiceLanguages].find(([voiceId, languages]) => languages[0] === code && voiceGenders.get(voiceId) === gender)?.[0];
  assert.ok(id, `a ${gender} voice speaks ${code}`);
  return id;
}

interface Spoken {
  status: number;
  language: string | null;
  voice: string | null;
  bytes: Buffer;
  body?: { status?: string; message?: string };
}

async function answered(res: Response): Promise<Spoken> {
  const bytes = Buffer.from(await res.arrayBuffer());
  const body = res.headers.get('content-type')?.includes('json') ? JSON.parse(bytes.toString()) : undefined;
  return { status: res.status, language: res.headers.get('content-language'), voice: res.headers.get('x-voice-id'), bytes, body };
}

/** POST /waves/v1/tts: raw 16-bit PCM at RATE. */
async function tts(body: Record<string, unknown>): Promise<Spoken> {
  return answered(await s.api('/waves/v1/tts', { method: 'POST', json: { voice_id: ENGLISH, sample_rate: RATE, output_format: 'pcm', ...body } }));
}

/** Seconds of 16-bit mono PCM at RATE. */
const seconds = (pcm: Buffer) => pcm.length / 2 / RATE;

/** Log power spectra of 512-sample frames every 10 ms of 16-bit PCM at RATE, standardised (mean 0, deviation 1 over all). */
function spectrogram(pcm: Buffer): Float64Array[] {
  const x = new Int16Array(pcm.buffer, pcm.byteOffset, pcm.length >> 1);
  const frames: Float64Array[] = [];
  for (let at = 0; at + 512 <= x.length; at += RATE / 100) {
    frames.push(powerSpectrum(Array.from(x.subarray(at, at + 512), (v) => v / 32768), 512).map((p) => Math.log(p + 1e-9)));
  }
  const all = frames.flatMap((f) => [...f]);
  const mean = all.reduce((a, b) => a + b, 0) / all.length;
  const deviation = Math.sqrt(all.reduce((a, b) => a + (b - mean) ** 2, 0) / all.length) || 1;
  return frames.map((f) => f.map((v) => (v - mean) / deviation));
}

/**
 * How alike two renderings sound: the best correlation of their log spectrograms within ±50 ms.
 * eSpeak's renderings of one text by one voice are not bit-identical; measured, they correlate
 * 0.86-0.96 (0.89-0.95 for the sentences below), while the English voice reading the German,
 * Spanish, Portuguese, Japanese or Greek sentence measures 0.35-0.51.
 */
function likeness(a: Buffer, b: Buffer): number {
  const [x, y] = [spectrogram(a), spectrogram(b)];
  let best = -1;
  for (let lag = -5; lag <= 5; lag++) {
    let sum = 0;
    let count = 0;
    for (let i = Math.max(0, -lag); i < x.length && i + lag < y.length; i++) {
      const [u, v] = [x[i]!, y[i + lag]!];
      for (let k = 0; k < u.length; k++) sum += u[k]! * v[k]!;
      count += u.length;
    }
    best = Math.max(best, sum / Math.max(1, count));
  }
  return best;
}
const SAME_VOICE = 0.8;
const OTHER_VOICE = 0.7;

function assertSpoken(got: Spoken, language: string, voice: string, what: string): void {
  assert.equal(got.status, 200, `${what}: ${got.bytes.toString().slice(0, 300)}`);
  assert.equal(got.language, language, `${what}: Content-Language`);
  assert.equal(got.voice, voice, `${what}: X-Voice-Id`);
  assert.ok(voiceLanguages.get(voice)!.includes(language), `${what}: ${voice} speaks ${language}`);
  assert.ok(seconds(got.bytes) > 0.5, `${what}: ${seconds(got.bytes)} s of audio`);
}

describe('every code each product model accepts', () => {
  it('lightning_v3.1 takes its 20 documented codes (and ar, he), lightning_v3.1_pro its 31 (and he), each spoken by a voice of that language', async () => {
    assert.equal(documentedProductLanguages('lightning_v3.1').length, 20);
    assert.equal(documentedProductLanguages('lightning_v3.1_pro').length, 31);
    for (const model of PRODUCT_MODELS) {
      for (const code of productModelLanguages[model]) {
        const text = sampleSentences[code]!;
        const own = fittingVoice(code);
        // A voice of the language speaks it itself.
        const direct = await tts({ model, language: code, text, voice_id: own });
        assertSpoken(direct, code, own, `${model} ${code} with ${own}`);
        // The English voice hands it to that voice, its gender kept (the next test listens to a few).
        const routed = await tts({ model, language: code, text });
        assertSpoken(routed, code, code === 'en' ? ENGLISH : own, `${model} ${code} with ${ENGLISH}`);
      }
    }
  });

  it('a routed request sounds as the fitting voice on the seed route does, not as the English voice reading the text', async () => {
    for (const code of ['de', 'es', 'pt', 'ja', 'el']) {
      const text = sampleSentences[code]!;
      const routed = await tts({ model: 'lightning_v3.1_pro', language: code, text });
      const voice = fittingVoice(code);
      // The neutral route, the voice speaking its own language (language omitted).
      const reference = await answered(
        await s.api('/api/v1/tts-v2/get_speech', { method: 'POST', json: { text, voice_id: voice, sample_rate: RATE, output_format: 'pcm', add_wav_header: false } }),
      );
      assert.equal(reference.status, 200);
      assert.ok(likeness(routed.bytes, reference.bytes) > SAME_VOICE, `${code}: the routed audio is ${voice}'s (${likeness(routed.bytes, reference.bytes)})`);
      const english = await tts({ model: 'lightning_v3.1_pro', language: 'en', text });
      assert.equal(english.voice, ENGLISH);
      assert.ok(likeness(english.bytes, routed.bytes) < OTHER_VOICE, `${code}: the English voice's reading differs (${likeness(english.bytes, routed.bytes)})`);
    }
  });
});

describe('routing and defaults', () => {
  const german = 'Guten Morgen, wie geht es Ihnen heute? Das Wetter ist wirklich schön.';

  it('auto reads the language of the text among the model\'s and routes it', async () => {
    for (const model of PRODUCT_MODELS) {
      assertSpoken(await tts({ model, language: 'auto', text: german }), 'de', fittingVoice('de'), `${model} auto, German`);
      assertSpoken(await tts({ model, language: 'auto', text: sampleSentences.hi! }), 'hi', fittingVoice('hi'), `${model} auto, Hindi`);
      assertSpoken(await tts({ model, language: 'auto', text: sampleSentences.en! }), 'en', ENGLISH, `${model} auto, English`);
    }
    // Only Pro has Greek, Japanese and Korean.
    for (const code of ['el', 'ja', 'ko']) {
      assertSpoken(await tts({ model: 'lightning_v3.1_pro', language: 'auto', text: sampleSentences[code]! }), code, fittingVoice(code), `Pro auto, ${code}`);
    }
  });

  it('Pro without a language speaks English or Hindi as the text is; lightning_v3.1 without one keeps the voice\'s language', async () => {
    assertSpoken(await tts({ model: 'lightning_v3.1_pro', text: sampleSentences.en! }), 'en', ENGLISH, 'Pro, English text');
    assertSpoken(await tts({ model: 'lightning_v3.1_pro', text: sampleSentences.hi! }), 'hi', fittingVoice('hi'), 'Pro, Hindi text');
    assertSpoken(await tts({ model: 'lightning_v3.1_pro', text: german }), 'en', ENGLISH, 'Pro, German text: en + hi only');
    assertSpoken(await tts({ model: 'lightning_v3.1', text: sampleSentences.hi! }), 'en', ENGLISH, 'v3.1, Hindi text');
    assertSpoken(await tts({ model: 'lightning_v3.1', text: sampleSentences.hi!, voice_id: fittingVoice('hi', 'male') }), 'hi', fittingVoice('hi', 'male'), 'v3.1, Hindi voice');
  });

  it('a male voice is routed to a male voice', async () => {
    assertSpoken(await tts({ model: 'lightning_v3.1', language: 'fr', text: sampleSentences.fr!, voice_id: 'espeak-en-gb-male' }), 'fr', fittingVoice('fr', 'male'), 'fr, male');
  });

  it('the lightning-v3.1 path names route too: get_speech, the SSE stream and the socket', async () => {
    const file = await answered(
      await s.api('/api/v1/lightning-v3.1/get_speech', { method: 'POST', json: { text: sampleSentences.de, voice_id: ENGLISH, language: 'de', sample_rate: RATE, output_format: 'pcm', add_wav_header: false } }),
    );
    assertSpoken(file, 'de', fittingVoice('de'), '/api/v1/lightning-v3.1/get_speech');

    const res = await s.api('/waves/v1/lightning-v3.1/stream', { method: 'POST', json: { text: sampleSentences.pt, voice_id: ENGLISH, language: 'pt' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-language'), 'pt');
    assert.equal(res.headers.get('x-voice-id'), fittingVoice('pt'));
    const events = await allSseEvents(res);
    assert.ok(events.filter((e) => e.event === 'audio').length > 2);

    const socket = await connect(wsUrl(s.url, '/waves/v1/lightning-v3.1/get_speech/stream'), { authorization: `Bearer ${s.key}` });
    try {
      socket.send({ text: sampleSentences.sv, voice_id: ENGLISH, language: 'sv', sample_rate: RATE });
      const messages = await untilDone(socket, 0);
      assert.equal(messages.at(-1).status, 'complete', JSON.stringify(messages.at(-1)));
      assert.ok(seconds(audioOf(messages)) > 0.5);
    } finally {
      socket.close();
    }
  });

  it('the neutral names keep the seed\'s rules: its codes only, and the voice must speak the language', async () => {
    const seed = (json: object) => s.api('/api/v1/tts-v3.1/get_speech', { method: 'POST', json: { text: 'Hallo.', voice_id: ENGLISH, ...json } });
    const unlisted = await seed({ language: 'de' });
    assert.equal(unlisted.status, 400);
    assert.match(((await unlisted.json()) as { message: string }).message, /language must be one of auto, en, hi, ta, es/);
    const unspoken = await seed({ language: 'hi' });
    assert.equal(unspoken.status, 400);
    assert.match(((await unspoken.json()) as { message: string }).message, /cannot be spoken by voice "espeak-en-us-female"/);
    const neutralModel = await tts({ model: 'tts-v3.1', language: 'hi', text: 'नमस्ते' });
    assert.equal(neutralModel.status, 400);
    assert.match(neutralModel.body!.message!, /cannot be spoken by voice/);
  });
});

describe('errors', () => {
  it('a code outside the model\'s list is a 400 naming the field and the model, in each family\'s shape', async () => {
    const base = await tts({ model: 'lightning_v3.1', language: 'ja', text: sampleSentences.ja });
    assert.equal(base.status, 400);
    assert.equal(base.body!.status, 'error');
    assert.match(base.body!.message!, /^language must be one of auto, en, .* for model lightning_v3\.1$/);
    assert.ok(!base.body!.message!.includes(' ja,'), base.body!.message);

    const unknown = await tts({ model: 'lightning_v3.1_pro', language: 'xx', text: 'Hello.' });
    assert.equal(unknown.status, 400);
    assert.match(unknown.body!.message!, /language/);

    const legacy = await s.api('/api/v1/lightning-v3.1/get_speech', { method: 'POST', json: { text: sampleSentences.ko, voice_id: ENGLISH, language: 'ko' } });
    assert.equal(legacy.status, 400);
    const body = (await legacy.json()) as Record<string, string>;
    assert.equal(body.status, undefined, 'the legacy shape has no status field');
    assert.match(body.message!, /^language must be one of auto, en, /);
  });
});

describe('the Pro pool\'s voices and the voice catalogue', () => {
  it('GET <prefix>/lightning-v3.1-pro/get_voices lists voices for every Pro language', async () => {
    for (const prefix of ['/waves/v1', '/api/v1']) {
      const res = await s.api(`${prefix}/lightning-v3.1-pro/get_voices`);
      assert.equal(res.status, 200);
      const { voices } = (await res.json()) as { voices: { voiceId: string; tags: { language: string[] } }[] };
      const spoken = new Set(voices.flatMap((v) => v.tags.language.map((t) => t.toLowerCase().split('-')[0])));
      for (const code of productModelLanguages['lightning_v3.1_pro']) assert.ok(spoken.has(code), `${prefix}: a voice speaks ${code}`);
    }
  });

  it('GET /waves/v1/voice/get-all-models browses every voice, each usable with /tts', async () => {
    const res = await s.api('/waves/v1/voice/get-all-models');
    assert.equal(res.status, 200);
    const { voices } = (await res.json()) as { voices: { _id: string; voiceId: string; displayName: string; description: string; tags: { age: string; emotions: string[]; language: string[] } }[] };
    assert.deepEqual(new Set(voices.map((v) => v.voiceId)), new Set(voiceLanguages.keys()));
    const chinese = voices.find((v) => v.voiceId === fittingVoice('zh'))!;
    assert.equal(chinese._id, chinese.voiceId);
    assert.deepEqual(chinese.tags.emotions, []);
    assert.ok(chinese.tags.language.includes('zh'), JSON.stringify(chinese));
    assertSpoken(await tts({ model: 'lightning_v3.1_pro', language: 'zh', voice_id: chinese.voiceId, text: sampleSentences.zh }), 'zh', chinese.voiceId, 'a catalogue voice');
    assert.equal((await fetch(`${s.url}/waves/v1/voice/get-all-models`)).status, 401);
    assert.equal((await s.api('/api/v1/voice/get-all-models')).status, 404);
  });
});

const audioOf = (messages: any[]) => Buffer.concat(messages.filter((m) => m.status === 'chunk').map((m) => Buffer.from(m.data.audio, 'base64')));

/** The messages from `from` on, up to the first complete or error. */
async function untilDone(socket: TestSocket, from: number): Promise<any[]> {
  await socket.until((all) => all.slice(from).some((m) => m.status === 'complete' || m.status === 'error'));
  return socket.messages.slice(from);
}

/** The text to say in a language value (auto: English). */
const textFor = (code: string) => sampleSentences[code === 'auto' ? 'en' : code]!;

describe('LiveKit\'s language values', () => {
  /**
   * What the plugin sends for what a user configures: LanguageCode(input).language. The names are
   * LANGUAGE_NAMES_TO_CODE's entries for every language the service lists, and Hebrew; "auto" is
   * passed through, BCP-47 tags are cut to their base (cmn through ISO_639_3_TO_1).
   */
  const SENT: [input: string, sent: string][] = [
    ['english', 'en'], ['hindi', 'hi'], ['marathi', 'mr'], ['kannada', 'kn'], ['tamil', 'ta'], ['bengali', 'bn'], ['gujarati', 'gu'],
    ['telugu', 'te'], ['malayalam', 'ml'], ['punjabi', 'pa'], ['oriya', 'or'], ['spanish', 'es'], ['german', 'de'], ['french', 'fr'],
    ['italian', 'it'], ['dutch', 'nl'], ['swedish', 'sv'], ['portuguese', 'pt'], ['russian', 'ru'], ['greek', 'el'], ['finnish', 'fi'],
    ['norwegian', 'no'], ['polish', 'pl'], ['arabic', 'ar'], ['chinese', 'zh'], ['indonesian', 'id'], ['japanese', 'ja'], ['korean', 'ko'],
    ['malay', 'ms'], ['turkish', 'tr'], ['vietnamese', 'vi'], ['hebrew', 'he'], ['auto', 'auto'],
    ['en-US', 'en'], ['pt-BR', 'pt'], ['cmn-Hans-CN', 'zh'],
  ];
  const values = [...new Set(SENT.map(([, sent]) => sent))];

  it(`every one of the ${values.length} values is answered with audio on the socket (token frames, then the flush) and on POST /waves/v1/tts`, async () => {
    const socket = await connect(wsUrl(s.url, '/waves/v1/tts/live'), { authorization: `Bearer ${s.key}`, 'x-source': 'livekit' });
    try {
      for (const language of values) {
        // _base_payload with the plugin's defaults (model lightning_v3.1_pro, 24 kHz, speed 1.0, no buffer flush).
        const base = { model: 'lightning_v3.1_pro', voice_id: ENGLISH, sample_rate: RATE, speed: 1.0, language, max_buffer_flush_ms: 0 };
        const from = socket.messages.length;
        const words = textFor(language).split(' ');
        for (const [i, word] of words.entries()) socket.send({ ...base, text: i === 0 ? word : ` ${word}`, continue: true, flush: false });
        socket.send({ ...base, text: '', continue: false, flush: true });
        const messages = await untilDone(socket, from);
        assert.equal(messages.at(-1).status, 'complete', `${language}: ${JSON.stringify(messages.at(-1))}`);
        assert.ok(seconds(audioOf(messages)) > 0.5, `${language}: ${seconds(audioOf(messages))} s`);

        // ChunkedStream._run: _to_smallest_options plus the text.
        const file = await answered(
          await s.api('/waves/v1/tts', { method: 'POST', headers: { 'x-source': 'livekit' }, json: { ...base, max_buffer_flush_ms: undefined, output_format: 'pcm', text: textFor(language) } }),
        );
        assert.equal(file.status, 200, `${language}: ${file.bytes.toString().slice(0, 200)}`);
        assert.equal(file.language, language === 'auto' ? 'en' : language);
        assert.ok(seconds(file.bytes) > 0.5);
      }
    } finally {
      socket.close();
    }
  });
});

describe('Pipecat\'s language values', () => {
  /** language_to_smallest_tts_language's LANGUAGE_MAP values. */
  const VERIFIED = ['ar', 'bn', 'de', 'en', 'es', 'fr', 'gu', 'he', 'hi', 'it', 'kn', 'mr', 'nl', 'pl', 'ru', 'ta'];
  /** resolve_language's base codes of the Language members for the service's other languages (PT_BR → pt, ZH_CN → zh, …). */
  const BASE_CODES = ['pt', 'el', 'fi', 'no', 'zh', 'ja', 'ko', 'id', 'ms', 'tr', 'vi', 'pa', 'or', 'sv', 'te', 'ml'];
  /** Base codes of Language.NB, NN and CMN: not codes the service lists, so its 400. */
  const REFUSED = ['nb', 'nn', 'cmn'];

  /** _build_msg with the service's defaults: model lightning_v3.1_pro, word timestamps on, pcm. */
  const build = (text: string, language: string) => ({ text, voice_id: ENGLISH, model: 'lightning_v3.1_pro', language, sample_rate: RATE, word_timestamps: true, output_format: 'pcm' });

  it(`every one of the ${VERIFIED.length + BASE_CODES.length} values it sends for a language the service lists is answered with audio`, async () => {
    const socket = await connect(wsUrl(s.url, '/waves/v1/tts/live'), { authorization: `Bearer ${s.key}`, 'x-source': 'pipecat' });
    try {
      for (const language of [...VERIFIED, ...BASE_CODES]) {
        const from = socket.messages.length;
        socket.send(build(textFor(language), language));
        const messages = await untilDone(socket, from);
        assert.equal(messages.at(-1).status, 'complete', `${language}: ${JSON.stringify(messages.at(-1))}`);
        assert.ok(seconds(audioOf(messages)) > 0.5, `${language}: ${seconds(audioOf(messages))} s`);
        assert.ok(messages.some((m) => m.status === 'word_timestamp'), `${language}: word timestamps`);
      }
      for (const language of REFUSED) {
        const from = socket.messages.length;
        socket.send(build('Hei.', language));
        const messages = await untilDone(socket, from);
        assert.equal(messages.at(-1).status, 'error');
        assert.match(messages.at(-1).message, /language/, `${language}: ${messages.at(-1).message}`);
      }
    } finally {
      socket.close();
    }
  });
});
