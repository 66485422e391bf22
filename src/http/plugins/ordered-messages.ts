/**
 * A socket's client messages handled one at a time, in order: a message that waits for the engines
 * holds back those after it. Past limits.maxQueuedMessages or limits.maxQueuedMessageBytes waiting,
 * the socket stops reading (TCP pushes back on the client) until both are down to half: tiny
 * messages are bounded by their count, large ones by their bytes.
 *
 * The waiting messages are a list that one loop takes from, never a chain of promises: V8 builds
 * the async stack of every Error made inside a promise chain by walking the chain, so each error
 * (a bad JSON message throws one) would cost as much as the messages queued behind it. A loop keeps
 * that cost the same whatever waits, and it gives the event loop a turn every YIELD_EVERY messages,
 * so messages handled without waiting on anything cannot hold it for a whole burst.
 */
import type { RawData } from 'ws';
import type { RealtimeSession, RealtimeSockets } from './realtime-sockets.js';

/** Messages handled in one turn of the event loop before other work gets its turn. */
const YIELD_EVERY = 32;

interface Waiting {
  data: RawData;
  isBinary: boolean;
  bytes: number;
}

export class OrderedMessages {
  private readonly waiting: Waiting[] = [];
  private queuedBytes = 0;
  private running = false;

  /** @param handle handles one message; it reports its own errors (one it throws is logged, and the next message is handled). */
  constructor(
    private readonly session: RealtimeSession,
    private readonly sockets: RealtimeSockets,
    private readonly handle: (data: RawData, isBinary: boolean) => Promise<void>,
  ) {}

  /** Whether the socket should stay paused (the queue resumes it once it has drained to half). */
  get backlogged(): boolean {
    const { maxQueuedMessages, maxQueuedMessageBytes } = this.sockets.limits;
    return this.waiting.length > maxQueuedMessages / 2 || this.queuedBytes > maxQueuedMessageBytes / 2;
  }

  readonly receive = (data: RawData, isBinary: boolean): void => {
    const bytes = Array.isArray(data) ? data.reduce((n, b) => n + b.length, 0) : data.byteLength;
    this.waiting.push({ data, isBinary, bytes });
    this.queuedBytes += bytes;
    const { socket } = this.session;
    const { maxQueuedMessages, maxQueuedMessageBytes } = this.sockets.limits;
    if ((this.waiting.length > maxQueuedMessages || this.queuedBytes > maxQueuedMessageBytes) && !socket.isPaused) {
      this.sockets.hit('inputBacklog', this.session.request, { queuedMessages: this.waiting.length, queuedBytes: this.queuedBytes });
      socket.pause();
    }
    if (!this.running) void this.run();
  };

  private async run(): Promise<void> {
    this.running = true;
    const { socket } = this.session;
    let sinceYield = 0;
    try {
      while (this.waiting.length > 0) {
        // Once the socket is closed nothing more is handled: what waits is dropped.
        if (!this.session.isOpen) {
          this.waiting.length = 0;
          this.queuedBytes = 0;
          return;
        }
        const next = this.waiting.shift()!;
        try {
          await this.handle(next.data, next.isBinary);
        } catch (err) {
          this.session.request.log.error({ err }, 'websocket message handler failed');
        }
        this.queuedBytes -= next.bytes;
        if (socket.isPaused && this.session.isOpen && !this.backlogged) socket.resume();
        if (++sinceYield >= YIELD_EVERY) {
          sinceYield = 0;
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
    } finally {
      this.running = false;
    }
  }
}
