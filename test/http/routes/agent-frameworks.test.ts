/**
 * Two agent frameworks' Smallest integrations against a running Parley, replaying their exact
 * requests and frames:
 *
 * - Bolna, bolna-ai/bolna @ 0172347b601ea66dac0414cc1c6b14dc0d85422a (0.10.204),
 *   bolna/synthesizer/smallest_synthesizer.py: `establish_connection` opens
 *   `wss://…/waves/v1/tts/live` with `Authorization: Bearer`, `X-Source: bolna`; `sender` sends
 *   `json.dumps(form_payload(text))` = {voice_id, text, model, language, sample_rate} (defaults
 *   lightning_v3.1, en, 8000) per text piece; `receiver` plays base64 `data.audio` of each
 *   `status: "chunk"` as PCM at that rate and ends the turn on `status: "complete"`.
 *   `_generate_http`: POST /waves/v1/tts {text, voice_id, model, sample_rate, output_format: wav}
 *   with `Accept: audio/wav`.
 * - Bolna before 0.10.137, bolna-ai/bolna @ e659b4cb37d3e7032a9762e80a741cb0897e0347, same file:
 *   `wss://…/api/v1/lightning-v2/get_speech/stream?timeout=60` with `Authorization: Token <key>`,
 *   frames {voice_id, text, language, sample_rate}; HTTP POST /api/v1/{model}/get_speech (model
 *   default `lightning`) {text, voice_id, sample_rate, add_wav_header: false}.
 * - Agno, agno-agi/agno @ 9644f22982ae017eaa4ad85c561d927d9ac03119 (2.9.0),
 *   libs/agno/agno/tools/smallest.py: `get_voices` GETs `/waves/v1/lightning-v3.1/get_voices`
 *   (or `/waves/v1/lightning-v3.1-pro/get_voices` for the Pro model) and reads voiceId,
 *   displayName and tags.{gender, accent, language}; `text_to_speech` POSTs `base_url`
 *   {text, voice_id, model, language, sample_rate, speed, output_format} with `Accept` from its
 *   MIME_TYPES table and fails unless the answer's content-type holds "audio" or "octet-stream".
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseWav } from '../../../src/audio/wav.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { connect, wsUrl, type TestSocket } from '../../helpers/websocket.js';

const VOICE = 'espeak-en-us-female';
const TEXT = 'Thanks for calling, how can I help you today?';

let s: TestServer;

before(async () => {
  s = await startTestServer({ engines: true });
});
after(() => s?.close());

/** Bolna's receiver: the decoded audio of every chunk, up to the turn's complete. */
async function bolnaTurn(socket: TestSocket, frame: string): Promise<Buffer> {
  const from = socket.messages.length;
  socket.send(frame);
  await socket.until((all) => all.slice(from).some((m) => m.status === 'complete' || m.status === 'error'));
  const messages = socket.messages.slice(from);
  assert.equal(messages.at(-1).status, 'complete', JSON.stringify(messages.at(-1)));
  return Buffer.concat(messages.filter((m) => m.status === 'chunk').map((m) => Buffer.from(m.data.audio, 'base64')));
}

/** Seconds of 16-bit mono PCM at `rate`. */
const secondsOf = (pcm: Buffer, rate: number) => pcm.length / 2 / rate;

describe('Bolna 0.10.204', () => {
  it('its TTS socket: /waves/v1/tts/live, one request per text piece, 8 kHz PCM chunks then complete', async () => {
    const socket = await connect(wsUrl(s.url, '/waves/v1/tts/live'), { authorization: `Bearer ${s.key}`, 'x-source': 'bolna' });
    const first = await bolnaTurn(socket, `{"voice_id": "${VOICE}", "text": "${TEXT}", "model": "lightning_v3.1", "language": "en", "sample_rate": 8000}`);
    const second = await bolnaTurn(socket, `{"voice_id": "${VOICE}", "text": "Goodbye.", "model": "lightning_v3.1", "language": "en", "sample_rate": 8000}`);
    socket.close();
    // Played as 8 kHz PCM: a sentence of nine words lasts seconds, not a third of that or thrice.
    assert.ok(secondsOf(first, 8000) > 1.5 && secondsOf(first, 8000) < 6, `${secondsOf(first, 8000)} s`);
    assert.ok(secondsOf(second, 8000) > 0.2 && secondsOf(second, 8000) < secondsOf(first, 8000));

    // The same text over HTTP at 8 kHz: the same length of audio.
    const rest = await s.api('/waves/v1/tts', { method: 'POST', json: { text: TEXT, voice_id: VOICE, model: 'lightning_v3.1', sample_rate: 8000, output_format: 'pcm' } });
    assert.equal(rest.status, 200);
    assert.ok(Math.abs(secondsOf(Buffer.from(await rest.arrayBuffer()), 8000) - secondsOf(first, 8000)) < 0.2);
  });

  it('its HTTP synthesis: POST /waves/v1/tts with Accept: audio/wav, a WAV file at 8 kHz', async () => {
    const res = await fetch(`${s.url}/waves/v1/tts`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${s.key}`, 'Content-Type': 'application/json', Accept: 'audio/wav', 'X-Source': 'bolna' },
      body: JSON.stringify({ text: TEXT, voice_id: VOICE, model: 'lightning_v3.1', sample_rate: 8000, output_format: 'wav' }),
    });
    assert.equal(res.status, 200);
    const wav = parseWav(new Uint8Array(await res.arrayBuffer()));
    assert.equal(wav.sampleRate, 8000);
    assert.ok(wav.samples.length > 8000 * 1.5);
  });
});

describe('Bolna 0.9.7 to 0.10.136', () => {
  it('its TTS socket: /api/v1/lightning-v2/get_speech/stream?timeout=60 with Authorization: Token, 8 kHz chunks then complete', async () => {
    const socket = await connect(wsUrl(s.url, '/api/v1/lightning-v2/get_speech/stream?timeout=60'), { authorization: `Token ${s.key}` });
    const audio = await bolnaTurn(socket, `{"voice_id": "${VOICE}", "text": "${TEXT}", "language": "en", "sample_rate": 8000}`);
    socket.close();
    assert.ok(secondsOf(audio, 8000) > 1.5 && secondsOf(audio, 8000) < 6, `${secondsOf(audio, 8000)} s`);
  });

  it('its HTTP synthesis: POST /api/v1/lightning/get_speech without a WAV header, raw 8 kHz PCM', async () => {
    const res = await fetch(`${s.url}/api/v1/lightning/get_speech`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${s.key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ text: TEXT, voice_id: VOICE, sample_rate: 8000, add_wav_header: false }),
    });
    assert.equal(res.status, 200);
    const pcm = Buffer.from(await res.arrayBuffer());
    assert.notEqual(pcm.subarray(0, 4).toString('latin1'), 'RIFF');
    assert.ok(secondsOf(pcm, 8000) > 1.5 && secondsOf(pcm, 8000) < 6, `${secondsOf(pcm, 8000)} s`);
  });
});

describe('Agno 2.9.0 SmallestTools', () => {
  const headers = () => ({ Authorization: `Bearer ${s.key}`, 'X-Source': 'agno' });

  for (const [model, path] of [
    ['lightning_v3.1', '/waves/v1/lightning-v3.1/get_voices'],
    ['lightning_v3.1_pro', '/waves/v1/lightning-v3.1-pro/get_voices'],
  ] as const) {
    it(`get_voices (model ${model}): GET ${path}, every voice with an id, a name and its languages`, async () => {
      const res = await fetch(s.url + path, { headers: headers() });
      assert.equal(res.status, 200);
      const { voices } = (await res.json()) as { voices: { voiceId?: string; displayName?: string; tags?: { language?: unknown } }[] };
      assert.ok(voices.length > 0);
      for (const voice of voices) {
        assert.equal(typeof voice.voiceId, 'string');
        assert.equal(typeof voice.displayName, 'string');
        assert.ok(Array.isArray(voice.tags?.language), JSON.stringify(voice));
      }
    });
  }

  // MIME_TYPES: what text_to_speech sends as Accept for each output_format.
  const ACCEPT = { wav: 'audio/wav', mp3: 'audio/mpeg', pcm: 'audio/wav', ulaw: 'audio/basic', alaw: 'audio/x-alaw-basic' } as const;
  for (const model of ['lightning_v3.1', 'lightning_v3.1_pro']) {
    for (const [format, accept] of Object.entries(ACCEPT)) {
      it(`text_to_speech (${model}, output_format ${format}): POST /waves/v1/tts with Accept ${accept}, answered with audio`, async () => {
        const res = await fetch(`${s.url}/waves/v1/tts`, {
          method: 'POST',
          headers: { ...headers(), 'Content-Type': 'application/json', Accept: accept },
          body: JSON.stringify({ text: TEXT, voice_id: VOICE, model, language: 'en', sample_rate: 24000, speed: 1.0, output_format: format }),
        });
        const bytes = Buffer.from(await res.arrayBuffer());
        assert.equal(res.status, 200, bytes.toString());
        const type = res.headers.get('content-type') ?? '';
        assert.ok(type.includes('audio') || type.includes('octet-stream'), type);
        // A sentence at 24 kHz: more than a second of audio in any of the encodings (mp3 is the smallest).
        assert.ok(bytes.length > (format === 'mp3' ? 4000 : 24000), `${bytes.length} bytes`);
        if (format === 'wav') assert.equal(parseWav(new Uint8Array(bytes)).sampleRate, 24000);
      });
    }
  }
});
