/**
 * word_timestamp messages of the synthesis socket sit where the words are in the audio sent: the
 * audio is transcribed with word times by the real streaming zipformer (through POST /get_text).
 * Over the words both agree on, the typical (median) start is within 50 ms of where the
 * recogniser heard it and none is further than 300 ms. The recogniser's own times are coarse (its
 * tokens come on 40 ms frames, a little after their sound, and its words abut), so a per-word
 * 50 ms bound would measure the recogniser as much as the timestamps.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { wavFile, WavFormatTag } from '../../../src/audio/wav.js';
import { modelsDirWith, needs, REAL_TEST_MODELS } from '../../helpers/models.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { connect, wsUrl } from '../../helpers/websocket.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH] });
const VOICE = 'espeak-en-us-male';
const RATE = 16_000;
/** How far the median word start may be from where the recogniser heard it, and the furthest one. */
const MEDIAN_TOLERANCE_SECONDS = 0.05;
const MAX_TOLERANCE_SECONDS = 0.3;

const TEXT = 'Good morning everyone. The weather today is cold and windy, with some rain in the evening. Please remember your umbrella.';

const normal = (word: string) => word.toLowerCase().replace(/[^a-z']/g, '');

describe('word timestamps of the synthesis socket', { skip: NEEDS }, () => {
  let s: TestServer;

  before(async () => {
    const modelsDir = modelsDirWith([REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH]);
    s = await startTestServer({ engines: true, config: { modelsDir, logLevel: 'silent', rateLimits: { transcription: { perMinute: 0 }, synthesis: { perMinute: 0 } } } });
  });
  after(() => s?.close());

  it('match where the recogniser hears the words in the audio sent (median within 50 ms)', async (t) => {
    const socket = await connect(wsUrl(s.url, '/waves/v1/tts/live'), { authorization: `Bearer ${s.key}` });
    // Token by token, as LiveKit sends them: the timestamps run across the sentences of the request.
    const base = { model: 'lightning_v3.1', voice_id: VOICE, sample_rate: RATE, language: 'en', word_timestamps: true };
    for (const [i, word] of TEXT.split(' ').entries()) socket.send({ ...base, text: i === 0 ? word : ` ${word}`, continue: true, flush: false });
    socket.send({ ...base, text: '', continue: false, flush: true });
    await socket.until((all) => all.some((m) => m.status === 'complete' || m.status === 'error'), 60_000);
    socket.close();
    const pcm = Buffer.concat(socket.messages.filter((m) => m.status === 'chunk').map((m) => Buffer.from(m.data.audio, 'base64')));
    const ours = socket.messages.filter((m) => m.status === 'word_timestamp').map((m) => m.data);
    assert.equal(ours.length, TEXT.split(' ').length, 'a timestamp for every word');
    for (const [i, w] of ours.entries()) {
      assert.ok(w.end > w.start && w.end <= pcm.length / 2 / RATE + 0.001, JSON.stringify(w));
      if (i > 0) assert.ok(w.start >= ours[i - 1].end - 0.001, 'in order, not overlapping');
    }

    const wav = wavFile(pcm, { sampleRate: RATE, channels: 1, bitsPerSample: 16, formatTag: WavFormatTag.pcm });
    const res = await s.api('/api/v1/stt/get_text?word_timestamps=true', { method: 'POST', headers: { 'content-type': 'audio/wav' }, body: Buffer.from(wav) });
    assert.equal(res.status, 200);
    const heard: { word: string; start: number; end: number }[] = (await res.json()).words;

    // Words in the same order on both sides, matched greedily.
    const deltas: { word: string; delta: number }[] = [];
    let j = 0;
    for (const h of heard) {
      const k = ours.findIndex((o, i) => i >= j && normal(o.word) === normal(h.word));
      if (k < 0) continue;
      deltas.push({ word: h.word, delta: Math.round((ours[k].start - h.start) * 1000) / 1000 });
      j = k + 1;
    }
    assert.ok(deltas.length >= ours.length / 2, `the recogniser agrees on enough words to measure: ${JSON.stringify({ heard, ours })}`);
    const offsets = deltas.map((d) => Math.abs(d.delta)).sort((a, b) => a - b);
    const median = offsets[Math.floor(offsets.length / 2)]!;
    const report = `start offsets (ours - heard): ${JSON.stringify(deltas)}`;
    t.diagnostic(`median ${median} s, furthest ${offsets.at(-1)} s over ${deltas.length} words`);
    assert.ok(median <= MEDIAN_TOLERANCE_SECONDS, `median ${median} s; ${report}`);
    assert.ok(offsets.at(-1)! <= MAX_TOLERANCE_SECONDS, `furthest ${offsets.at(-1)} s; ${report}`);
  });
});
