/**
 * Hand-made malformed audio: headers that lie, declare impossible formats, or stop short. Used by
 * test/http/routes/transcription-hostile.test.ts (each case by name) and by the fuzz generator.
 */

export interface WavFields {
  formatTag?: number;
  channels?: number;
  sampleRate?: number;
  bitsPerSample?: number;
  blockAlign?: number;
  /** What the data chunk's size field says (default: the real size). */
  declaredDataBytes?: number;
  /** What the fmt chunk's size field says (default 16). */
  declaredFmtBytes?: number;
}

/** A WAV file with the given header fields over `data`, whatever they say. */
export function wav(data: Uint8Array, fields: WavFields = {}): Uint8Array {
  const { formatTag = 1, channels = 1, sampleRate = 16_000, bitsPerSample = 16 } = fields;
  const blockAlign = fields.blockAlign ?? (channels * Math.ceil(bitsPerSample / 8)) % 65_536;
  const out = Buffer.alloc(44 + data.length);
  out.write('RIFF', 0, 'latin1');
  out.writeUInt32LE(36 + data.length, 4);
  out.write('WAVEfmt ', 8, 'latin1');
  out.writeUInt32LE(fields.declaredFmtBytes ?? 16, 16);
  out.writeUInt16LE(formatTag, 20);
  out.writeUInt16LE(channels, 22);
  out.writeUInt32LE(sampleRate >>> 0, 24);
  out.writeUInt32LE(((sampleRate * blockAlign) >>> 0) % 2 ** 32, 28);
  out.writeUInt16LE(blockAlign, 32);
  out.writeUInt16LE(bitsPerSample, 34);
  out.write('data', 36, 'latin1');
  out.writeUInt32LE((fields.declaredDataBytes ?? data.length) >>> 0, 40);
  out.set(data, 44);
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}

/** `seconds` of a quiet 220 Hz tone as 16-bit samples. */
export function tone16(seconds: number, sampleRate = 16_000): Uint8Array {
  const n = Math.round(seconds * sampleRate);
  const out = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) out.writeInt16LE(Math.round(3000 * Math.sin((2 * Math.PI * 220 * i) / sampleRate)), i * 2);
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}

/** Float32 samples where every `every`-th one is `value` (NaN, ±Infinity). */
export function floatsWith(value: number, count = 16_000, every = 100): Uint8Array {
  const samples = new Float32Array(count);
  for (let i = 0; i < count; i++) samples[i] = i % every === 0 ? value : 0.1 * Math.sin(i / 10);
  return new Uint8Array(samples.buffer);
}

/** An AIFF file: COMM with the given fields, SSND over `data`. */
export function aiff(data: Uint8Array, fields: { channels?: number; sampleRate?: number; bitsPerSample?: number; frames?: number } = {}): Uint8Array {
  const { channels = 1, sampleRate = 16_000, bitsPerSample = 16 } = fields;
  const frames = fields.frames ?? Math.floor(data.length / (channels * Math.ceil(bitsPerSample / 8) || 1));
  const out = Buffer.alloc(12 + 26 + 16 + data.length);
  out.write('FORM', 0, 'latin1');
  out.writeUInt32BE(out.length - 8, 4);
  out.write('AIFFCOMM', 8, 'latin1');
  out.writeUInt32BE(18, 16);
  out.writeUInt16BE(channels, 20);
  out.writeUInt32BE(frames >>> 0, 22);
  out.writeUInt16BE(bitsPerSample, 26);
  writeExtended(out, 28, sampleRate);
  out.write('SSND', 38, 'latin1');
  out.writeUInt32BE(8 + data.length, 42);
  out.set(data, 54);
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}

/** An 80-bit IEEE extended float (AIFF's sample rate field); 0 and non-finite values as such. */
function writeExtended(out: Buffer, at: number, value: number): void {
  if (value === 0 || !Number.isFinite(value)) {
    out.writeUInt16BE(Number.isFinite(value) ? 0 : 0x7fff, at);
    return;
  }
  const exponent = Math.floor(Math.log2(Math.abs(value)));
  out.writeUInt16BE((value < 0 ? 0x8000 : 0) | (exponent + 16383), at);
  const mantissa = Math.abs(value) / 2 ** exponent; // in [1, 2)
  out.writeUInt32BE(Math.floor(mantissa * 2 ** 31) >>> 0, at + 2);
  out.writeUInt32BE(Math.floor(((mantissa * 2 ** 31) % 1) * 2 ** 32) >>> 0, at + 6);
}

/** A FLAC STREAMINFO-only file declaring the given rate, channels and bit depth (no frames). */
export function flacHeader(fields: { sampleRate?: number; channels?: number; bitsPerSample?: number; totalSamples?: number } = {}): Uint8Array {
  const { sampleRate = 16_000, channels = 1, bitsPerSample = 16, totalSamples = 0 } = fields;
  const info = new Uint8Array(34);
  const view = new DataView(info.buffer);
  view.setUint16(0, 4096);
  view.setUint16(2, 4096);
  info[10] = (sampleRate >> 12) & 0xff;
  info[11] = (sampleRate >> 4) & 0xff;
  info[12] = ((sampleRate & 0xf) << 4) | (((channels - 1) & 7) << 1) | (((bitsPerSample - 1) >> 4) & 1);
  info[13] = (((bitsPerSample - 1) & 0xf) << 4) | (Math.floor(totalSamples / 2 ** 32) & 0xf);
  view.setUint32(14, totalSamples >>> 0);
  return Uint8Array.from([...Buffer.from('fLaC'), 0x80, 0, 0, 34, ...info]);
}
