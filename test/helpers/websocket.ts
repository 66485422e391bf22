/** A WebSocket client for tests: messages collected as they arrive, the upgrade's refusal, the close. */
import { WebSocket } from 'ws';

export interface RefusedUpgrade {
  status: number;
  body: any;
}

export class TestSocket {
  readonly messages: any[] = [];
  closed: { code: number; reason: string } | undefined;
  private waiters: (() => void)[] = [];

  constructor(readonly ws: WebSocket) {
    ws.on('message', (data, isBinary) => {
      this.messages.push(isBinary ? data : JSON.parse(data.toString()));
      this.wakeAll();
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      this.wakeAll();
    });
  }

  private wakeAll(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  send(message: object | string | Buffer): void {
    this.ws.send(typeof message === 'string' || Buffer.isBuffer(message) ? message : JSON.stringify(message));
  }

  /** Resolves once `done(messages)` holds (checked after every message and on close); fails after timeoutMs. */
  async until(done: (messages: any[]) => boolean, timeoutMs = 30_000): Promise<any[]> {
    const deadline = Date.now() + timeoutMs;
    while (!done(this.messages)) {
      if (this.closed) throw new Error(`socket closed (${this.closed.code} ${this.closed.reason}) before the condition held; got ${JSON.stringify(this.messages).slice(0, 500)}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out; got ${JSON.stringify(this.messages).slice(0, 500)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.messages;
  }

  async untilClosed(timeoutMs = 30_000): Promise<{ code: number; reason: string }> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed) {
      if (Date.now() > deadline) throw new Error('socket did not close in time');
      await new Promise((r) => setTimeout(r, 20));
    }
    return this.closed;
  }

  close(): void {
    this.ws.terminate();
  }
}

/** Opens a socket; resolves with it once open, or with the HTTP answer that refused the upgrade. */
export function openSocket(url: string, headers: Record<string, string> = {}): Promise<TestSocket | RefusedUpgrade> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    const socket = new TestSocket(ws);
    ws.once('open', () => resolve(socket));
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => {
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON: kept as text
        }
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    ws.once('error', (err) => {
      if (!socket.closed) reject(err);
    });
  });
}

export async function connect(url: string, headers: Record<string, string> = {}): Promise<TestSocket> {
  const result = await openSocket(url, headers);
  if (!(result instanceof TestSocket)) throw new Error(`upgrade refused: ${result.status} ${JSON.stringify(result.body)}`);
  return result;
}

export function wsUrl(httpUrl: string, pathname: string): string {
  return httpUrl.replace(/^http/, 'ws') + pathname;
}
