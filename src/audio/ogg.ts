/**
 * Ogg pages to packets (RFC 3533), for the Opus decoder. A generator over the caller's bytes: no
 * packet is copied unless it spans pages, and nothing is held per packet, so a file of millions
 * of tiny packets costs no memory to walk. Only the first logical stream is read.
 */
const CAPTURE = [0x4f, 0x67, 0x67, 0x53]; // "OggS"

function isCapture(bytes: Uint8Array, at: number): boolean {
  return bytes[at] === CAPTURE[0] && bytes[at + 1] === CAPTURE[1] && bytes[at + 2] === CAPTURE[2] && bytes[at + 3] === CAPTURE[3];
}

/**
 * The packets of the first logical stream, in order. Bytes between pages are skipped to the next
 * capture pattern; a packet cut by the end of the file or by a lost page is dropped.
 */
export function* oggPackets(bytes: Uint8Array): Generator<Uint8Array> {
  let serial: number | undefined;
  let pending: Uint8Array[] = [];
  let at = 0;
  while (at + 27 <= bytes.length) {
    if (!isCapture(bytes, at) || bytes[at + 4] !== 0) {
      const next = indexOfCapture(bytes, at + 1);
      if (next < 0) return;
      at = next;
      continue;
    }
    const continued = (bytes[at + 5] & 1) !== 0;
    const pageSerial = (bytes[at + 14] | (bytes[at + 15] << 8) | (bytes[at + 16] << 16) | (bytes[at + 17] << 24)) >>> 0;
    const segments = bytes[at + 26];
    let body = at + 27 + segments;
    if (body > bytes.length) return;
    let bodyLength = 0;
    for (let i = 0; i < segments; i++) bodyLength += bytes[at + 27 + i];
    const next = body + bodyLength;
    if (next > bytes.length) return;
    serial ??= pageSerial;
    if (pageSerial === serial) {
      if (!continued) pending = [];
      for (let i = 0; i < segments; i++) {
        const lace = bytes[at + 27 + i];
        pending.push(bytes.subarray(body, body + lace));
        body += lace;
        if (lace < 255) {
          yield pending.length === 1 ? pending[0] : new Uint8Array(Buffer.concat(pending));
          pending = [];
        }
      }
    }
    at = next;
  }
}

function indexOfCapture(bytes: Uint8Array, from: number): number {
  for (let at = bytes.indexOf(CAPTURE[0], from); at >= 0; at = bytes.indexOf(CAPTURE[0], at + 1)) {
    if (isCapture(bytes, at)) return at;
  }
  return -1;
}

/**
 * Samples between the first and the last granule position of the first logical stream (pages
 * that end no packet carry none): the stream's length less its first page, so never more than
 * the audio there is, even for a stream that does not start at 0. Walks page headers only.
 */
export function oggGranuleSpan(bytes: Uint8Array): number {
  let serial: number | undefined;
  let first: number | undefined;
  let last = 0;
  for (let at = indexOfCapture(bytes, 0); at >= 0 && at + 27 <= bytes.length; ) {
    const segments = bytes[at + 26];
    let bodyLength = 0;
    for (let i = 0; i < segments && at + 27 + i < bytes.length; i++) bodyLength += bytes[at + 27 + i];
    const view = new DataView(bytes.buffer, bytes.byteOffset + at, 27);
    const pageSerial = view.getUint32(14, true);
    serial ??= pageSerial;
    const low = view.getUint32(6, true);
    const high = view.getUint32(10, true);
    const hasGranule = !(low === 0xffffffff && high === 0xffffffff);
    if (pageSerial === serial && hasGranule && (low !== 0 || high !== 0)) {
      const granule = high * 2 ** 32 + low;
      first ??= granule;
      last = granule;
    }
    const next = at + 27 + segments + bodyLength;
    at = isCapture(bytes, next) ? next : indexOfCapture(bytes, at + 1);
  }
  return first === undefined ? 0 : Math.max(0, last - first);
}
