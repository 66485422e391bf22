/**
 * A client on a bare TCP socket, for what fetch cannot do: send a request slowly, hold a
 * connection open without a request, or stop reading a response.
 */
import net from 'node:net';

export interface RawConnection {
  socket: net.Socket;
  /** Everything received so far, as text. */
  received(): string;
  /** Resolves when the connection is closed (by either side), with everything received. */
  closed: Promise<string>;
  /** Write at once. */
  write(data: string | Buffer): void;
  /** Write one character every `everyMs` until the connection closes or `max` characters went out. */
  trickle(data: string, everyMs: number, max?: number): void;
  close(): void;
}

export async function connectRaw(baseUrl: string): Promise<RawConnection> {
  const { hostname, port } = new URL(baseUrl);
  const socket = net.connect({ host: hostname, port: Number(port) });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  // A reset is one way for the server to close: it ends the promise like a FIN.
  socket.on('error', () => undefined);
  const received = () => Buffer.concat(chunks).toString('latin1');
  const closed = new Promise<string>((resolve) => socket.once('close', () => resolve(received())));
  let trickler: NodeJS.Timeout | undefined;
  socket.once('close', () => clearInterval(trickler));
  return {
    socket,
    received,
    closed,
    write: (data) => {
      if (!socket.destroyed) socket.write(data);
    },
    trickle(data, everyMs, max = data.length) {
      let at = 0;
      trickler = setInterval(() => {
        if (socket.destroyed || at >= Math.min(max, data.length)) return clearInterval(trickler);
        socket.write(data[at++]!);
      }, everyMs);
    },
    close: () => {
      clearInterval(trickler);
      socket.destroy();
    },
  };
}

/** Resolve with `promise`, or reject after `ms` saying what did not happen. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms))),
  ]);
}

/** The status and JSON body of a raw HTTP/1.1 response text (Content-Length framed). */
export function parseResponse(text: string): { status: number; headers: Record<string, string>; body: any } {
  const end = text.indexOf('\r\n\r\n');
  const head = text.slice(0, end < 0 ? text.length : end).split('\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head[0] ?? '')?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of head.slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  const raw = end < 0 ? '' : text.slice(end + 4);
  let body: any = raw;
  try {
    body = raw ? JSON.parse(Buffer.from(raw, 'latin1').toString('utf8')) : raw;
  } catch {
    // not JSON: leave the text
  }
  return { status, headers, body };
}
