import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseWav, wavFile, wavHeader, WavFormatTag } from '../../src/audio/wav.js';
import { UnsupportedAudioError } from '../../src/errors.js';
import { correlation, FFMPEG_MISSING, ffmpeg, twoTone } from './signal-fixtures.js';

function int16Bytes(samples: Float32Array, channels = 1): Uint8Array {
  const out = new Uint8Array(samples.length * 2 * channels);
  const view = new DataView(out.buffer);
  for (let i = 0; i < samples.length; i++) {
    for (let c = 0; c < channels; c++) view.setInt16((i * channels + c) * 2, Math.round(samples[i] * 32767) * (c % 2 ? -1 : 1), true);
  }
  return out;
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

describe('wavHeader', () => {
  test('canonical 44-byte PCM header with exact sizes', () => {
    const header = wavHeader({ sampleRate: 22050, channels: 1, bitsPerSample: 16, formatTag: WavFormatTag.pcm, dataBytes: 1000 });
    const view = new DataView(header.buffer);
    assert.equal(header.length, 44);
    assert.equal(Buffer.from(header.subarray(0, 4)).toString(), 'RIFF');
    assert.equal(view.getUint32(4, true), 36 + 1000);
    assert.equal(Buffer.from(header.subarray(8, 16)).toString(), 'WAVEfmt ');
    assert.equal(view.getUint16(20, true), 1);
    assert.equal(view.getUint16(22, true), 1);
    assert.equal(view.getUint32(24, true), 22050);
    assert.equal(view.getUint32(28, true), 44100);
    assert.equal(view.getUint16(32, true), 2);
    assert.equal(view.getUint16(34, true), 16);
    assert.equal(Buffer.from(header.subarray(36, 40)).toString(), 'data');
    assert.equal(view.getUint32(40, true), 1000);
  });

  test('streaming header has sizes 0xFFFFFFFF', () => {
    const header = wavHeader({ sampleRate: 24000, channels: 1, bitsPerSample: 16, formatTag: 1, dataBytes: undefined });
    const view = new DataView(header.buffer);
    assert.equal(header.length, 44);
    assert.equal(view.getUint32(4, true), 0xffffffff);
    assert.equal(view.getUint32(40, true), 0xffffffff);
  });

  test('mu-law file: tag 7, 8-bit, fact chunk, pad byte for odd data', () => {
    const file = wavFile(new Uint8Array(101).fill(0xff), { sampleRate: 8000, channels: 1, bitsPerSample: 8, formatTag: WavFormatTag.muLaw });
    const view = new DataView(file.buffer);
    assert.equal(file.length, 58 + 101 + 1);
    assert.equal(view.getUint32(4, true), file.length - 8);
    assert.equal(view.getUint16(20, true), 7);
    assert.equal(view.getUint16(34, true), 8);
    assert.equal(Buffer.from(file.subarray(38, 42)).toString(), 'fact');
    assert.equal(view.getUint32(46, true), 101);
    assert.equal(view.getUint32(54, true), 101);
    const parsed = parseWav(file);
    assert.equal(parsed.sampleRate, 8000);
    assert.equal(parsed.samples.length, 101);
  });

  test('ffmpeg reads our PCM and mu-law files', { skip: FFMPEG_MISSING }, () => {
    const signal = twoTone(16000, 0.5);
    const pcm = wavFile(int16Bytes(signal), { sampleRate: 16000, channels: 1, bitsPerSample: 16, formatTag: WavFormatTag.pcm });
    const back = ffmpeg(['-i', 'pipe:0', '-f', 'f32le', 'pipe:1'], pcm);
    const samples = new Float32Array(back.buffer, back.byteOffset, back.byteLength / 4);
    assert.equal(samples.length, signal.length);
    assert.ok(correlation(samples, signal) > 0.99999);
  });
});

describe('parseWav', () => {
  test('round trip through our own header', () => {
    const signal = twoTone(24000, 0.3);
    const audio = parseWav(wavFile(int16Bytes(signal), { sampleRate: 24000, channels: 1, bitsPerSample: 16, formatTag: 1 }));
    assert.equal(audio.sampleRate, 24000);
    assert.equal(audio.samples.length, signal.length);
    for (let i = 0; i < signal.length; i++) assert.ok(Math.abs(audio.samples[i] - signal[i]) < 1 / 16384);
  });

  test('a streaming header (sizes 0xFFFFFFFF or 0) reads to the end of the bytes', () => {
    const signal = twoTone(16000, 0.2);
    for (const size of [0xffffffff, 0]) {
      const header = wavHeader({ sampleRate: 16000, channels: 1, bitsPerSample: 16, formatTag: 1, dataBytes: undefined });
      new DataView(header.buffer).setUint32(40, size, true);
      assert.equal(parseWav(concat(header, int16Bytes(signal))).samples.length, signal.length);
    }
  });

  test('stereo is averaged: identical channels keep the signal, opposite ones cancel', () => {
    const signal = twoTone(16000, 0.2);
    const same = new Uint8Array(signal.length * 4);
    const view = new DataView(same.buffer);
    signal.forEach((s, i) => {
      view.setInt16(i * 4, Math.round(s * 32767), true);
      view.setInt16(i * 4 + 2, Math.round(s * 32767), true);
    });
    const format = { sampleRate: 16000, channels: 2, bitsPerSample: 16, formatTag: 1 };
    const kept = parseWav(wavFile(same, format)).samples;
    assert.equal(kept.length, signal.length);
    for (let i = 0; i < signal.length; i++) assert.ok(Math.abs(kept[i] - signal[i]) < 1 / 16384);
    const cancelled = parseWav(wavFile(int16Bytes(signal, 2), format)).samples;
    assert.ok(cancelled.every((s) => Math.abs(s) <= 1 / 32768));
  });

  test('skips unknown chunks, including odd-sized ones with their pad byte', () => {
    const signal = twoTone(8000, 0.1);
    const data = int16Bytes(signal);
    const header = wavHeader({ sampleRate: 8000, channels: 1, bitsPerSample: 16, formatTag: 1, dataBytes: data.length });
    const list = concat(new TextEncoder().encode('LIST'), Uint8Array.from([3, 0, 0, 0, 1, 2, 3, 0]));
    const file = concat(header.subarray(0, 36), list, header.subarray(36), data);
    assert.equal(parseWav(file).samples.length, signal.length);
  });

  test('refuses what is not a decodable WAV', () => {
    const header = wavHeader({ sampleRate: 8000, channels: 1, bitsPerSample: 16, formatTag: 1, dataBytes: 0 });
    assert.throws(() => parseWav(new Uint8Array(0)), UnsupportedAudioError);
    assert.throws(() => parseWav(header.subarray(0, 20)), UnsupportedAudioError);
    assert.throws(() => parseWav(header), UnsupportedAudioError); // no sample frame
    const adpcm = wavHeader({ sampleRate: 8000, channels: 1, bitsPerSample: 4, formatTag: 2, dataBytes: 100 });
    assert.throws(() => parseWav(concat(adpcm, new Uint8Array(100))), UnsupportedAudioError);
    const noChannels = wavHeader({ sampleRate: 8000, channels: 1, bitsPerSample: 16, formatTag: 1, dataBytes: 100 });
    new DataView(noChannels.buffer).setUint16(22, 0, true);
    assert.throws(() => parseWav(concat(noChannels, new Uint8Array(100))), UnsupportedAudioError);
  });
});
