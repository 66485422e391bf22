/** The warm-up runs every encoder the server offers and every decoder of uploads and streams. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { outputFormats } from '../../src/audio/pcm.js';
import { streamFormats } from '../../src/audio/stream-encode.js';
import { warmUpCodecs } from '../../src/audio/warm-up.js';

describe('warmUpCodecs', () => {
  it('runs each output format, the resampler, and the decoders of WAV, MP3, FLAC, Opus and Vorbis', async () => {
    const { warmed } = await warmUpCodecs();
    const encoders = new Set<string>([...outputFormats, ...streamFormats.filter((f) => f !== 'aac')]);
    for (const name of [...encoders, 'resampler', 'decode wav', 'decode mp3', 'decode flac', 'decode opus', 'decode vorbis', 'stream decode opus']) {
      assert.ok(warmed.includes(name), `${name} not warmed: ${warmed.join(', ')}`);
    }
  });
});
