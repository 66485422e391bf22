/** Test signals, spectrum checks and an ffmpeg runner shared by the audio tests. */
import { spawnSync } from 'node:child_process';
import { skipWhenMissing } from '../helpers/skip.js';

export const FFMPEG_MISSING = skipWhenMissing(spawnSync('ffmpeg', ['-version']).status !== 0 && 'needs ffmpeg on the PATH (apt-get install ffmpeg)');

/** 0.5·sin(440 Hz) + 0.2·sin(1330 Hz): a dominant tone plus a second one, so shape matters too. */
export function twoTone(sampleRate: number, seconds: number): Float32Array {
  const out = new Float32Array(Math.round(sampleRate * seconds));
  for (let i = 0; i < out.length; i++) {
    const t = i / sampleRate;
    out[i] = 0.5 * Math.sin(2 * Math.PI * 440 * t) + 0.2 * Math.sin(2 * Math.PI * 1330 * t);
  }
  return out;
}

export function sine(frequency: number, sampleRate: number, seconds: number, amplitude = 0.5): Float32Array {
  const out = new Float32Array(Math.round(sampleRate * seconds));
  for (let i = 0; i < out.length; i++) out[i] = amplitude * Math.sin((2 * Math.PI * frequency * i) / sampleRate);
  return out;
}

/**
 * Frequency (Hz) of the strongest DFT bin between 50 Hz and 3 kHz (where the test tones are) of
 * a Hann-windowed 4096-sample window in the middle. A naive DFT: the band keeps it fast.
 */
export function dominantFrequency(samples: Float32Array, sampleRate: number): number {
  const n = Math.min(4096, samples.length);
  const start = Math.floor((samples.length - n) / 2);
  let bestBin = 0;
  let bestPower = -1;
  const first = Math.max(1, Math.floor((50 * n) / sampleRate));
  const last = Math.min(n / 2, Math.ceil((3000 * n) / sampleRate));
  for (let k = first; k < last; k++) {
    let re = 0;
    let im = 0;
    const w = (2 * Math.PI * k) / n;
    for (let i = 0; i < n; i++) {
      const x = samples[start + i] * (0.5 - 0.5 * Math.cos((2 * Math.PI * i) / n));
      re += x * Math.cos(w * i);
      im -= x * Math.sin(w * i);
    }
    const power = re * re + im * im;
    if (power > bestPower) {
      bestPower = power;
      bestBin = k;
    }
  }
  return (bestBin * sampleRate) / n;
}

/** Pearson correlation of two equally long signals (or their common prefix). */
export function correlation(a: Float32Array, b: Float32Array): number {
  const n = Math.min(a.length, b.length);
  let ma = 0;
  let mb = 0;
  for (let i = 0; i < n; i++) {
    ma += a[i];
    mb += b[i];
  }
  ma /= n;
  mb /= n;
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < n; i++) {
    const x = a[i] - ma;
    const y = b[i] - mb;
    ab += x * y;
    aa += x * x;
    bb += y * y;
  }
  return ab / Math.sqrt(aa * bb);
}

/** RMS per 20 ms frame: a loudness envelope that survives lossy codecs and resampling. */
export function envelope(samples: Float32Array, sampleRate: number): Float32Array {
  const frame = Math.round(sampleRate * 0.02);
  const out = new Float32Array(Math.floor(samples.length / frame));
  for (let f = 0; f < out.length; f++) {
    let sum = 0;
    for (let i = f * frame; i < (f + 1) * frame; i++) sum += samples[i] * samples[i];
    out[f] = Math.sqrt(sum / frame);
  }
  return out;
}

/** Best correlation of two envelopes over small lags (codec delay differs between formats). */
export function envelopeSimilarity(a: Float32Array, b: Float32Array, maxLag = 5): number {
  let best = -1;
  for (let lag = -maxLag; lag <= maxLag; lag++) {
    const x = lag >= 0 ? a.subarray(lag) : a;
    const y = lag >= 0 ? b : b.subarray(-lag);
    best = Math.max(best, correlation(x, y));
  }
  return best;
}

/** Float samples as raw little-endian f32 bytes, for `ffmpeg -f f32le -i pipe:0`. */
export function f32Bytes(samples: Float32Array): Uint8Array {
  return new Uint8Array(samples.buffer.slice(samples.byteOffset, samples.byteOffset + samples.byteLength));
}

/** Runs ffmpeg with `input` on stdin and returns stdout; throws with ffmpeg's message on failure. */
export function ffmpeg(args: string[], input?: Uint8Array): Uint8Array {
  const result = spawnSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', ...args], {
    input,
    maxBuffer: 256 * 1024 * 1024,
  });
  if (result.status !== 0) throw new Error(`ffmpeg ${args.join(' ')} failed: ${result.stderr.toString()}`);
  return new Uint8Array(result.stdout);
}
