import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { aLawFromInt16, aLawToInt16, decodeALaw, decodeMuLaw, encodeALaw, encodeMuLaw, muLawFromInt16, muLawToInt16 } from '../../src/audio/g711.js';
import { FFMPEG_MISSING, ffmpeg, sine } from './signal-fixtures.js';

const allBytes = Uint8Array.from({ length: 256 }, (_, i) => i);

function int16s(bytes: Uint8Array): Int16Array {
  return new Int16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 2);
}

describe('G.711', () => {
  test('mu-law decoding matches ffmpeg for all 256 codes', { skip: FFMPEG_MISSING }, () => {
    const reference = int16s(ffmpeg(['-f', 'mulaw', '-ar', '8000', '-ac', '1', '-i', 'pipe:0', '-f', 's16le', 'pipe:1'], allBytes));
    assert.equal(reference.length, 256);
    for (let code = 0; code < 256; code++) assert.equal(muLawToInt16(code), reference[code], `code ${code}`);
  });

  test('A-law decoding matches ffmpeg for all 256 codes', { skip: FFMPEG_MISSING }, () => {
    const reference = int16s(ffmpeg(['-f', 'alaw', '-ar', '8000', '-ac', '1', '-i', 'pipe:0', '-f', 's16le', 'pipe:1'], allBytes));
    for (let code = 0; code < 256; code++) assert.equal(aLawToInt16(code), reference[code], `code ${code}`);
  });

  test('mu-law encoding agrees with ffmpeg over the whole int16 range', { skip: FFMPEG_MISSING }, () => {
    const ramp = new Int16Array(65536);
    for (let i = 0; i < ramp.length; i++) ramp[i] = i - 32768;
    const reference = ffmpeg(['-f', 's16le', '-ar', '8000', '-ac', '1', '-i', 'pipe:0', '-f', 'mulaw', 'pipe:1'], new Uint8Array(ramp.buffer));
    let differing = 0;
    for (let i = 0; i < ramp.length; i++) {
      const ours = muLawFromInt16(ramp[i]);
      if (ours !== reference[i]) {
        differing++;
        // Only codes on either side of a decision boundary may differ.
        assert.ok(Math.abs(muLawToInt16(ours) - muLawToInt16(reference[i])) <= 1024, `sample ${ramp[i]}`);
      }
    }
    // ffmpeg quantises to 14 bits first, which moves some boundaries by one LSB (851 inputs of
    // 65536 at the time of writing); each of them lands on the neighbouring code.
    assert.ok(differing / ramp.length < 0.02, `${differing} of 65536 codes differ from ffmpeg`);
  });

  test('A-law encoding agrees with ffmpeg over the whole int16 range', { skip: FFMPEG_MISSING }, () => {
    const ramp = new Int16Array(65536);
    for (let i = 0; i < ramp.length; i++) ramp[i] = i - 32768;
    const reference = ffmpeg(['-f', 's16le', '-ar', '8000', '-ac', '1', '-i', 'pipe:0', '-f', 'alaw', 'pipe:1'], new Uint8Array(ramp.buffer));
    assert.equal(reference.length, ramp.length);
    let differing = 0;
    for (let i = 0; i < ramp.length; i++) {
      const ours = aLawFromInt16(ramp[i]);
      if (ours === reference[i]) continue;
      differing++;
      // Only the neighbouring code, on a decision boundary (964 of 65536 inputs at the time of writing: ties ffmpeg rounds away from zero).
      const step = Math.abs(aLawToInt16(ours) - aLawToInt16(reference[i]));
      assert.ok(step <= 1024 && Math.abs(aLawToInt16(ours) - ramp[i]) <= step, `sample ${ramp[i]}`);
    }
    assert.ok(differing / ramp.length < 0.02, `${differing} of 65536 codes differ from ffmpeg`);
  });

  test('every A-law code survives decode then encode', () => {
    for (let code = 0; code < 256; code++) assert.equal(aLawFromInt16(aLawToInt16(code)), code, `code ${code}`);
  });

  test('every code survives decode then encode', () => {
    for (let code = 0; code < 256; code++) {
      const back = muLawFromInt16(muLawToInt16(code));
      // 0x7f and 0xff are both zero: the one pair that collapses.
      assert.equal(muLawToInt16(back), muLawToInt16(code), `code ${code}`);
    }
  });

  for (const [law, encode, decode] of [
    ['mu-law', encodeMuLaw, decodeMuLaw],
    ['A-law', encodeALaw, decodeALaw],
  ] as const) {
    test(`a sine through ${law} keeps over 30 dB of SNR and the clamp holds`, () => {
      const signal = sine(440, 8000, 1, 0.8);
      const decoded = decode(encode(signal));
      let signalPower = 0;
      let noisePower = 0;
      for (let i = 0; i < signal.length; i++) {
        signalPower += signal[i] ** 2;
        noisePower += (signal[i] - decoded[i]) ** 2;
      }
      assert.ok(10 * Math.log10(signalPower / noisePower) > 30);
      const clipped = decode(encode(Float32Array.from([2, -2, NaN])));
      assert.ok(clipped[0] > 0.95 && clipped[1] < -0.95 && Math.abs(clipped[2]) < 0.001);
    });
  }

  test('A-law table spans the full range symmetrically', () => {
    const values = decodeALaw(allBytes);
    assert.ok(Math.max(...values) > 0.95 && Math.min(...values) < -0.95);
    assert.equal(aLawToInt16(0xd5), 8);
    assert.equal(aLawToInt16(0x55), -8);
  });
});
