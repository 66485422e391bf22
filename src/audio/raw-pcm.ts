/**
 * Headerless audio, which no magic bytes can identify: only the Content-Type (or a `.pcm`/`.raw`
 * file name) says what it is. Parley's own `output_format=pcm` and `mulaw` streams are such
 * bytes, so a client can send them straight back for transcription.
 */
import { UnsupportedAudioError } from '../errors.js';
import { decodeALaw, decodeMuLaw } from './g711.js';
import type { PcmAudio } from './pcm.js';

type RawEncoding = 's16le' | 's16be' | 'mulaw' | 'alaw';

interface RawFormat {
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
  const known = ENCODING_BY_TYPE[type];
  if (!known) {
    return /\.(pcm|raw)$/i.test(filename ?? '') ? { encoding: 's16le', sampleRate: 16000, channels: 1 } : null;
  }
  const values = new Map(params.map((p) => p.split('=').map((s) => s.trim()) as [string, string]));
  const sampleRate = Number(values.get('rate') ?? values.get('sample_rate') ?? known.defaultRate);
  const channels = Number(values.get('channels') ?? 1);
  if (!Number.isInteger(sampleRate) || sampleRate < 1000 || sampleRate > 384000) {
    throw new UnsupportedAudioError(`Invalid sample rate in Content-Type '${contentType}'`);
  }
  if (!Number.isInteger(channels) || channels < 1 || channels > 32) {
    throw new UnsupportedAudioError(`Invalid channel count in Content-Type '${contentType}'`);
  }
  return { encoding: known.encoding, sampleRate, channels };
}

/** Decodes headerless samples, mixing interleaved channels down to mono. */
export function parseRawPcm(bytes: Uint8Array, format: RawFormat): PcmAudio {
  const { encoding, channels, sampleRate } = format;
  let interleaved: Float32Array;
  if (encoding === 'mulaw') interleaved = decodeMuLaw(bytes);
  else if (encoding === 'alaw') interleaved = decodeALaw(bytes);
  else {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const littleEndian = encoding === 's16le';
    interleaved = new Float32Array(bytes.length >> 1);
    for (let i = 0; i < interleaved.length; i++) interleaved[i] = view.getInt16(i * 2, littleEndian) / 32768;
  }
  const frames = Math.floor(interleaved.length / channels);
  if (frames === 0) throw new UnsupportedAudioError('Raw audio holds no samples');
  if (channels === 1) return { samples: interleaved, sampleRate };
  const samples = new Float32Array(frames);
  for (let i = 0, at = 0; i < frames; i++) {
    let sum = 0;
    for (let c = 0; c < channels; c++) sum += interleaved[at++];
    samples[i] = sum / channels;
  }
  return { samples, sampleRate };
}
