/**
 * Wyoming's framing: each event is one line of JSON (`type`, optional `data`, `data_length`,
 * `payload_length`, `version`), then `data_length` bytes of JSON merged into `data`, then
 * `payload_length` bytes of payload (audio). The reader is bounded: a header line longer than
 * maxHeaderBytes cannot be resynchronised and ends the connection; extra data or a payload longer
 * than maxPayloadBytes is skipped (read and dropped) and reported, and the stream goes on at the
 * next event; a header that is not a JSON object with a `type` is reported and skipped.
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
}

type State =
  | { kind: 'header' }
  | { kind: 'body'; header: Record<string, unknown>; dataLength: number; payloadLength: number }
  | { kind: 'skip'; remaining: number };

function length(value: unknown): number | undefined {
  if (value === undefined || value === null) return 0;
  return Number.isSafeInteger(value) && (value as number) >= 0 ? (value as number) : undefined;
}

/** Incremental reader: push() bytes as they arrive, get whole events (and problems) back. */
export class EventReader {
  private buffered: Buffer[] = [];
  private bufferedBytes = 0;
  private state: State = { kind: 'header' };
  private failed = false;

  constructor(private readonly limits: ReaderLimits) {}

  /** Bytes held waiting for the rest of an event. */
  get heldBytes(): number {
    return this.bufferedBytes;
  }

  push(chunk: Buffer): (WyomingEvent | ReadProblem)[] {
    if (this.failed) return [];
    this.buffered.push(chunk);
    this.bufferedBytes += chunk.length;
    const out: (WyomingEvent | ReadProblem)[] = [];
    for (;;) {
      const next = this.step();
      if (!next) break;
      if (next === true) continue;
      out.push(next);
      if (isProblem(next) && next.fatal) {
        this.failed = true;
        this.buffered = [];
        this.bufferedBytes = 0;
        break;
      }
    }
    return out;
  }

  private take(n: number): Buffer {
    const all = this.buffered.length === 1 ? this.buffered[0]! : Buffer.concat(this.buffered);
    this.buffered = n < all.length ? [all.subarray(n)] : [];
    this.bufferedBytes = all.length - n;
    return all.subarray(0, n);
  }

  /** One step: an event, a problem, true (progress, nothing to report), or undefined (needs more bytes). */
  private step(): WyomingEvent | ReadProblem | true | undefined {
    const state = this.state;
    if (state.kind === 'skip') {
      if (this.bufferedBytes === 0) return undefined;
      const n = Math.min(state.remaining, this.bufferedBytes);
      this.take(n);
      state.remaining -= n;
      if (state.remaining === 0) this.state = { kind: 'header' };
      return true;
    }
    if (state.kind === 'header') {
      const all = this.buffered.length === 1 ? this.buffered[0]! : Buffer.concat(this.buffered);
      this.buffered = all.length ? [all] : [];
      const newline = all.indexOf(10);
      if (newline < 0) {
        if (all.length > this.limits.maxHeaderBytes) {
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
      if (dataLength > this.limits.maxPayloadBytes || payloadLength > this.limits.maxPayloadBytes) {
        this.state = { kind: 'skip', remaining: dataLength + payloadLength };
        return { code: 'payload-too-large', text: `Event "${h.type as string}" carries more than ${this.limits.maxPayloadBytes} bytes: it is skipped`, fatal: false };
      }
      this.state = { kind: 'body', header: h, dataLength, payloadLength };
      return true;
    }
    if (this.bufferedBytes < state.dataLength + state.payloadLength) return undefined;
    this.state = { kind: 'header' };
    const dataBytes = this.take(state.dataLength);
    const payload = state.payloadLength ? Buffer.from(this.take(state.payloadLength)) : undefined;
    const inline = state.header.data;
    let data: Record<string, unknown> = inline !== null && typeof inline === 'object' && !Array.isArray(inline) ? { ...(inline as Record<string, unknown>) } : {};
    if (state.dataLength) {
      try {
        const extra: unknown = JSON.parse(dataBytes.toString('utf8'));
        if (extra === null || typeof extra !== 'object' || Array.isArray(extra)) throw new Error('not an object');
        data = { ...data, ...(extra as Record<string, unknown>) };
      } catch {
        return { code: 'malformed-event', text: `The data of event "${state.header.type as string}" is not a JSON object`, fatal: false };
      }
    }
    return { type: state.header.type as string, data, ...(payload && { payload }) };
  }
}

export function isProblem(item: WyomingEvent | ReadProblem): item is ReadProblem {
  return 'code' in item && 'fatal' in item;
}
