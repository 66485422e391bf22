/**
 * Streaming transcription through real sockets, on the real engines (silero VAD, the tiny
 * streaming English zipformer, the stand-in diarization packs): partials while the audio is
 * still coming, finals that match the REST route's transcript, finalize and close_stream, the
 * encodings, every refusal, and TCP push-back on a client that sends faster than the engines handle.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { encodeInt16 } from '../../../src/audio/encode.js';
import { encodeMuLaw } from '../../../src/audio/g711.js';
import { oggPackets } from '../../../src/audio/ogg.js';
import { resample } from '../../../src/audio/resample.js';
import { parseWav } from '../../../src/audio/wav.js';
import { corpusFile, modelsDirWith, needs, REAL_TEST_MODELS, sttTestPacks } from '../../helpers/models.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { connect, openSocket, TestSocket, wsUrl } from '../../helpers/websocket.js';
import { wordErrorRate } from '../../helpers/transcript-accuracy.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH], corpus: true });

const SOURCE = 'en/jfk-inaugural-1961.wav';
const SHORT = 'en/librispeech-1089-134686-0001.wav';

let s: TestServer;

before(async () => {
  if (NEEDS) return; // every suite below is skipped, naming what is missing
  const modelsDir = modelsDirWith(sttTestPacks);
  s = await startTestServer({ engines: true, config: { modelsDir, logLevel: 'warn', rateLimits: { transcription: { perMinute: 0 } } } });
});
after(() => s?.close());

function socketUrl(query = ''): string {
  return wsUrl(s.url, `/api/v1/stt/get_text${query}`);
}

function open(query = ''): Promise<TestSocket> {
  return connect(socketUrl(query), { authorization: `Bearer ${s.key}` });
}

function samplesOf(file: string): { samples: Float32Array; sampleRate: number } {
  return parseWav(new Uint8Array(readFileSync(corpusFile(file))));
}

async function restTranscript(file: string): Promise<string> {
  const res = await s.api('/api/v1/stt/get_text', { method: 'POST', headers: { 'content-type': 'audio/wav' }, body: readFileSync(corpusFile(file)) });
  assert.equal(res.status, 200);
  return (await res.json()).transcription;
}

const transcriptions = (messages: any[]) => messages.filter((m) => m.type === 'transcription');
const finals = (messages: any[]) => transcriptions(messages).filter((m) => m.is_final);
const finalText = (messages: any[]) => finals(messages).map((m) => m.transcript).filter(Boolean).join(' ');

/** Sends bytes in frames of `frameBytes`, `pauseMs` apart (0: as fast as possible). */
async function sendFrames(socket: TestSocket, bytes: Uint8Array, frameBytes: number, pauseMs: number, onFrame?: (i: number) => void): Promise<void> {
  for (let at = 0, i = 0; at < bytes.length; at += frameBytes, i++) {
    socket.send(Buffer.from(bytes.subarray(at, at + frameBytes)));
    onFrame?.(i);
    if (pauseMs) await new Promise((r) => setTimeout(r, pauseMs));
  }
}

describe('a corpus file streamed at real-time pace', { skip: NEEDS }, () => {
  it('gives partials before its end, finals like the REST transcript, word times within the file, VAD events', async () => {
    const { samples, sampleRate } = samplesOf(SOURCE);
    const duration = samples.length / sampleRate;
    const socket = await open('?word_timestamps=true&vad_events=true');
    let partialsBeforeEnd = 0;
    // 100 ms frames, 100 ms apart: as a microphone sends them.
    await sendFrames(socket, encodeInt16(samples), sampleRate / 10 * 2, 100, () => {
      partialsBeforeEnd = transcriptions(socket.messages).filter((m) => !m.is_final).length;
    });
    socket.send({ type: 'close_stream' });
    const closed = await socket.untilClosed(60_000);
    assert.equal(closed.code, 1000);
    assert.ok(partialsBeforeEnd >= 2, `partials before the end: ${partialsBeforeEnd}`);

    const all = socket.messages;
    const last = transcriptions(all).at(-1);
    assert.equal(last.is_last, true);
    assert.equal(last.is_final, true);
    for (const m of transcriptions(all)) {
      assert.equal(m.status, 'success');
      assert.equal(typeof m.session_id, 'string');
      assert.equal(m.language, 'en');
    }
    const rest = await restTranscript(SOURCE);
    const reference = readFileSync(corpusFile('manifest.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).find((e) => e.file === SOURCE).text;
    const streamed = finalText(all);
    const restWer = wordErrorRate(reference, rest);
    const streamWer = wordErrorRate(reference, streamed);
    assert.ok(streamWer <= restWer + 0.05, `WER streamed ${streamWer.toFixed(3)} vs REST ${restWer.toFixed(3)}:\n${streamed}\n${rest}`);

    const words = finals(all).flatMap((m) => m.words);
    assert.ok(words.length >= 5);
    for (const w of words) {
      assert.ok(w.start >= 0 && w.start <= w.end && w.end <= duration + 0.01, JSON.stringify(w));
      assert.deepEqual(Object.keys(w).sort(), ['confidence', 'end', 'speaker', 'start', 'word']);
    }
    const started = all.filter((m) => m.type === 'speech_started');
    const ended = all.filter((m) => m.type === 'speech_ended');
    assert.ok(started.length >= 1 && ended.length >= 1);
    assert.ok(all.indexOf(started[0]) < all.indexOf(finals(all)[0]), 'speech starts before its first final');
    for (const e of [...started, ...ended]) assert.ok(e.timestamp >= 0 && e.timestamp <= duration + 0.01);
  });
});

describe('control messages', { skip: NEEDS }, () => {
  it('finalize emits a final and keeps the stream going; close_stream emits the last final and closes', async () => {
    const { samples } = samplesOf(SHORT);
    const socket = await open();
    await sendFrames(socket, encodeInt16(samples), 3200, 0);
    socket.send({ type: 'finalize' });
    await socket.until((all) => finals(all).length >= 1);
    const first = finals(socket.messages).at(-1);
    assert.equal(first.is_last, false);
    assert.ok(first.transcript.length > 0, 'the speech so far has words');
    assert.equal(socket.closed, undefined, 'the stream goes on');

    await sendFrames(socket, encodeInt16(samples), 3200, 0);
    socket.send({ type: 'close_stream' });
    assert.equal((await socket.untilClosed(30_000)).code, 1000);
    const last = transcriptions(socket.messages).at(-1);
    assert.equal(last.is_final, true);
    assert.equal(last.is_last, true);
    // Times go on from the start of the stream, past the first copy of the file.
    assert.ok(last.end > samples.length / 16_000, `last final ends at ${last.end}`);
  });

  it('answers a malformed text frame or a bad audio frame with an error message, and goes on', async () => {
    const socket = await open('?encoding=opus');
    socket.send('hello');
    socket.send({ type: 'nope' });
    socket.send(Buffer.from([0xff, 0xff, 0xff]));
    await socket.until((all) => all.filter((m) => m.type === 'error').length === 3);
    const errors = socket.messages.filter((m) => m.type === 'error');
    assert.match(errors[0].message, /Text frames must be \{"type":"finalize"\} or \{"type":"close_stream"\}/);
    assert.match(errors[2].message, /Opus/);
    socket.send({ type: 'close_stream' });
    assert.equal((await socket.untilClosed()).code, 1000);
    assert.equal(transcriptions(socket.messages).at(-1).is_last, true);
  });
});

describe('encodings and rates', { skip: NEEDS }, () => {
  it('linear32, mulaw, and linear16 at 48 kHz give the transcript of linear16 at 16 kHz', async () => {
    const { samples } = samplesOf(SHORT);
    const run = async (query: string, bytes: Uint8Array) => {
      const socket = await open(query);
      await sendFrames(socket, bytes, 4000, 0);
      socket.send({ type: 'close_stream' });
      await socket.untilClosed(30_000);
      return finalText(socket.messages);
    };
    const linear16 = await run('', encodeInt16(samples));
    const float = new Uint8Array(new Float32Array(samples).buffer);
    assert.equal(await run('?encoding=linear32', float), linear16);
    // G.711 quantises, resampling filters: close, not equal. (At 8 kHz the VAD misses speech, through REST as well.)
    const mulaw = await run('?encoding=mulaw', encodeMuLaw(samples));
    assert.ok(wordErrorRate(linear16, mulaw) < 0.3, `mulaw: ${mulaw} vs ${linear16}`);
    const wide = await run('?sample_rate=48000', encodeInt16(await resample(samples, 16_000, 48_000)));
    assert.ok(wordErrorRate(linear16, wide) < 0.3, `48 kHz: ${wide} vs ${linear16}`);
  });
});

describe('opus', { skip: NEEDS }, () => {
  it('Ogg pages cut anywhere, and raw packets one per frame, give the transcript of the same speech as linear16', async () => {
    const run = async (frames: Uint8Array[]) => {
      const socket = await open('?encoding=opus');
      for (const frame of frames) socket.send(Buffer.from(frame));
      socket.send({ type: 'close_stream' });
      await socket.untilClosed(60_000);
      assert.deepEqual(socket.messages.filter((m) => m.type === 'error'), []);
      return finalText(socket.messages);
    };
    const { samples } = samplesOf(SOURCE);
    const socket = await open();
    await sendFrames(socket, encodeInt16(samples), 8000, 0);
    socket.send({ type: 'close_stream' });
    await socket.untilClosed(60_000);
    const linear16 = finalText(socket.messages);

    const ogg = new Uint8Array(readFileSync(corpusFile('formats/jfk.opus')));
    const cut = Array.from({ length: Math.ceil(ogg.length / 3000) }, (_, i) => ogg.subarray(i * 3000, (i + 1) * 3000));
    const fromPages = await run(cut);
    assert.ok(wordErrorRate(linear16, fromPages) < 0.3, `Ogg: ${fromPages} vs ${linear16}`);
    // OpusHead and OpusTags are the stream's first two packets; the audio packets follow.
    const packets = [...oggPackets(ogg)].slice(2);
    const fromPackets = await run(packets);
    assert.ok(wordErrorRate(linear16, fromPackets) < 0.3, `packets: ${fromPackets} vs ${linear16}`);
  });
});

/** The most a TCP connection's two buffers (the sender's and the receiver's) may hold, bytes (Linux's limits; else a generous guess). */
function kernelSocketBufferMax(): number {
  const max = (name: string) => Number(readFileSync(`/proc/sys/net/ipv4/${name}`, 'utf8').trim().split(/\s+/)[2]);
  try {
    return max('tcp_rmem') + max('tcp_wmem');
  } catch {
    return 64 * 2 ** 20;
  }
}

describe('a client that sends faster than the engines handle', { skip: NEEDS }, () => {
  it('is pushed back by TCP once 4 MiB of its frames wait, instead of the server queueing all it sends', async (t) => {
    const readiness = async () => (await (await s.api('/readyz')).json()) as any;
    const hitsBefore = (await readiness()).realtime.detail.limitHits.inputBacklog;
    const socket = await open();
    const { samples } = samplesOf(SHORT);
    const audio = encodeInt16(samples);
    // What may leave the client while the server reads nothing: the server's 4 MiB, and what the
    // loopback's socket buffers hold at most (the largest sizes the kernel may grow them to).
    const MAX_ACCEPTED = 4 * 2 ** 20 + 64 * 1024 + kernelSocketBufferMax();
    const FLOOD_BYTES = 2 * MAX_ACCEPTED;
    // A first final, so the inference processes are up.
    await sendFrames(socket, audio, 3200, 0);
    socket.send({ type: 'finalize' });
    await socket.until((all) => finals(all).length >= 1);
    const pids: number[] = (await readiness()).inference.detail.processes.map((p: { pid: number | null }) => p.pid).filter(Boolean);
    assert.ok(pids.length > 0, 'the engines run in inference processes');
    // The engines handle nothing until SIGCONT: the finalize waits for them, and every frame after it waits behind the finalize.
    for (const pid of pids) process.kill(pid, 'SIGSTOP');
    try {
      await sendFrames(socket, audio, 3200, 0);
      socket.send({ type: 'finalize' });
      // One frame at a time, each once the last is in the kernel's hands: `accepted` is what left the client.
      const frame = Buffer.alloc(64 * 1024);
      let accepted = 0;
      const flood = (async () => {
        while (accepted < FLOOD_BYTES) {
          if (!(await new Promise<boolean>((resolve) => socket.ws.send(frame, (err) => resolve(!err))))) return;
          accepted += frame.length;
        }
      })();
      // The server stops reading past 4 MiB of waiting frames, and says so.
      const deadline = Date.now() + 30_000;
      while ((await readiness()).realtime.detail.limitHits.inputBacklog === hitsBefore) {
        assert.ok(Date.now() < deadline, `the server never stopped reading (${accepted} bytes sent)`);
        await new Promise((r) => setTimeout(r, 50));
      }
      // Then the kernel's buffers fill, and the client can send no more.
      let last = -1;
      while (accepted !== last) {
        last = accepted;
        await new Promise((r) => setTimeout(r, 300));
      }
      const mib = (n: number) => `${(n / 2 ** 20).toFixed(1)} MiB`;
      t.diagnostic(`${mib(accepted)} of ${mib(FLOOD_BYTES)} left the client (at most ${mib(MAX_ACCEPTED)} may)`);
      assert.ok(accepted > 4 * 2 ** 20 && accepted <= MAX_ACCEPTED, `${mib(accepted)} left the client`);
      assert.equal(socket.closed, undefined, 'the socket is paused, not closed');
      socket.close();
      await flood;
    } finally {
      for (const pid of pids) process.kill(pid, 'SIGCONT');
      socket.close();
    }
  });
});

describe('refusals before the upgrade', { skip: NEEDS }, () => {
  it('401 without a key, in the stt error shape', async () => {
    const result = await openSocket(socketUrl());
    assert.ok(!(result instanceof TestSocket));
    assert.equal(result.status, 401);
    assert.equal(result.body.error, 'Unauthorized - Invalid API key');
  });

  it('400 naming the parameter and rule for bad query values', async () => {
    const cases: [string, string][] = [
      ['?sample_rate=4000', 'sample_rate must be between 8000 and 48000'],
      ['?sample_rate=fast', 'sample_rate must be a whole number of Hz between 8000 and 48000'],
      ['?encoding=flac', 'encoding must be one of linear16, linear32, mulaw, alaw, opus'],
      ['?eou_timeout_ms=50', 'eou_timeout_ms must be between 100 and 10000'],
      ['?word_timestamps=yes', 'word_timestamps must be one of true, false'],
      ['?language=xx', 'language must be one of'],
      ['?language=fr', 'language fr has no installed speech recogniser'],
      ['?timeout=9999', 'timeout must be between 1 and 600'],
    ];
    for (const [query, sentence] of cases) {
      const result = await openSocket(socketUrl(query), { authorization: `Bearer ${s.key}` });
      assert.ok(!(result instanceof TestSocket), query);
      assert.equal(result.status, 400, query);
      assert.ok(result.body.error.startsWith(sentence), `${query}: ${result.body.error}`);
      assert.equal(typeof result.body.request_id, 'string');
    }
  });

  it('a plain GET (no upgrade) is told to upgrade', async () => {
    const res = await s.api('/api/v1/stt/get_text');
    assert.equal(res.status, 400);
    assert.match((await res.json()).error, /is a WebSocket/);
  });
});
