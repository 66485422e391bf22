import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { decodeAudio } from '../../src/audio/decode.js';
import type { PcmAudio } from '../../src/audio/pcm.js';
import { resample } from '../../src/audio/resample.js';
import { UnsupportedAudioError } from '../../src/errors.js';
import {
  correlation,
  dominantFrequency,
  envelope,
  envelopeSimilarity,
  f32Bytes,
  FFMPEG_MISSING,
  ffmpeg,
  twoTone,
} from './signal-fixtures.js';
import { corpusDir, needs } from '../helpers/models.js';

const SOURCE_RATE = 16000;
const SECONDS = 1.5;
const source = twoTone(SOURCE_RATE, SECONDS);

interface FormatCase {
  name: string;
  /** ffmpeg output options (after `-i`), ending with the muxer. */
  args: string[];
  rate: number;
  /** Extra duration tolerance for codecs that pad (seconds). */
  padding?: number;
  /** Lossless cases are compared sample by sample with the source (same rate only). */
  minCorrelation?: number;
  /** Containers ffmpeg cannot write to a pipe. */
  toFile?: string;
  /** Decoded by ffmpeg, not natively. */
  needsFfmpeg?: boolean;
}

const cases: FormatCase[] = [
  { name: 'wav pcm u8', args: ['-c:a', 'pcm_u8', '-f', 'wav'], rate: 16000, minCorrelation: 0.999 },
  { name: 'wav pcm s16', args: ['-c:a', 'pcm_s16le', '-f', 'wav'], rate: 16000, minCorrelation: 0.99999 },
  { name: 'wav pcm s24', args: ['-c:a', 'pcm_s24le', '-f', 'wav'], rate: 16000, minCorrelation: 0.99999 },
  { name: 'wav pcm s32', args: ['-c:a', 'pcm_s32le', '-f', 'wav'], rate: 16000, minCorrelation: 0.99999 },
  { name: 'wav float32', args: ['-c:a', 'pcm_f32le', '-f', 'wav'], rate: 16000, minCorrelation: 0.99999 },
  { name: 'wav float64', args: ['-c:a', 'pcm_f64le', '-f', 'wav'], rate: 16000, minCorrelation: 0.99999 },
  { name: 'wav mu-law 8 kHz', args: ['-ar', '8000', '-c:a', 'pcm_mulaw', '-f', 'wav'], rate: 8000 },
  { name: 'wav a-law 8 kHz', args: ['-ar', '8000', '-c:a', 'pcm_alaw', '-f', 'wav'], rate: 8000 },
  { name: 'wav stereo 44.1 kHz', args: ['-ac', '2', '-ar', '44100', '-c:a', 'pcm_s16le', '-f', 'wav'], rate: 44100 },
  // Three 24-bit channels make ffmpeg write WAVE_FORMAT_EXTENSIBLE.
  { name: 'wav extensible 3ch s24', args: ['-ac', '3', '-c:a', 'pcm_s24le', '-f', 'wav'], rate: 16000, minCorrelation: 0.99999 },
  { name: 'wav rf64', args: ['-c:a', 'pcm_s16le', '-rf64', 'always', '-f', 'wav'], rate: 16000, minCorrelation: 0.99999, toFile: 'wav' },
  { name: 'aiff s16', args: ['-c:a', 'pcm_s16be', '-f', 'aiff'], rate: 16000, minCorrelation: 0.99999 },
  { name: 'aiff-c sowt', args: ['-c:a', 'pcm_s16le', '-f', 'aiff'], rate: 16000, minCorrelation: 0.99999, toFile: 'aifc' },
  { name: 'mp3', args: ['-c:a', 'libmp3lame', '-b:a', '64k', '-f', 'mp3'], rate: 16000, padding: 0.06 },
  { name: 'mp3 stereo 44.1 kHz', args: ['-ac', '2', '-ar', '44100', '-c:a', 'libmp3lame', '-f', 'mp3'], rate: 44100, padding: 0.06 },
  { name: 'flac', args: ['-c:a', 'flac', '-f', 'flac'], rate: 16000, minCorrelation: 0.99999 },
  { name: 'flac 24-bit stereo 48 kHz', args: ['-ac', '2', '-ar', '48000', '-c:a', 'flac', '-sample_fmt', 's32', '-f', 'flac'], rate: 48000 },
  { name: 'ogg vorbis', args: ['-c:a', 'libvorbis', '-f', 'ogg'], rate: 16000, padding: 0.06 },
  { name: 'ogg opus', args: ['-c:a', 'libopus', '-f', 'ogg'], rate: 48000, padding: 0.06 },
  { name: 'webm opus', args: ['-c:a', 'libopus', '-f', 'webm'], rate: 48000, padding: 0.06 },
  { name: 'webm opus stereo', args: ['-ac', '2', '-c:a', 'libopus', '-f', 'webm'], rate: 48000, padding: 0.06 },
  { name: 'mka opus', args: ['-c:a', 'libopus', '-f', 'matroska'], rate: 48000, padding: 0.06 },
  { name: 'm4a aac (moov at the end)', args: ['-c:a', 'aac', '-f', 'ipod'], rate: 16000, padding: 0.06, toFile: 'm4a', needsFfmpeg: true },
  { name: 'webm vorbis', args: ['-c:a', 'libvorbis', '-f', 'webm'], rate: 16000, padding: 0.06, needsFfmpeg: true },
  { name: 'wav ms-adpcm', args: ['-c:a', 'adpcm_ms', '-f', 'wav'], rate: 16000, padding: 0.06, needsFfmpeg: true },
];

const encoded = new Map<string, Uint8Array>();

function encode(c: FormatCase): Uint8Array {
  let bytes = encoded.get(c.name);
  if (!bytes) encoded.set(c.name, (bytes = encodeWithFfmpeg(c)));
  return bytes;
}

function encodeWithFfmpeg(c: FormatCase): Uint8Array {
  const input = ['-f', 'f32le', '-ar', String(SOURCE_RATE), '-ac', '1', '-i', 'pipe:0'];
  if (!c.toFile) return ffmpeg([...input, ...c.args, 'pipe:1'], f32Bytes(source));
  const dir = mkdtempSync(join(tmpdir(), 'parley-audio-test-'));
  try {
    const file = join(dir, `out.${c.toFile}`);
    ffmpeg([...input, ...c.args, '-y', file], f32Bytes(source));
    return new Uint8Array(readFileSync(file));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('decodeAudio: every accepted input format', () => {
  for (const c of cases) {
    test(c.name, { skip: FFMPEG_MISSING }, async () => {
      const bytes = encode(c);
      const audio = await decodeAudio(bytes);
      assert.equal(audio.sampleRate, c.rate);
      const duration = audio.samples.length / audio.sampleRate;
      assert.ok(Math.abs(duration - SECONDS) <= 0.05 + (c.padding ?? 0), `duration ${duration} s, expected ${SECONDS} s`);
      const peak = dominantFrequency(audio.samples, audio.sampleRate);
      assert.ok(Math.abs(peak - 440) <= audio.sampleRate / 4096 + 1, `dominant frequency ${peak} Hz, expected 440 Hz`);
      // Mixing equal channels down must not change the level (an average, not a sum).
      const reference = c.rate === SOURCE_RATE ? source : await resample(source, SOURCE_RATE, c.rate);
      const r = correlation(audio.samples, reference);
      if (c.minCorrelation) assert.ok(r >= c.minCorrelation, `correlation with the source ${r}`);
      // ffmpeg upmixes mono at -3 dB per channel, so only single-channel cases keep the level.
      if (!c.padding && !c.args.includes('-ac')) {
        let sourceRms = 0;
        let decodedRms = 0;
        for (let i = 0; i < reference.length; i++) sourceRms += reference[i] ** 2;
        for (let i = 0; i < audio.samples.length; i++) decodedRms += audio.samples[i] ** 2;
        const ratio = Math.sqrt(decodedRms / audio.samples.length / (sourceRms / reference.length));
        assert.ok(Math.abs(ratio - 1) < 0.05, `level ratio ${ratio}`);
      }
    });
  }

  test('formats that need ffmpeg are refused with UnsupportedAudioError when ffmpeg is disabled', { skip: FFMPEG_MISSING }, async () => {
    for (const c of cases.filter((x) => x.needsFfmpeg)) {
      await assert.rejects(decodeAudio(encode(c), {}, { ffmpeg: false }), UnsupportedAudioError, c.name);
    }
  });

  test('native formats decode without ffmpeg', { skip: FFMPEG_MISSING }, async () => {
    for (const c of cases.filter((x) => !x.needsFfmpeg)) {
      const audio = await decodeAudio(encode(c), {}, { ffmpeg: false });
      assert.equal(audio.sampleRate, c.rate, c.name);
    }
  });
});

describe('decodeAudio: headerless PCM named by the Content-Type', () => {
  test('audio/pcm;rate=24000 is 16-bit little-endian at that rate', async () => {
    const signal = twoTone(24000, 0.5);
    const bytes = new Uint8Array(signal.length * 2);
    const view = new DataView(bytes.buffer);
    signal.forEach((s, i) => view.setInt16(i * 2, Math.round(s * 32767), true));
    const audio = await decodeAudio(bytes, { contentType: 'audio/pcm; rate=24000' }, { ffmpeg: false });
    assert.equal(audio.sampleRate, 24000);
    assert.ok(correlation(audio.samples, signal) > 0.99999);
  });

  test('audio/L16 is big-endian (RFC 2586), channels are mixed down', async () => {
    const signal = twoTone(8000, 0.5);
    const bytes = new Uint8Array(signal.length * 4);
    const view = new DataView(bytes.buffer);
    signal.forEach((s, i) => {
      view.setInt16(i * 4, Math.round(s * 32767), false);
      view.setInt16(i * 4 + 2, Math.round(s * 32767), false);
    });
    const audio = await decodeAudio(bytes, { contentType: 'audio/L16;rate=8000;channels=2' }, { ffmpeg: false });
    assert.equal(audio.sampleRate, 8000);
    assert.equal(audio.samples.length, signal.length);
    assert.ok(correlation(audio.samples, signal) > 0.99999);
  });

  test('a type named like what every object inherits (constructor, __proto__) names no raw format', async () => {
    const bytes = new Uint8Array(16_000).fill(0x55);
    for (const contentType of ['constructor;rate=16000', '__proto__;rate=8000', 'hasownproperty;rate=16000']) {
      await assert.rejects(decodeAudio(bytes, { contentType }, { ffmpeg: false }), UnsupportedAudioError, contentType);
    }
  });
});

const CORPUS = corpusDir;
const NEEDS_CORPUS = needs({ corpus: true });

interface ManifestEntry {
  file: string;
  duration_s: number;
  sample_rate: number;
  codec: string;
  group?: string;
}

function formatEntries(): ManifestEntry[] {
  try {
    return readFileSync(join(CORPUS, 'manifest.jsonl'), 'utf8')
      .split('\n')
      .filter((line) => line.trim())
      .map((line) => JSON.parse(line) as ManifestEntry)
      .filter((e) => e.file.startsWith('formats/'));
  } catch {
    return [];
  }
}

describe('decodeAudio: real files of the corpus', { skip: NEEDS_CORPUS }, () => {
  const entries = formatEntries();
  test('the corpus lists files of several formats', () => assert.ok(entries.length >= 3, `${entries.length} format entries in ${CORPUS}`));
  const decoded = new Map<string, Float32Array>();

  for (const entry of entries) {
    const isFfmpegOnly = entry.codec === 'aac';
    test(entry.file, { skip: isFfmpegOnly && FFMPEG_MISSING }, async () => {
      const audio = await decodeAudio(new Uint8Array(readFileSync(join(CORPUS, entry.file))), { filename: entry.file });
      assert.equal(audio.sampleRate, entry.sample_rate);
      const duration = audio.samples.length / audio.sampleRate;
      // ffprobe's duration counts MP3 encoder padding (jfk.mp3: 11.088 s for 11.0 s of audio).
      const tolerance = entry.codec === 'mp3' ? 0.1 : 0.05;
      assert.ok(Math.abs(duration - entry.duration_s) <= tolerance, `duration ${duration} s, manifest says ${entry.duration_s} s`);
      if (entry.group === 'jfk') decoded.set(entry.file, envelope(await resample(audio.samples, audio.sampleRate, 16000), 16000));
    });
  }

  test('concurrent decodes do not share decoder state', async () => {
    const files = entries.filter((e) => e.codec !== 'aac').map((e) => new Uint8Array(readFileSync(join(CORPUS, e.file))));
    const sequential: PcmAudio[] = [];
    for (const bytes of files) sequential.push(await decodeAudio(bytes));
    const concurrent = await Promise.all([...files, ...files].map((bytes) => decodeAudio(bytes)));
    concurrent.forEach((audio, i) => assert.deepEqual(audio.samples, sequential[i % files.length].samples));
  });

  test('m4a without ffmpeg is UnsupportedAudioError', async () => {
    const m4a = entries.find((e) => e.codec === 'aac');
    assert.ok(m4a, 'the corpus has an AAC (m4a) file');
    const bytes = new Uint8Array(readFileSync(join(CORPUS, m4a.file)));
    await assert.rejects(decodeAudio(bytes, { contentType: 'audio/mp4' }, { ffmpeg: false }), UnsupportedAudioError);
  });

  test('every encoding of the jfk recording carries the same speech', () => {
    const reference = decoded.get('formats/jfk.flac');
    assert.ok(reference, 'formats/jfk.flac was decoded above');
    assert.ok(decoded.size >= 3);
    for (const [file, env] of decoded) {
      const similarity = envelopeSimilarity(reference, env);
      assert.ok(similarity > 0.9, `${file}: loudness envelope correlation ${similarity}`);
    }
  });
});

describe('decodeAudio: bytes that are not audio', () => {
  const wav = () => ffmpeg(['-f', 'f32le', '-ar', '16000', '-ac', '1', '-i', 'pipe:0', '-c:a', 'pcm_s16le', '-f', 'wav', 'pipe:1'], f32Bytes(source));
  const mp3 = () => ffmpeg(['-f', 'f32le', '-ar', '16000', '-ac', '1', '-i', 'pipe:0', '-c:a', 'libmp3lame', '-f', 'mp3', 'pipe:1'], f32Bytes(source));

  const randomBytes = (n: number, seed: number) => {
    const out = new Uint8Array(n);
    let x = seed;
    for (let i = 0; i < n; i++) {
      x = (x * 1103515245 + 12345) >>> 0;
      out[i] = x >>> 24;
    }
    return out;
  };

  test('empty input', async () => {
    await assert.rejects(decodeAudio(new Uint8Array(0)), UnsupportedAudioError);
  });

  test('random bytes, with and without ffmpeg', async () => {
    for (const seed of [1, 2, 3]) {
      await assert.rejects(decodeAudio(randomBytes(5000, seed)), UnsupportedAudioError);
      await assert.rejects(decodeAudio(randomBytes(5000, seed), {}, { ffmpeg: false }), UnsupportedAudioError);
    }
  });

  test('text labelled as audio', async () => {
    const text = new TextEncoder().encode('<html><body>not audio at all</body></html>'.repeat(50));
    await assert.rejects(decodeAudio(text, { contentType: 'audio/wav' }), UnsupportedAudioError);
  });

  test('a WAV cut inside its header, and one with no sample frame', { skip: FFMPEG_MISSING }, async () => {
    const bytes = wav();
    await assert.rejects(decodeAudio(bytes.subarray(0, 30)), UnsupportedAudioError);
    await assert.rejects(decodeAudio(bytes.subarray(0, dataStart(bytes) + 1)), UnsupportedAudioError);
    await assert.rejects(decodeAudio(bytes.subarray(0, 30), {}, { ffmpeg: false }), UnsupportedAudioError);
  });

  test('a WAV cut in its data decodes the part that is there', { skip: FFMPEG_MISSING }, async () => {
    const bytes = wav();
    const audio = await decodeAudio(bytes.subarray(0, dataStart(bytes) + 16000));
    assert.equal(audio.samples.length, 8000);
  });

  test('magic bytes followed by garbage, for every native container', async () => {
    const ascii = (text: string) => new TextEncoder().encode(text);
    const magics: Record<string, Uint8Array> = {
      flac: ascii('fLaC'),
      ogg: ascii('OggS'),
      'ogg opus': Uint8Array.from([...ascii('OggS'), 0, 2, ...new Array(20).fill(0), 1, 19, ...ascii('OpusHead')]),
      matroska: Uint8Array.from([0x1a, 0x45, 0xdf, 0xa3]),
      id3: Uint8Array.from([...ascii('ID3'), 4, 0, 0, 0, 0, 0, 0]),
      aiff: Uint8Array.from([...ascii('FORM'), 0, 0, 0x4e, 0x20, ...ascii('AIFF')]),
      riff: Uint8Array.from([...ascii('RIFF'), 0, 0, 0x4e, 0x20, ...ascii('WAVE')]),
    };
    for (const [name, magic] of Object.entries(magics)) {
      for (const seed of [11, 12]) {
        const bytes = new Uint8Array(20000);
        bytes.set(randomBytes(bytes.length, seed), 0);
        bytes.set(magic, 0);
        await assert.rejects(decodeAudio(bytes, {}, { ffmpeg: false }), UnsupportedAudioError, name);
      }
      await assert.rejects(decodeAudio(magic, {}, { ffmpeg: false }), UnsupportedAudioError, `${name} magic only`);
    }
  });

  test('files cut before their first audio frame', { skip: FFMPEG_MISSING }, async () => {
    const prefixes: Record<string, Uint8Array> = {
      wav: wav().subarray(0, dataStart(wav())),
      mp3: mp3().subarray(0, 100),
      flac: encodeCase('flac').subarray(0, 42),
      'ogg opus': encodeCase('ogg opus').subarray(0, 47),
      aiff: encodeCase('aiff s16').subarray(0, 54),
    };
    for (const [name, prefix] of Object.entries(prefixes)) {
      await assert.rejects(decodeAudio(prefix), UnsupportedAudioError, name);
    }
  });
});

function encodeCase(name: string): Uint8Array {
  const c = cases.find((x) => x.name === name);
  assert.ok(c);
  return encode(c);
}

/** Offset of the first sample of a WAV file (ffmpeg adds a LIST chunk before `data`). */
function dataStart(wav: Uint8Array): number {
  const at = Buffer.from(wav).indexOf('data');
  assert.ok(at > 0);
  return at + 8;
}
