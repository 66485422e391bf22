// The microphone's samples (float, mono) in each encoding the live transcription socket takes, one
// binary frame per piece: 16-bit or 32-bit float PCM, G.711 μ-law or A-law, and Opus from the
// browser's WebCodecs encoder, as raw packets (one a frame) or in Ogg pages. Plain functions, so
// the G.711 and Ogg code can be checked against the server's decoders outside a browser.

const clamp = (x) => Math.max(-1, Math.min(1, x));
const toInt16 = (x) => (x < 0 ? Math.round(clamp(x) * 0x8000) : Math.round(clamp(x) * 0x7fff));

/** G.711 μ-law of one 16-bit sample (the ITU-T reference's segment search). */
export function muLawOf(sample) {
  const BIAS = 0x84;
  const CLIP = 32635;
  const sign = sample < 0 ? 0x80 : 0;
  let magnitude = Math.min(CLIP, Math.abs(sample)) + BIAS;
  let exponent = 7;
  for (let mask = 0x4000; (magnitude & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  const mantissa = (magnitude >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}

/** G.711 A-law of one 16-bit sample. */
export function aLawOf(sample) {
  let value = sample >> 3;
  let mask = 0xd5;
  if (value < 0) {
    mask = 0x55;
    value = -value - 1;
  }
  let segment = 0;
  while (segment < 8 && value > (0x20 << segment) - 1) segment++;
  if (segment >= 8) return 0x7f ^ mask;
  const quantised = segment < 2 ? (value >> 1) & 0x0f : (value >> segment) & 0x0f;
  return ((segment << 4) | quantised) ^ mask;
}

/** Encoders of whole blocks of samples, by encoding (Opus aside). */
export const blockEncoders = {
  linear16(samples) {
    const view = new DataView(new ArrayBuffer(samples.length * 2));
    samples.forEach((x, i) => view.setInt16(i * 2, toInt16(x), true));
    return new Uint8Array(view.buffer);
  },
  linear32(samples) {
    const view = new DataView(new ArrayBuffer(samples.length * 4));
    samples.forEach((x, i) => view.setFloat32(i * 4, clamp(x), true));
    return new Uint8Array(view.buffer);
  },
  mulaw: (samples) => Uint8Array.from(samples, (x) => muLawOf(toInt16(x))),
  alaw: (samples) => Uint8Array.from(samples, (x) => aLawOf(toInt16(x))),
};

// --- Ogg pages (RFC 3533) of an Opus stream (RFC 7845) ----------------------------------
const CRC_TABLE = Array.from({ length: 256 }, (_, i) => {
  let r = i << 24;
  for (let bit = 0; bit < 8; bit++) r = r & 0x80000000 ? (r << 1) ^ 0x04c11db7 : r << 1;
  return r >>> 0;
});

function oggCrc(bytes) {
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) ^ CRC_TABLE[((crc >>> 24) ^ byte) & 0xff]) >>> 0;
  return crc;
}

const BOS = 0x02;
const EOS = 0x04;
/** Samples at 48 kHz a decoder drops at the start (the encoder's look-ahead; libopus uses 312). */
const PRE_SKIP = 312;

/** Ogg pages of one Opus stream: the two header pages first, then one page per packet. */
export class OggOpusPager {
  constructor(inputRate, serial = Math.floor(Math.random() * 2 ** 32)) {
    this.serial = serial;
    this.sequence = 0;
    this.granule = 0;
    this.inputRate = inputRate;
  }

  /** OpusHead and OpusTags, each on its own page. */
  headers() {
    const head = new Uint8Array(19);
    const view = new DataView(head.buffer);
    head.set(new TextEncoder().encode('OpusHead'));
    head[8] = 1; // version
    head[9] = 1; // channels
    view.setUint16(10, PRE_SKIP, true);
    view.setUint32(12, this.inputRate, true);
    // Output gain 0 and channel mapping family 0 (mono or stereo) are the zeros left.
    const vendor = new TextEncoder().encode('Parley playground');
    const tags = new Uint8Array(8 + 4 + vendor.length + 4);
    tags.set(new TextEncoder().encode('OpusTags'));
    new DataView(tags.buffer).setUint32(8, vendor.length, true);
    tags.set(vendor, 12);
    return [this.page(head, 0, BOS), this.page(tags, 0, 0)];
  }

  /** A page holding one packet of `samples48k` samples at 48 kHz; `last` ends the stream. */
  packet(bytes, samples48k, last = false) {
    this.granule += samples48k;
    return this.page(bytes, this.granule, last ? EOS : 0);
  }

  page(packet, granule, flags) {
    const lacing = [];
    let left = packet.length;
    while (left >= 255) {
      lacing.push(255);
      left -= 255;
    }
    lacing.push(left);
    const page = new Uint8Array(27 + lacing.length + packet.length);
    const view = new DataView(page.buffer);
    page.set(new TextEncoder().encode('OggS'));
    page[5] = flags;
    view.setBigUint64(6, BigInt(granule), true);
    view.setUint32(14, this.serial, true);
    view.setUint32(18, this.sequence++, true);
    page[26] = lacing.length;
    page.set(lacing, 27);
    page.set(packet, 27 + lacing.length);
    view.setUint32(22, oggCrc(page), true);
    return page;
  }
}

/**
 * An encoder for `encoding` at `rate`: push(samples) encodes a block, each frame going to
 * send(bytes); flush() sends what the encoder still holds; close() frees it.
 */
export async function createLiveEncoder(encoding, rate, send, onError) {
  const block = blockEncoders[encoding];
  if (block) return { push: (samples) => send(block(samples)), flush: async () => {}, close: () => {} };
  if (encoding !== 'opus' && encoding !== 'ogg_opus') throw new Error(`No encoder for ${encoding}`);
  if (typeof AudioEncoder === 'undefined') throw new Error('This browser has no Opus encoder (WebCodecs, on https or localhost only).');
  const config = { codec: 'opus', sampleRate: rate, numberOfChannels: 1, bitrate: 32_000 };
  if (!(await AudioEncoder.isConfigSupported(config)).supported) throw new Error(`This browser cannot encode Opus at ${rate} Hz.`);
  const pager = encoding === 'ogg_opus' ? new OggOpusPager(rate) : undefined;
  if (pager) for (const page of pager.headers()) send(page);
  const encoder = new AudioEncoder({
    output(chunk) {
      const bytes = new Uint8Array(chunk.byteLength);
      chunk.copyTo(bytes);
      // The chunk's duration is in microseconds; a 20 ms packet is 960 samples at 48 kHz.
      send(pager ? pager.packet(bytes, Math.round(((chunk.duration ?? 20_000) * 48) / 1000)) : bytes);
    },
    error: onError,
  });
  encoder.configure(config);
  let frames = 0;
  return {
    push(samples) {
      encoder.encode(new AudioData({ format: 'f32', sampleRate: rate, numberOfChannels: 1, numberOfFrames: samples.length, timestamp: Math.round((frames * 1e6) / rate), data: samples }));
      frames += samples.length;
    },
    flush: () => (encoder.state === 'configured' ? encoder.flush() : Promise.resolve()),
    close: () => encoder.state !== 'closed' && encoder.close(),
  };
}
