import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MPEGDecoder } from 'mpg123-decoder';
import { ByteChunker } from '../../src/audio/chunk.js';
import { decodeAudio } from '../../src/audio/decode.js';
import { createEncoder, createFileEncoder, decodeInt16, encodeInt16, mp3SampleRateFor, type AudioEncoder } from '../../src/audio/encode.js';
import { decodeALaw, decodeMuLaw } from '../../src/audio/g711.js';
import type { OutputFormat } from '../../src/audio/pcm.js';
import { parseWav } from '../../src/audio/wav.js';
import { correlation, dominantFrequency, f32Bytes, FFMPEG_MISSING, ffmpeg, twoTone } from './signal-fixtures.js';

const SECONDS = 1.2;

/** Pushes the signal in sentence-like uneven pieces and concatenates every byte returned. */
function encodeInPieces(encoder: AudioEncoder, signal: Float32Array): Uint8Array {
  const parts: Uint8Array[] = [];
  const sizes = [1000, 4321, 17, 9000];
  for (let offset = 0, k = 0; offset < signal.length; k++) {
    const size = sizes[k % sizes.length];
    parts.push(encoder.push(signal.subarray(offset, offset + size)));
    offset += size;
  }
  parts.push(encoder.end());
  return Buffer.concat(parts);
}

async function decodeMp3(bytes: Uint8Array): Promise<{ samples: Float32Array; sampleRate: number }> {
  const decoder = new MPEGDecoder();
  await decoder.ready;
  try {
    const decoded = decoder.decode(bytes);
    return { samples: decoded.channelData[0].slice(0, decoded.samplesDecoded), sampleRate: decoded.sampleRate };
  } finally {
    decoder.free();
  }
}

describe('createEncoder in stream mode', () => {
  test('pcm: raw int16 little-endian, clamped', async () => {
    const encoder = await createEncoder('pcm', 16000, 'stream');
    assert.equal(encoder.contentType, 'audio/pcm');
    const bytes = encodeInPieces(encoder, Float32Array.from([0, 0.5, -0.5, 1, -1, 1.7, -3, NaN]));
    const values = Array.from(new Int16Array(bytes.buffer, bytes.byteOffset, bytes.length / 2));
    assert.deepEqual(values, [0, 16384, -16384, 32767, -32767, 32767, -32767, 0]);
  });

  for (const rate of [8000, 16000, 22050, 24000]) {
    test(`wav at ${rate} Hz: streaming header first, then PCM; decodes to the signal`, async () => {
      const signal = twoTone(rate, SECONDS);
      const encoder = await createEncoder('wav', rate, 'stream');
      assert.equal(encoder.contentType, 'audio/wav');
      const bytes = encodeInPieces(encoder, signal);
      assert.equal(bytes.length, 44 + signal.length * 2);
      const view = new DataView(bytes.buffer, bytes.byteOffset);
      assert.equal(view.getUint32(4, true), 0xffffffff);
      assert.equal(view.getUint32(40, true), 0xffffffff);
      const audio = await decodeAudio(bytes, {}, { ffmpeg: false });
      assert.equal(audio.sampleRate, rate);
      assert.equal(audio.samples.length, signal.length);
      assert.ok(correlation(audio.samples, signal) > 0.99999);
    });
  }

  test('wav with nothing pushed is still a header', async () => {
    const encoder = await createEncoder('wav', 24000, 'stream');
    assert.equal(encoder.end().length, 44);
  });

  test('ffmpeg accepts the streaming wav', { skip: FFMPEG_MISSING }, async () => {
    const signal = twoTone(24000, SECONDS);
    const bytes = encodeInPieces(await createEncoder('wav', 24000, 'stream'), signal);
    const out = ffmpeg(['-i', 'pipe:0', '-f', 'f32le', 'pipe:1'], bytes);
    assert.equal(out.length / 4, signal.length);
  });

  test('mulaw: raw G.711 bytes, one per sample', async () => {
    const signal = twoTone(8000, SECONDS);
    const encoder = await createEncoder('mulaw', 8000, 'stream');
    const bytes = encodeInPieces(encoder, signal);
    assert.equal(bytes.length, signal.length);
    assert.ok(correlation(decodeMuLaw(bytes), signal) > 0.999);
    const audio = await decodeAudio(bytes, { contentType: encoder.contentType + ';rate=8000' }, { ffmpeg: false });
    assert.equal(audio.samples.length, signal.length);
  });

  test('alaw: raw G.711 A-law bytes, one per sample, that ffmpeg reads as the signal', async () => {
    const signal = twoTone(8000, SECONDS);
    const encoder = await createEncoder('alaw', 8000, 'stream');
    assert.equal(encoder.contentType, 'audio/x-alaw');
    const bytes = encodeInPieces(encoder, signal);
    assert.equal(bytes.length, signal.length);
    // Each sample within half of its segment's step (16 below 512, doubling per segment), in int16 units.
    const decoded = decodeALaw(bytes);
    for (let i = 0; i < signal.length; i++) {
      const [heard, said] = [decoded[i]! * 32768, signal[i]! * 32767];
      assert.ok(Math.abs(heard - said) <= Math.max(8, Math.abs(said) / 32) + 1, `sample ${i}: ${heard} for ${said}`);
    }
    const audio = await decodeAudio(bytes, { contentType: encoder.contentType + ';rate=8000' }, { ffmpeg: false });
    assert.equal(audio.samples.length, signal.length);
    if (!FFMPEG_MISSING) {
      const viaFfmpeg = new Float32Array(ffmpeg(['-f', 'alaw', '-ar', '8000', '-ac', '1', '-i', 'pipe:0', '-f', 'f32le', 'pipe:1'], bytes).buffer);
      assert.ok(correlation(viaFfmpeg, signal) > 0.999);
    }
  });

  for (const rate of [8000, 16000, 22050, 24000, 44100, 48000]) {
    test(`mp3 at ${rate} Hz: concatenated frames decode at that rate with the right content`, async () => {
      const signal = twoTone(rate, SECONDS);
      const encoder = await createEncoder('mp3', rate, 'stream');
      assert.equal(encoder.contentType, 'audio/mpeg');
      assert.equal(encoder.sampleRate, rate);
      const bytes = encodeInPieces(encoder, signal);
      const decoded = await decodeMp3(bytes);
      assert.equal(decoded.sampleRate, rate);
      const duration = decoded.samples.length / rate;
      // LAME adds up to ~2 frames of priming and padding without a gapless header.
      assert.ok(duration >= SECONDS - 0.01 && duration <= SECONDS + 0.2, `duration ${duration} s`);
      assert.ok(Math.abs(dominantFrequency(decoded.samples, rate) - 440) <= rate / 4096 + 1);
    });
  }

  test('mp3 encoders reused from the idle pool start from a clean state', async () => {
    const signal = twoTone(24000, SECONDS);
    const first = encodeInPieces(await createEncoder('mp3', 24000, 'stream'), signal);
    // An abandoned stream in between (the client left): its LAME state must not leak into the next.
    const abandoned = await createEncoder('mp3', 24000, 'stream');
    abandoned.push(signal.subarray(0, 5000));
    abandoned.abandon();
    await new Promise((resolve) => setImmediate(resolve)); // returned encoders are set up again
    const reused = await createEncoder('mp3', 24000, 'stream');
    const second = encodeInPieces(reused, signal);
    assert.ok(first.length > 1000);
    assert.deepEqual(second, first);
    // Two streams at once get two encoders, each producing the same bytes.
    const [a, b] = await Promise.all([createEncoder('mp3', 24000, 'stream'), createEncoder('mp3', 24000, 'stream')]);
    const half = signal.subarray(0, 12000);
    const interleaved = [a.push(half), b.push(half), a.push(signal.subarray(12000)), b.push(signal.subarray(12000))];
    assert.deepEqual(Buffer.concat([interleaved[0]!, interleaved[2]!, a.end()]), Buffer.concat([interleaved[1]!, interleaved[3]!, b.end()]));
  });

  test('mp3 at a rate MPEG cannot carry is resampled to the nearest MPEG rate', async () => {
    assert.equal(mp3SampleRateFor(20000), 22050);
    assert.equal(mp3SampleRateFor(9000), 8000);
    assert.equal(mp3SampleRateFor(14000), 16000); // tie between 12000 and 16000 goes up
    const encoder = await createEncoder('mp3', 20000, 'stream');
    assert.equal(encoder.sampleRate, 22050);
    const decoded = await decodeMp3(encodeInPieces(encoder, twoTone(20000, SECONDS)));
    assert.equal(decoded.sampleRate, 22050);
    const duration = decoded.samples.length / 22050;
    assert.ok(duration >= SECONDS - 0.01 && duration <= SECONDS + 0.2, `duration ${duration} s`);
    assert.ok(Math.abs(dominantFrequency(decoded.samples, 22050) - 440) <= 22050 / 4096 + 1);
  });

  test('SSE framing: encoder output through the 1024-byte chunker reassembles exactly', async () => {
    const signal = twoTone(24000, SECONDS);
    for (const format of ['pcm', 'wav', 'mp3', 'mulaw', 'alaw'] as OutputFormat[]) {
      const direct = encodeInPieces(await createEncoder(format, 24000, 'stream'), signal);
      const encoder = await createEncoder(format, 24000, 'stream');
      const chunker = new ByteChunker(1024);
      const events: Uint8Array[] = [];
      for (let offset = 0; offset < signal.length; offset += 5000) {
        events.push(...chunker.push(encoder.push(signal.subarray(offset, offset + 5000))));
      }
      events.push(...chunker.push(encoder.end()));
      const rest = chunker.flush();
      if (rest) events.push(rest);
      assert.ok(events.every((e) => e.length <= 1024));
      // LAME output does not depend on how the samples were split.
      assert.deepEqual(Buffer.concat(events), Buffer.from(direct), format);
    }
  });
});

describe('createFileEncoder (/get_speech)', () => {
  const signal = twoTone(24000, SECONDS);

  /** The file for `samples`, fed in uneven pieces as synthesis delivers them. */
  async function encodeWholeFile(format: OutputFormat, samples: Float32Array, sampleRate: number, options: { wavHeader: boolean }) {
    const encoder = await createFileEncoder(format, sampleRate, options);
    const bytes = encodeInPieces(encoder, samples);
    return { bytes, contentType: encoder.contentType, sampleRate: encoder.sampleRate };
  }

  for (const format of ['pcm', 'wav'] as OutputFormat[]) {
    test(`${format} → PCM int16 WAV with exact sizes`, async () => {
      const file = await encodeWholeFile(format, signal, 24000, { wavHeader: true });
      assert.equal(file.contentType, 'audio/wav');
      assert.equal(file.sampleRate, 24000);
      assert.equal(file.bytes.length, 44 + signal.length * 2);
      const view = new DataView(file.bytes.buffer, file.bytes.byteOffset);
      assert.equal(view.getUint32(4, true), file.bytes.length - 8);
      assert.equal(view.getUint16(20, true), 1);
      assert.equal(view.getUint16(34, true), 16);
      assert.equal(view.getUint32(40, true), signal.length * 2);
      assert.ok(correlation(parseWav(file.bytes).samples, signal) > 0.99999);
    });

    test(`${format} with wavHeader false → raw PCM`, async () => {
      const file = await encodeWholeFile(format, signal, 24000, { wavHeader: false });
      assert.equal(file.contentType, 'audio/pcm');
      assert.equal(file.bytes.length, signal.length * 2);
    });
  }

  for (const [format, formatTag, rawType] of [
    ['mulaw', 7, 'audio/x-mulaw'],
    ['alaw', 6, 'audio/x-alaw'],
  ] as const) {
    test(`${format} → WAV format tag ${formatTag}, 8-bit, readable by us and by ffmpeg; without the header ${rawType}`, async () => {
      const telephone = twoTone(8000, SECONDS);
      const file = await encodeWholeFile(format, telephone, 8000, { wavHeader: true });
      assert.equal(file.contentType, 'audio/wav');
      const view = new DataView(file.bytes.buffer, file.bytes.byteOffset);
      assert.equal(view.getUint16(20, true), formatTag);
      assert.equal(view.getUint16(34, true), 8);
      assert.equal(view.getUint32(4, true), file.bytes.length - 8);
      const audio = parseWav(file.bytes);
      assert.equal(audio.sampleRate, 8000);
      assert.equal(audio.samples.length, telephone.length);
      assert.ok(correlation(audio.samples, telephone) > 0.999);
      if (!FFMPEG_MISSING) {
        const viaFfmpeg = ffmpeg(['-i', 'pipe:0', '-f', 'f32le', 'pipe:1'], file.bytes);
        assert.equal(viaFfmpeg.length / 4, telephone.length);
      }
      const raw = await encodeWholeFile(format, telephone, 8000, { wavHeader: false });
      assert.equal(raw.contentType, rawType);
      assert.equal(raw.bytes.length, telephone.length);
    });
  }

  test('mp3 → audio/mpeg that decodes at the requested rate', async () => {
    const file = await encodeWholeFile('mp3', signal, 24000, { wavHeader: true });
    assert.equal(file.contentType, 'audio/mpeg');
    const decoded = await decodeMp3(file.bytes);
    assert.equal(decoded.sampleRate, 24000);
    assert.ok(Math.abs(decoded.samples.length / 24000 - SECONDS) < 0.2);
    const viaDecodeAudio = await decodeAudio(file.bytes, {}, { ffmpeg: false });
    assert.equal(viaDecodeAudio.sampleRate, 24000);
  });

  test('a long text fed in pieces gives the int16 samples ffmpeg gives', { skip: FFMPEG_MISSING }, async () => {
    const long = twoTone(16000, 25);
    const file = await encodeWholeFile('wav', long, 16000, { wavHeader: true });
    const reference = ffmpeg(['-f', 'f32le', '-ar', '16000', '-ac', '1', '-i', 'pipe:0', '-c:a', 'pcm_s16le', '-f', 's16le', 'pipe:1'], f32Bytes(long));
    const ours = file.bytes.subarray(44);
    let maxDiff = 0;
    const a = new Int16Array(ours.buffer, ours.byteOffset, ours.length / 2);
    const b = new Int16Array(reference.buffer, reference.byteOffset, reference.length / 2);
    assert.equal(a.length, b.length);
    for (let i = 0; i < a.length; i++) maxDiff = Math.max(maxDiff, Math.abs(a[i] - b[i]));
    assert.ok(maxDiff <= 1, `int16 conversion differs from ffmpeg by ${maxDiff}`);
  });
});

describe('encodeInt16 / decodeInt16 (stored clone samples)', () => {
  test('round-trips within one int16 step, little-endian, from an unaligned view', () => {
    const signal = twoTone(16000, 0.25);
    const bytes = encodeInt16(signal);
    assert.equal(bytes.length, signal.length * 2);
    // A sample read back from a database row may sit at an odd offset of a larger buffer.
    const padded = new Uint8Array(bytes.length + 1);
    padded.set(bytes, 1);
    const back = decodeInt16(padded.subarray(1));
    assert.equal(back.length, signal.length);
    for (let i = 0; i < signal.length; i++) assert.ok(Math.abs(back[i]! - signal[i]!) <= 1 / 16384, `sample ${i}: ${signal[i]} → ${back[i]}`);
    assert.deepEqual([...decodeInt16(Uint8Array.of(0x00, 0x80, 0xff, 0x7f))], [-1, 32767 / 32768]);
  });
});
