/**
 * Wyoming's framing: each event is one line of JSON (`type`, optional `data`, `data_length`,
 * `payload_length`, `version`), then `data_length` bytes of JSON merged into `data`, then
 * `payload_length` bytes of payload (audio). The reader is bounded: a header line longer than
 * maxHeaderBytes cannot be resynchronised and ends the connection; extra data or a payload longer
 * than maxPayloadBytes, or data of more than maxDataValues JSON values, is skipped (read and
 * dropped, never parsed) and reported, and the stream goes on at the next event; a header that is
 * not a JSON object with a `type` is reported and skipped. The data and payload of event types the
 * caller does not use are dropped unread.
 */

export interface WyomingEvent {
  type: string;
  data: Record<string, unknown>;
  payload?: Buffer;
}

/** The protocol version this server writes (the version of the definitions it follows). */
export const WYOMING_VERSION = '1.8.0';

export function encodeEvent(type: string, data: Record<string, unknown> = {}, payload?: Uint8Array): Buffer {
  const header: Record<string, unknown> = { type, version: WYOMING_VERSION };
  const dataBytes = Object.keys(data).length ? Buffer.from(JSON.stringify(data), 'utf8') : undefined;
  if (dataBytes) header.data_length = dataBytes.length;
  if (payload?.length) header.payload_length = payload.length;
  return Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`, 'utf8'), ...(dataBytes ? [dataBytes] : []), ...(payload?.length ? [Buffer.from(payload)] : [])]);
}

/** What the reader reports besides events: a problem the client is told about as an `error` event. */
export type ReadProblem = { code: 'malformed-event' | 'payload-too-large'; text: string; fatal: boolean };

export interface ReaderLimits {
  maxHeaderBytes: number;
  /** Largest data and largest payload of one event. */
  maxPayloadBytes: number;
  /** Most JSON values the data bytes of one event may hold: a small text can parse to many objects. */
  maxDataValues: number;
  /** Whether events of `type` are used; the data bytes and payload of others are dropped unread. */
  handles(type: string): boolean;
}

type State =
  | { kind: 'header' }
  | { kind: 'body'; header: Record<string, unknown>; dataLength: number; payloadLength: number }
  | { kind: 'skip'; remaining: number };

/** Chunks smaller than this are copied together, so that bytes arriving a few at a time are not held as as many objects. */
const SMALL_CHUNK_BYTES = 4 * 1024;
const COALESCE_BYTES = 16 * 1024;
const NEWLINE = 0x0a;

function length(value: unknown): number | undefined {
  if (value === undefined || value === null) return 0;
  return Number.isSafeInteger(value) && (value as number) >= 0 ? (value as number) : undefined;
}

/**
 * JSON values in `json`, counted without parsing it and no further than `max`: one, plus one per
 * `{`, `[` and `,` outside strings (at least as many as the values it parses to).
 */
function countJsonValues(json: Buffer, max: number): number {
  let count = 1;
  let inString = false;
  for (let i = 0; i < json.length && count <= max; i++) {
    const byte = json[i]!;
    if (inString) {
      if (byte === 0x5c) i++;
      else if (byte === 0x22) inString = false;
    } else if (byte === 0x22) inString = true;
    else if (byte === 0x7b || byte === 0x5b || byte === 0x2c) count++;
  }
  return count;
}

/**
 * Incremental reader: push() bytes as they arrive, then take events (and problems) one at a time
 * with next(), so that no more of them are parsed than the caller is ready to handle. Each byte is
 * scanned for the end of a header line once, and copied at most once into a line or an event's data.
 */
export class EventReader {
  private chunks: Buffer[] = [];
  private bufferedBytes = 0;
  /** The buffer small chunks are copied into, and how much of it is used. */
  private spare: Buffer | undefined;
  private spareUsed = 0;
  /** How far the search for a header's newline got: bytes, and the chunk it stopped in with that chunk's start. */
  private scanned = 0;
  private scanChunk = 0;
  private scanChunkStart = 0;
  private state: State = { kind: 'header' };
  private failed = false;

  constructor(private readonly limits: ReaderLimits) {}

  /** Bytes held waiting to be read as events. */
  get heldBytes(): number {
    return this.bufferedBytes;
  }

  push(chunk: Buffer): void {
    if (this.failed || chunk.length === 0) return;
    this.bufferedBytes += chunk.length;
    if (chunk.length >= SMALL_CHUNK_BYTES) {
      this.chunks.push(chunk);
      return;
    }
    const last = this.chunks.at(-1);
    const spare = this.spare;
    const extendsSpare = spare && last && last.buffer === spare.buffer && last.byteOffset + last.length === spare.byteOffset + this.spareUsed;
    if (spare && extendsSpare && this.spareUsed + chunk.length <= spare.length) {
      chunk.copy(spare, this.spareUsed);
      this.spareUsed += chunk.length;
      this.chunks[this.chunks.length - 1] = spare.subarray(last.byteOffset - spare.byteOffset, this.spareUsed);
      return;
    }
    this.spare = Buffer.allocUnsafeSlow(COALESCE_BYTES);
    chunk.copy(this.spare);
    this.spareUsed = chunk.length;
    this.chunks.push(this.spare.subarray(0, this.spareUsed));
  }

  /** The next event or problem, or undefined until more bytes arrive. */
  next(): WyomingEvent | ReadProblem | undefined {
    if (this.failed) return undefined;
    for (;;) {
      const next = this.step();
      if (next === true) continue;
      if (next && isProblem(next) && next.fatal) {
        this.failed = true;
        this.chunks = [];
        this.bufferedBytes = 0;
        this.spare = undefined;
      }
      return next;
    }
  }

  /** The first n buffered bytes, out of the buffer: one copy when they span chunks, none when `keep` is false. */
  private take(n: number, keep = true): Buffer {
    this.bufferedBytes -= n;
    this.scanned = this.scanChunk = this.scanChunkStart = 0;
    const first = this.chunks[0];
    if (first && first.length >= n) {
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
      return first.subarray(0, n);
    }
    let count = 0;
    let got = 0;
    while (got < n) got += this.chunks[count++]!.length;
    const parts = this.chunks.splice(0, count);
    const over = got - n;
    if (over > 0) {
      const last = parts[count - 1]!;
      parts[count - 1] = last.subarray(0, last.length - over);
      this.chunks.unshift(last.subarray(last.length - over));
    }
    return keep ? Buffer.concat(parts, n) : Buffer.alloc(0);
  }

  /** Where the first newline is among the buffered bytes, or -1; bytes searched before are not searched again. */
  private findNewline(): number {
    let start = this.scanChunkStart;
    for (let i = this.scanChunk; i < this.chunks.length; i++) {
      const chunk = this.chunks[i]!;
      const at = chunk.indexOf(NEWLINE, Math.max(0, this.scanned - start));
      if (at >= 0) return start + at;
      // The last chunk may still grow (small chunks are copied onto it): the search goes on inside it.
      if (i === this.chunks.length - 1) break;
      start += chunk.length;
      this.scanChunk = i + 1;
      this.scanChunkStart = start;
    }
    this.scanned = this.bufferedBytes;
    return -1;
  }

  /** One step: an event, a problem, true (progress, nothing to report), or undefined (needs more bytes). */
  private step(): WyomingEvent | ReadProblem | true | undefined {
    const state = this.state;
    if (state.kind === 'skip') {
      if (this.bufferedBytes === 0) return undefined;
      const n = Math.min(state.remaining, this.bufferedBytes);
      this.take(n, false);
      state.remaining -= n;
      if (state.remaining === 0) this.state = { kind: 'header' };
      return true;
    }
    if (state.kind === 'header') {
      const newline = this.findNewline();
      if (newline < 0) {
        if (this.bufferedBytes > this.limits.maxHeaderBytes) {
          return { code: 'payload-too-large', text: `An event's JSON line is longer than ${this.limits.maxHeaderBytes} bytes: the connection closes`, fatal: true };
        }
        return undefined;
      }
      const line = this.take(newline + 1).subarray(0, newline).toString('utf8').trim();
      if (line === '') return true;
      let header: unknown;
      try {
        header = JSON.parse(line);
      } catch {
        return { code: 'malformed-event', text: 'An event line is not JSON: each event is one line of JSON with a "type"', fatal: false };
      }
      if (header === null || typeof header !== 'object' || Array.isArray(header) || typeof (header as { type?: unknown }).type !== 'string') {
        return { code: 'malformed-event', text: 'An event must be a JSON object with a string "type"', fatal: false };
      }
      const h = header as Record<string, unknown>;
      const dataLength = length(h.data_length);
      const payloadLength = length(h.payload_length);
      if (dataLength === undefined || payloadLength === undefined) {
        return { code: 'malformed-event', text: 'data_length and payload_length must be whole numbers of bytes', fatal: true };
      }
      if (!this.limits.handles(h.type as string)) {
        // Not used: its bytes go by unread, whatever their size.
        if (dataLength + payloadLength > 0) this.state = { kind: 'skip', remaining: dataLength + payloadLength };
        return eventOf(h, {});
      }
      if (dataLength > this.limits.maxPayloadBytes || payloadLength > this.limits.maxPayloadBytes) {
        this.state = { kind: 'skip', remaining: dataLength + payloadLength };
        return { code: 'payload-too-large', text: `Event "${h.type as string}" carries more than ${this.limits.maxPayloadBytes} bytes: it is skipped`, fatal: false };
      }
      this.state = { kind: 'body', header: h, dataLength, payloadLength };
      return true;
    }
    if (this.bufferedBytes < state.dataLength + state.payloadLength) return undefined;
    this.state = { kind: 'header' };
    const dataBytes = state.dataLength ? this.take(state.dataLength) : undefined;
    const payload = state.payloadLength ? Buffer.from(this.take(state.payloadLength)) : undefined;
    const type = state.header.type as string;
    let extra: unknown = {};
    if (dataBytes) {
      const max = this.limits.maxDataValues;
      if (countJsonValues(dataBytes, max) > max) {
        return { code: 'payload-too-large', text: `The data of event "${type}" holds more than ${max} JSON values: it is skipped`, fatal: false };
      }
      try {
        extra = JSON.parse(dataBytes.toString('utf8'));
      } catch {
        extra = undefined;
      }
      if (extra === null || typeof extra !== 'object' || Array.isArray(extra)) {
        return { code: 'malformed-event', text: `The data of event "${type}" is not a JSON object`, fatal: false };
      }
    }
    return eventOf(state.header, extra as Record<string, unknown>, payload);
  }
}

/** The event of a header: its own `data` with the data bytes' fields over it. */
function eventOf(header: Record<string, unknown>, extra: Record<string, unknown>, payload?: Buffer): WyomingEvent {
  const inline = header.data;
  const data = inline !== null && typeof inline === 'object' && !Array.isArray(inline) ? { ...(inline as Record<string, unknown>), ...extra } : { ...extra };
  return { type: header.type as string, data, ...(payload && { payload }) };
}

export function isProblem(item: WyomingEvent | ReadProblem): item is ReadProblem {
  return 'code' in item && 'fatal' in item;
}
