/**
 * Headerless audio, which no magic bytes can identify: only the Content-Type (or a `.pcm`/`.raw`
 * file name) says what it is. Parley's own `output_format=pcm` and `mulaw` streams are such
 * bytes, so a client can send them straight back for transcription.
 */
import { UnsupportedAudioError } from '../errors.js';
import { aLawTable, muLawTable } from './g711.js';
import { checkDeclaredFormat } from './pcm-collector.js';
import type { PcmSource } from './pcm.js';
import { mixFrames } from './wav.js';

type RawEncoding = 's16le' | 's16be' | 'mulaw' | 'alaw';

export interface RawFormat {
  encoding: RawEncoding;
  sampleRate: number;
  channels: number;
}

const ENCODING_BY_TYPE: Record<string, { encoding: RawEncoding; defaultRate: number }> = {
  'audio/pcm': { encoding: 's16le', defaultRate: 16000 },
  'audio/raw': { encoding: 's16le', defaultRate: 16000 },
  'audio/x-raw': { encoding: 's16le', defaultRate: 16000 },
  'audio/x-pcm': { encoding: 's16le', defaultRate: 16000 },
  // RFC 2586: L16 is network byte order (big-endian).
  'audio/l16': { encoding: 's16be', defaultRate: 16000 },
  'audio/basic': { encoding: 'mulaw', defaultRate: 8000 },
  'audio/pcmu': { encoding: 'mulaw', defaultRate: 8000 },
  'audio/x-mulaw': { encoding: 'mulaw', defaultRate: 8000 },
  'audio/mulaw': { encoding: 'mulaw', defaultRate: 8000 },
  'audio/pcma': { encoding: 'alaw', defaultRate: 8000 },
  'audio/x-alaw': { encoding: 'alaw', defaultRate: 8000 },
  'audio/alaw': { encoding: 'alaw', defaultRate: 8000 },
};

/**
 * The raw format named by a Content-Type such as `audio/pcm;rate=24000` or `audio/L16; rate=8000;
 * channels=2`, or by a `.pcm`/`.raw` file name (16-bit little-endian, 16 kHz, mono), else null.
 * `rate` and `sample_rate` are both accepted as the rate parameter.
 */
export function rawFormatFromHint(contentType?: string, filename?: string): RawFormat | null {
  const [type = '', ...params] = (contentType ?? '').toLowerCase().split(';').map((s) => s.trim());
  // Own keys only: a Content-Type of `constructor` must not find what every object inherits.
  const known = Object.hasOwn(ENCODING_BY_TYPE, type) ? ENCODING_BY_TYPE[type] : undefined;
  if (!known) {
    return /\.(pcm|raw)$/i.test(filename ?? '') ? { encoding: 's16le', sampleRate: 16000, channels: 1 } : null;
  }
  const values = new Map(params.map((p) => p.split('=').map((s) => s.trim()) as [string, string]));
  const sampleRate = Number(values.get('rate') ?? values.get('sample_rate') ?? known.defaultRate);
  const channels = Number(values.get('channels') ?? 1);
  checkDeclaredFormat(`Content-Type '${contentType}'`, sampleRate, channels);
  return { encoding: known.encoding, sampleRate, channels };
}

/** Headerless samples, read a block at a time and mixed down to mono. */
export function openRawPcm(bytes: Uint8Array, format: RawFormat): PcmSource {
  const { encoding, channels, sampleRate } = format;
  const width = encoding === 's16le' || encoding === 's16be' ? 2 : 1;
  const frames = Math.floor(bytes.length / (width * channels));
  if (frames === 0) throw new UnsupportedAudioError('Raw audio holds no samples');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const littleEndian = encoding === 's16le';
  const table = encoding === 'mulaw' ? muLawTable : aLawTable;
  const read = width === 2 ? (at: number) => view.getInt16(at, littleEndian) / 32768 : (at: number) => table[bytes[at]];
  return { sampleRate, frames, read: (from, to) => mixFrames(read, from, Math.min(to, frames), channels, width, bytes.length) };
}
