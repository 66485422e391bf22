/**
 * G.711 companding (ITU-T G.711), written out by hand: it is a few lines and a table of 256
 * floats per law, so there is no reason to pull in a dependency for it.
 */

const MULAW_BIAS = 0x84;
const MULAW_CLIP = 32635;

/** One linear int16 sample to a mu-law byte (the classic Sun/CCITT reference algorithm). */
export function muLawFromInt16(sample: number): number {
  let s = sample | 0;
  const sign = s < 0 ? 0x80 : 0;
  if (sign) s = -s;
  if (s > MULAW_CLIP) s = MULAW_CLIP;
  s += MULAW_BIAS;
  let exponent = 7;
  for (let mask = 0x4000; (s & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  const mantissa = (s >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}

/** One mu-law byte to a linear int16 sample. */
export function muLawToInt16(byte: number): number {
  const u = ~byte & 0xff;
  const exponent = (u >> 4) & 0x07;
  const mantissa = u & 0x0f;
  const magnitude = (((mantissa << 3) + MULAW_BIAS) << exponent) - MULAW_BIAS;
  return (u & 0x80 ? -magnitude : magnitude) | 0; // `| 0`: code 0x7f is zero, not -0
}

/** One linear int16 sample to an A-law byte (the Sun/CCITT reference: 13-bit magnitude, segment, 4-bit step, even bits inverted). */
export function aLawFromInt16(sample: number): number {
  let magnitude = (sample | 0) >> 3;
  let mask = 0xd5;
  if (magnitude < 0) {
    mask = 0x55;
    magnitude = -magnitude - 1;
  }
  let segment = 0;
  while (segment < 8 && magnitude > (0x20 << segment) - 1) segment++;
  if (segment >= 8) return 0x7f ^ mask;
  const step = segment < 2 ? (magnitude >> 1) & 0x0f : (magnitude >> segment) & 0x0f;
  return ((segment << 4) | step) ^ mask;
}

/** One A-law byte to a linear int16 sample. */
export function aLawToInt16(byte: number): number {
  const a = (byte ^ 0x55) & 0xff;
  const exponent = (a >> 4) & 0x07;
  const mantissa = a & 0x0f;
  let magnitude = exponent === 0 ? (mantissa << 4) + 8 : ((mantissa << 4) + 0x108) << (exponent - 1);
  // A-law stores the sign bit inverted relative to mu-law: set means positive.
  if ((a & 0x80) === 0) magnitude = -magnitude;
  return magnitude;
}

function buildTable(toInt16: (byte: number) => number): Float32Array {
  const table = new Float32Array(256);
  for (let i = 0; i < 256; i++) table[i] = toInt16(i) / 32768;
  return table;
}

/** Float value of each of the 256 mu-law and A-law bytes. */
export const muLawTable = buildTable(muLawToInt16);
export const aLawTable = buildTable(aLawToInt16);

/** Float samples (clamped to [-1, 1]) to mu-law bytes. */
export function encodeMuLaw(samples: Float32Array): Uint8Array {
  return encodeCompanded(samples, muLawFromInt16);
}

function encodeCompanded(samples: Float32Array, fromInt16: (sample: number) => number): Uint8Array {
  const out = new Uint8Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    const s = samples[i];
    const clamped = s > 1 ? 1 : s < -1 ? -1 : s || 0; // `|| 0` also turns NaN into silence
    out[i] = fromInt16(Math.round(clamped * 32767));
  }
  return out;
}

/** Float samples (clamped to [-1, 1]) to A-law bytes. */
export function encodeALaw(samples: Float32Array): Uint8Array {
  return encodeCompanded(samples, aLawFromInt16);
}

/** Mu-law bytes to float samples in [-1, 1]. */
export function decodeMuLaw(bytes: Uint8Array): Float32Array {
  const out = new Float32Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) out[i] = muLawTable[bytes[i]];
  return out;
}

/** A-law bytes to float samples in [-1, 1]. */
export function decodeALaw(bytes: Uint8Array): Float32Array {
  const out = new Float32Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) out[i] = aLawTable[bytes[i]];
  return out;
}
