/**
 * A socket's client messages handled one at a time, in order: a message that waits for the engines
 * holds back those after it. Past maxQueuedBytes waiting the socket stops reading (TCP pushes back
 * on the client) until half of them are handled.
 */
import type { RawData } from 'ws';
import type { RealtimeSession, RealtimeSockets } from './realtime-sockets.js';

export class OrderedMessages {
  private queue: Promise<void> = Promise.resolve();
  private queuedBytes = 0;

  constructor(
    private readonly session: RealtimeSession,
    private readonly sockets: RealtimeSockets,
    private readonly maxQueuedBytes: number,
    private readonly handle: (data: RawData, isBinary: boolean) => Promise<void>,
  ) {}

  /** Whether the socket should stay paused (the queue resumes it once it has drained to half). */
  get backlogged(): boolean {
    return this.queuedBytes > this.maxQueuedBytes / 2;
  }

  readonly receive = (data: RawData, isBinary: boolean): void => {
    const size = Array.isArray(data) ? data.reduce((n, b) => n + b.length, 0) : data.byteLength;
    this.queuedBytes += size;
    const { socket } = this.session;
    if (this.queuedBytes > this.maxQueuedBytes && !socket.isPaused) {
      this.sockets.hit('inputBacklog', this.session.request, { queuedBytes: this.queuedBytes });
      socket.pause();
    }
    this.queue = this.queue
      .then(() => this.handle(data, isBinary))
      .finally(() => {
        this.queuedBytes -= size;
        if (socket.isPaused && this.queuedBytes <= this.maxQueuedBytes / 2) socket.resume();
      });
  };
}
