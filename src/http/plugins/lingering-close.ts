/**
 * Lingering close. A server that answers before it has read the request's body (a refusal from
 * the headers, a 405, a 413 from Content-Length) and then closes the connection with that body
 * still arriving makes the kernel reset the connection, and the reset destroys the answer in the
 * client's buffers: the client sees EPIPE or ECONNRESET instead of the status, and cannot tell
 * "retry later" from a broken network. Clients that write the whole body before reading
 * (Python's requests and httpx) never see the answer at all.
 *
 * So when Node is about to close a connection whose request has not been fully received, the
 * answer and a FIN go out, and what the client still sends is read and dropped until its request
 * ends or it closes, within bounds: at most `maxBytes` more, at most `maxMs` in all, and no pause
 * longer than `idleMs`. Past any of them the connection is closed as before. The same connection
 * limits that bound open connections (in all and per address) bound lingering ones.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';

export interface LingerBounds {
  /** Bytes read and dropped at most after the answer. */
  maxBytes: number;
  /** Longest a connection lingers after the answer. */
  maxMs: number;
  /** Longest the client may send nothing while the connection lingers. */
  idleMs: number;
}

/** The request each connection is receiving now. */
const receiving = new WeakMap<Socket, IncomingMessage>();
const lingering = new WeakSet<Socket>();

/** Node closes a connection after its last answer with socket.destroySoon(): that call lingers instead while the request is still arriving. */
export function lingerOnEarlyClose(server: Server, bounds: LingerBounds): void {
  const closeSoon = function (this: Socket): void {
    const request = receiving.get(this);
    if (request && !request.complete && !this.destroyed) linger(this, request, bounds);
    else Object.getPrototypeOf(this).destroySoon.call(this);
  };
  // First, so that a request answered by an earlier listener is tracked too. A request without a
  // body has nothing left to arrive: its connection is left as it is (this runs on every request).
  server.prependListener('request', (request: IncomingMessage) => {
    const { headers, socket } = request;
    if (headers['transfer-encoding'] === undefined && !(Number(headers['content-length']) > 0)) return;
    receiving.set(socket, request);
    if (socket.destroySoon !== closeSoon) socket.destroySoon = closeSoon;
  });
}

/** Closes `socket` once its request has been received, within the bounds; its answer goes out first. */
export function linger(socket: Socket, request: IncomingMessage, bounds: LingerBounds): void {
  if (lingering.has(socket) || socket.destroyed) return;
  lingering.add(socket);
  const close = () => void socket.destroy();
  // A body announced larger than the bound would be cut anyway: no use reading any of it.
  const announced = Number(request.headers['content-length']);
  if (announced > bounds.maxBytes) return close();
  // The answer, then a FIN: the client reads the status while it finishes sending.
  socket.end();
  // Nothing reads the body any more: let it flow and drop it.
  request.resume();
  const startedAt = Date.now();
  const startedBytes = socket.bytesRead;
  let seenBytes = startedBytes;
  let movedAt = startedAt;
  const check = setInterval(() => {
    const now = Date.now();
    const read = socket.bytesRead;
    if (read !== seenBytes) movedAt = now;
    seenBytes = read;
    if (now - movedAt >= bounds.idleMs || read - startedBytes > bounds.maxBytes || now - startedAt >= bounds.maxMs) close();
  }, Math.max(10, Math.min(250, bounds.idleMs / 4)));
  check.unref();
  // Received whole: nothing is left unread, so closing now resets nothing.
  request.once('end', close);
  socket.once('close', () => {
    clearInterval(check);
    request.off('end', close);
  });
  if (request.complete) close();
}
