/**
 * A Wyoming client for tests over a real TCP socket: writes events as the protocol's reference
 * client does (one JSON line with `type`, `version`, `data_length`, `payload_length`, then the data
 * bytes, then the payload) and reads them back the same way, the data bytes merged into `data`.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';

export interface WyomingEvent {
  type: string;
  data: Record<string, any>;
  payload?: Buffer;
}

export class WyomingClient {
  private buffer = Buffer.alloc(0);
  private readonly events: WyomingEvent[] = [];
  private waiting: (() => void) | undefined;
  ended = false;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.parse();
    });
    socket.on('end', () => {
      this.ended = true;
      this.waiting?.();
    });
    socket.on('error', () => undefined);
  }

  static open(port: number): Promise<WyomingClient> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => resolve(new WyomingClient(socket)));
      socket.once('error', reject);
    });
  }

  private parse(): void {
    for (;;) {
      const newline = this.buffer.indexOf(10);
      if (newline < 0) return;
      const header = JSON.parse(this.buffer.subarray(0, newline).toString('utf8'));
      const dataLength = header.data_length ?? 0;
      const payloadLength = header.payload_length ?? 0;
      if (this.buffer.length < newline + 1 + dataLength + payloadLength) return;
      let at = newline + 1;
      const data = { ...(header.data ?? {}), ...(dataLength ? JSON.parse(this.buffer.subarray(at, at + dataLength).toString('utf8')) : {}) };
      at += dataLength;
      const payload = payloadLength ? Buffer.from(this.buffer.subarray(at, at + payloadLength)) : undefined;
      this.buffer = this.buffer.subarray(at + payloadLength);
      assert.equal(typeof header.version, 'string', 'every event carries the protocol version');
      this.events.push({ type: header.type, data, ...(payload && { payload }) });
      this.waiting?.();
    }
  }

  send(type: string, data: Record<string, unknown> = {}, payload?: Buffer): void {
    this.socket.write(WyomingClient.encode(type, data, payload));
  }

  static encode(type: string, data: Record<string, unknown> = {}, payload?: Buffer): Buffer {
    const header: Record<string, unknown> = { type, version: '1.8.0' };
    const dataBytes = Object.keys(data).length ? Buffer.from(JSON.stringify(data)) : undefined;
    if (dataBytes) header.data_length = dataBytes.length;
    if (payload) header.payload_length = payload.length;
    return Buffer.concat([Buffer.from(JSON.stringify(header) + '\n'), ...(dataBytes ? [dataBytes] : []), ...(payload ? [payload] : [])]);
  }

  /** The next event (in order), within timeoutMs. */
  async next(timeoutMs = 30_000): Promise<WyomingEvent> {
    const deadline = Date.now() + timeoutMs;
    while (this.events.length === 0) {
      if (this.ended) throw new Error('connection ended');
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('no event in time');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiting = () => (clearTimeout(timer), resolve());
      });
    }
    return this.events.shift()!;
  }

  /** Events up to and including the first of `type`. */
  async until(type: string, timeoutMs = 60_000): Promise<WyomingEvent[]> {
    const out: WyomingEvent[] = [];
    for (;;) {
      const e = await this.next(timeoutMs);
      out.push(e);
      if (e.type === type) return out;
    }
  }

  close(): void {
    this.socket.destroy();
  }
}
