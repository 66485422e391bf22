/**
 * Streaming transcription on a streaming recogniser (the shared tiny zipformer), through real
 * sockets: partials come from the utterance's live recognition stream (each piece of audio decoded
 * once), so within an utterance every partial extends the one before and the final extends the
 * last partial; they arrive a bounded number of frames after their audio; words carry the model's
 * confidence; a bound on open streams only moves utterances to re-decoding; and an inference
 * process killed mid-session costs the client an error message, not the socket or the server.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { encodeInt16 } from '../../../src/audio/encode.js';
import { parseWav } from '../../../src/audio/wav.js';
import type { Config } from '../../../src/config.js';
import { corpusFile, modelsDirWith, needs, REAL_TEST_MODELS } from '../../helpers/models.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { connect, wsUrl, type TestSocket } from '../../helpers/websocket.js';
import { wordErrorRate } from '../../helpers/transcript-accuracy.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH], corpus: true });

const SOURCE = 'en/jfk-inaugural-1961.wav';
const SHORT = 'en/librispeech-1089-134686-0001.wav';
/** 100 ms of 16 kHz 16-bit audio: a frame as a microphone client sends it. */
const FRAME_BYTES = 3200;

const transcriptions = (messages: any[]) => messages.filter((m) => m.type === 'transcription');
const finals = (messages: any[]) => transcriptions(messages).filter((m) => m.is_final);
const finalText = (messages: any[]) => finals(messages).map((m) => m.transcript).filter(Boolean).join(' ');

function pcmOf(file: string): Uint8Array {
  const { samples, sampleRate } = parseWav(new Uint8Array(readFileSync(corpusFile(file))));
  assert.equal(sampleRate, 16_000);
  return encodeInt16(samples);
}

/**
 * Sends `pcm` in 100 ms frames, `pauseMs` apart. Returns, for each message received, how many
 * frames had been sent when it arrived. `onFrame` runs after each frame.
 */
async function stream(socket: TestSocket, pcm: Uint8Array, pauseMs: number, onFrame?: (i: number) => Promise<void> | void): Promise<number[]> {
  const sentWhenReceived: number[] = [];
  let frames = 0;
  for (let at = 0; at < pcm.length; at += FRAME_BYTES) {
    socket.send(Buffer.from(pcm.subarray(at, at + FRAME_BYTES)));
    frames++;
    await onFrame?.(frames);
    if (pauseMs) await new Promise((r) => setTimeout(r, pauseMs));
    while (sentWhenReceived.length < socket.messages.length) sentWhenReceived.push(frames);
  }
  return sentWhenReceived;
}

/** A server with the VAD and the tiny streaming zipformer, and the given inference settings. */
function startStreamingServer(inference: Partial<Config['inference']>): Promise<TestServer> {
  const modelsDir = modelsDirWith([REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH]);
  return startTestServer({ engines: true, config: { modelsDir, logLevel: 'silent', rateLimits: { transcription: { perMinute: 0 } }, inference } });
}

describe('streaming transcription on a streaming recogniser', { skip: NEEDS }, () => {
  let s: TestServer;
  const open = (query = '') => connect(wsUrl(s.url, `/api/v1/stt/get_text${query}`), { authorization: `Bearer ${s.key}` });

  before(async () => {
    s = await startStreamingServer({ restartDelayMs: 100 });
  });
  after(() => s?.close());

  it('partials of an utterance grow by prefix into its final, arrive within a few frames of their audio, and words carry a confidence in [0, 1]', async () => {
    const pcm = pcmOf(SOURCE);
    const socket = await open('?word_timestamps=true&vad_events=true');
    const sentWhenReceived = await stream(socket, pcm, 100);
    socket.send({ type: 'close_stream' });
    assert.equal((await socket.untilClosed(60_000)).code, 1000);
    const all = socket.messages;
    assert.deepEqual(all.filter((m) => m.type === 'error'), []);

    // Utterance by utterance: each hypothesis of a live stream extends the previous one.
    let previous = '';
    let partials = 0;
    for (const m of transcriptions(all)) {
      assert.ok(m.transcript.startsWith(previous), `${m.is_final ? 'final' : 'partial'} "${m.transcript}" extends "${previous}"`);
      if (m.is_final) previous = '';
      else {
        previous = m.transcript;
        partials++;
      }
    }
    assert.ok(partials >= 8, `partials: ${partials}`);

    // A partial covers audio up to its `end`; it comes at most 10 frames (1 s of audio) after that audio was sent.
    all.forEach((m, i) => {
      if (m.type !== 'transcription' || m.is_final || sentWhenReceived[i] === undefined) return;
      const framesLate = sentWhenReceived[i]! - Math.ceil(m.end * 10);
      assert.ok(framesLate <= 10, `partial ending at ${m.end} s came ${framesLate} frames later`);
    });

    const words = transcriptions(all).flatMap((m) => m.words);
    assert.ok(words.length >= 10);
    for (const w of words) assert.ok(typeof w.confidence === 'number' && w.confidence >= 0 && w.confidence <= 1, JSON.stringify(w));
    assert.ok(new Set(words.map((w) => w.confidence)).size > 3, 'confidences differ between words');
  });

  it('an inference process killed mid-session gives the socket an error message; the session and the server go on', async () => {
    const pcm = pcmOf(SOURCE);
    const socket = await open();
    let killed: number | undefined;
    await stream(socket, pcm, 100, async () => {
      if (killed !== undefined || !transcriptions(socket.messages).some((m) => !m.is_final)) return;
      const ready = await (await s.api('/readyz')).json();
      killed = ready.inference.detail.processes.find((p: any) => p.name === 'inference').pid as number;
      process.kill(killed, 'SIGKILL');
    });
    assert.ok(killed, 'a partial came before the end, and the process was killed then');
    socket.send({ type: 'close_stream' });
    const closed = await socket.untilClosed(60_000);
    const errors = socket.messages.filter((m) => m.type === 'error');
    assert.ok(errors.length >= 1, 'the client is told');
    assert.match(errors[0].message, /inference process/i);
    assert.ok(closed.code === 1000 || closed.code === 1011, `closed with ${closed.code}`);
    if (closed.code === 1000) assert.equal(transcriptions(socket.messages).at(-1).is_last, true);

    // A fresh process serves the next socket.
    const next = await open();
    await stream(next, pcmOf(SHORT), 0);
    next.send({ type: 'close_stream' });
    assert.equal((await next.untilClosed(60_000)).code, 1000);
    assert.ok(finalText(next.messages).length > 0);
    const ready = await (await s.api('/readyz')).json();
    assert.notEqual(ready.inference.detail.processes.find((p: any) => p.name === 'inference').pid, killed);
  });
});

describe('streaming transcription past the bound on open recognition streams', { skip: NEEDS }, () => {
  let s: TestServer;
  before(async () => {
    s = await startStreamingServer({ maxStreams: 1 });
  });
  after(() => s?.close());

  it('sockets beyond it are re-decoded: every socket gets its transcript, with no error', async () => {
    const pcm = pcmOf(SHORT);
    const run = async () => {
      const socket = await connect(wsUrl(s.url, '/api/v1/stt/get_text'), { authorization: `Bearer ${s.key}` });
      await stream(socket, pcm, 10);
      socket.send({ type: 'close_stream' });
      assert.equal((await socket.untilClosed(60_000)).code, 1000);
      assert.deepEqual(socket.messages.filter((m) => m.type === 'error'), []);
      return finalText(socket.messages);
    };
    const texts = await Promise.all([run(), run(), run()]);
    for (const text of texts) assert.ok(wordErrorRate(texts[0]!, text) < 0.3, `${text} vs ${texts[0]}`);
    assert.ok(texts[0]!.length > 0);
  });
});
