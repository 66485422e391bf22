/**
 * Decoding and resampling uploads in worker threads: every upload format gives the same samples
 * as on the event loop, and bad input, the duration cap and a client gone give the same errors;
 * ffmpeg's fallback still runs; a thread that dies fails only its own calls and is replaced.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { after, before, describe, it } from 'node:test';
import { decodeAudio, type DecodeHint, type DecodeOptions } from '../../src/audio/decode.js';
import { createFfmpegRunner } from '../../src/audio/ffmpeg.js';
import { resampleYielding } from '../../src/audio/resample-yielding.js';
import { warmUpCodecs } from '../../src/audio/warm-up.js';
import { AbortedError, AudioTooLongError, EngineError, UnsupportedAudioError, type ParleyError } from '../../src/errors.js';
import { DecodeWorkers } from '../../src/transcription/decode-workers.js';
import { makeFormatSet, toneWav, type FormatSet } from '../helpers/audio-formats.js';
import { FFMPEG_MISSING } from '../audio/signal-fixtures.js';

const same = (a: Float32Array, b: Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));

function withChannels(wav: Uint8Array, channels: number): Uint8Array {
  const copy = Buffer.from(wav);
  copy.writeUInt16LE(channels, 22);
  return copy;
}

/** What a client would see of a decode: its error's HTTP status and message, or that it decoded. */
async function outcome(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
    return 'decoded';
  } catch (err) {
    return `${(err as ParleyError).status}: ${(err as Error).message}`;
  }
}

describe('decode worker threads', { skip: FFMPEG_MISSING }, () => {
  let workers: DecodeWorkers;
  let formats: FormatSet;
  const ffmpeg = createFfmpegRunner();

  before(async () => {
    workers = new DecodeWorkers(2);
    const dir = (await import('node:fs')).mkdtempSync(path.join((await import('node:os')).tmpdir(), 'parley-decode-workers-'));
    const source = path.join(dir, 'tone.wav');
    writeFileSync(source, toneWav(2.5, 22_050));
    formats = await makeFormatSet(source);
  });
  after(async () => {
    await workers?.close();
    formats?.cleanup();
  });

  it('decodes every upload format to the samples the event loop gives, ffmpeg fallback included', async () => {
    const raw = toneWav(0.1, 16_000).subarray(44);
    const uploads: [string, Uint8Array, DecodeHint][] = [
      ...formats.variants.map((v): [string, Uint8Array, DecodeHint] => [v.name, v.bytes, { contentType: v.contentType }]),
      // A small Buffer is a view of Node's shared pool: it must still go over whole.
      ['raw pcm in a pooled Buffer', Buffer.from(raw), { contentType: 'audio/pcm; rate=16000' }],
    ];
    for (const [name, bytes, hint] of uploads) {
      const options: DecodeOptions = { sampleRate: 16_000, ffmpeg };
      const there = await workers.decode(bytes, hint, options);
      const here = await decodeAudio(bytes, hint, options);
      assert.equal(there.sampleRate, 16_000, name);
      assert.ok(there.samples.length > 0 && same(there.samples, here.samples), `${name}: ${there.samples.length} vs ${here.samples.length} samples`);
      assert.equal(bytes.byteLength > 0, true, `${name}: the caller keeps its bytes`);
    }
  });

  it('gives the errors the event loop gives: no audio, too long, no ffmpeg, client gone', async () => {
    const m4a = formats.variants.find((v) => v.name.startsWith('m4a'))!.bytes;
    const cases: [string, Uint8Array, DecodeOptions][] = [
      ['no audio', new TextEncoder().encode('this is not audio at all, just some text'), { ffmpeg }],
      ['empty', new Uint8Array(0), {}],
      ['a header declaring 99 channels', withChannels(toneWav(1), 99), { ffmpeg }],
      ['too long', formats.reference.bytes, { maxSeconds: 1, ffmpeg }],
      ['too long through ffmpeg', m4a, { maxSeconds: 1, ffmpeg }],
      ['m4a without ffmpeg', m4a, { ffmpeg: false }],
    ];
    for (const [name, bytes, options] of cases) {
      const there = await outcome(() => workers.decode(bytes, {}, { sampleRate: 16_000, ...options }));
      assert.equal(there, await outcome(() => decodeAudio(bytes, {}, { sampleRate: 16_000, ...options })), name);
      assert.notEqual(there, 'decoded', name);
    }
    await assert.rejects(workers.decode(formats.reference.bytes, {}, { maxSeconds: 1 }), AudioTooLongError);
    await assert.rejects(workers.decode(m4a, {}, { ffmpeg: false }), UnsupportedAudioError);

    const gone = new AbortController();
    gone.abort();
    await assert.rejects(workers.decode(m4a, {}, { ffmpeg, signal: gone.signal }), AbortedError);
    // A client that goes while ffmpeg decodes in the thread: ffmpeg is stopped and the call ends.
    const leaving = new AbortController();
    const decoding = workers.decode(m4a, {}, { ffmpeg, signal: leaving.signal, sampleRate: 16_000 });
    setTimeout(() => leaving.abort(), 5);
    await assert.rejects(decoding, AbortedError);
  });

  it('resamples to the samples the event loop gives', async () => {
    const { samples } = await decodeAudio(formats.reference.bytes);
    const there = await workers.resample(samples, 22_050, 16_000);
    assert.ok(same(there, await resampleYielding(samples, 22_050, 16_000)));
    assert.equal(await workers.resample(samples, 22_050, 22_050), samples);
  });

  it('warms the decoders of every thread on the samples the encoders made', async () => {
    const { uploads } = await warmUpCodecs();
    const warmed = await workers.warmUp(uploads);
    for (const name of ['resampler', 'decode wav', 'decode mp3', 'decode flac', 'decode opus', 'decode vorbis']) assert.ok(warmed.includes(name), `${name}: ${warmed.join(', ')}`);
  });

  it('a thread that dies fails only its own calls, and the next call gets a new one', async () => {
    const pool = new DecodeWorkers(2);
    const started: Worker[] = [];
    const onWorker = (worker: Worker) => started.push(worker);
    process.on('worker', onWorker);
    try {
      const bytes = formats.reference.bytes;
      // The first call starts the first thread, the second (the first one busy) the other.
      const first = pool.decode(bytes, {}, { sampleRate: 16_000 });
      const second = pool.decode(bytes, {}, { sampleRate: 16_000 });
      // The event comes once a thread is up; thread ids count up in the order the threads were made.
      while (started.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
      await started.sort((a, b) => a.threadId - b.threadId)[0]!.terminate();
      await assert.rejects(first, EngineError);
      const { samples } = await second;
      const here = await decodeAudio(bytes, {}, { sampleRate: 16_000 });
      assert.ok(same(samples, here.samples));
      const again = await Promise.all([pool.decode(bytes, {}, { sampleRate: 16_000 }), pool.decode(bytes, {}, { sampleRate: 16_000 })]);
      for (const audio of again) assert.ok(same(audio.samples, here.samples));
      while (started.length < 3) await new Promise((resolve) => setTimeout(resolve, 5));
      assert.equal(started.length, 3, 'one thread started in place of the dead one');
    } finally {
      process.off('worker', onWorker);
      await pool.close();
    }
  });
});
