/**
 * Server-Sent Events on a hijacked reply: writes events with backpressure and notices when the
 * client goes away (so the producer can stop within one sentence). A client that stops reading
 * is treated as gone once a write has waited `stallTimeoutMs` for the socket to drain: the
 * connection is destroyed, which fires the request's `clientGone` signal and stops the producer.
 * pipeToSse is how a route streams: every streaming route's events go through it.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AbortedError } from '../../errors.js';

/** One event, as its field lines (`event`, `data`, …) in order. */
export type SseEvent = [string, string][];

/** An event named `name` whose data is `data` as JSON. */
export function sseEvent(name: string, data: unknown): SseEvent {
  return [
    ['event', name],
    ['data', JSON.stringify(data)],
  ];
}

class SseStream {
  private closed = false;

  constructor(
    private readonly reply: FastifyReply,
    private readonly stallTimeoutMs = 30_000,
  ) {
    reply.raw.on('close', () => {
      this.closed = true;
    });
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Send the status line and headers (the ones already set on the reply are kept). */
  open(extraHeaders: Record<string, string> = {}): void {
    this.reply.hijack();
    const headers: Record<string, string | number | string[]> = {};
    for (const [k, v] of Object.entries(this.reply.getHeaders())) if (v !== undefined) headers[k] = v as string;
    this.reply.raw.writeHead(200, {
      ...headers,
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-cache',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
      ...extraHeaders,
    });
    this.reply.raw.flushHeaders();
  }

  /** Write one event given as its field lines; resolves when the socket can take more. */
  async send(fields: SseEvent): Promise<void> {
    if (this.closed) return;
    const text = fields.map(([k, v]) => `${k}: ${v}`).join('\n') + '\n\n';
    if (!this.reply.raw.write(text)) {
      const raw = this.reply.raw;
      await new Promise<void>((resolve) => {
        const stalled = setTimeout(() => {
          this.reply.log.info({ stallTimeoutMs: this.stallTimeoutMs }, 'SSE client stopped reading: closing the stream');
          raw.destroy();
        }, this.stallTimeoutMs);
        const done = () => {
          clearTimeout(stalled);
          raw.off('drain', done);
          raw.off('close', done);
          resolve();
        };
        raw.on('drain', done);
        raw.on('close', done);
      });
    }
  }

  end(): void {
    if (!this.closed) this.reply.raw.end();
  }
}

export interface PipeToSseOptions<T> {
  /** The events one piece of the source becomes (none while a piece only fills a buffer). */
  events(piece: T): Iterable<SseEvent>;
  /** The events after the last piece. */
  end(): Iterable<SseEvent>;
  /**
   * The route family's error event for a failure once the stream is open (its status line is
   * gone, so the event carries what the error body would have said); logs it too.
   */
  error(err: unknown): SseEvent;
  /** A stream whose client has not taken a write for this long is cut (config.http.writeStallTimeoutMs). */
  stallTimeoutMs?: number;
  /** What stops when the client goes away, for the log line. */
  what: string;
  /**
   * Send the headers before the first piece, for long work whose every outcome, a failure
   * included, is an event of the stream (a pack install). Otherwise the first piece comes first.
   */
  headersFirst?: boolean;
}

/**
 * Streams `source` as Server-Sent Events. The first piece is made before the headers go out, so a
 * request that fails at once (a bad voice, an engine down) still gets its plain status and error
 * body. Then every piece becomes its events, with backpressure; a client that leaves or stops
 * reading ends the stream, and the source (made with `request.clientGone`) is closed.
 */
export async function pipeToSse<T>(request: FastifyRequest, reply: FastifyReply, source: AsyncGenerator<T>, options: PipeToSseOptions<T>): Promise<void> {
  const sse = new SseStream(reply, options.stallTimeoutMs);
  const first = options.headersFirst ? undefined : await source.next();
  sse.open();
  let sent = 0;
  const send = async (events: Iterable<SseEvent>) => {
    for (const event of events) {
      await sse.send(event);
      sent++;
    }
  };
  try {
    if (first && !first.done) await send(options.events(first.value));
    for await (const piece of source) {
      await send(options.events(piece));
      if (sse.isClosed) break;
    }
    await send(options.end());
  } catch (err) {
    if (err instanceof AbortedError || sse.isClosed) request.log.info({ events: sent }, `client went away: ${options.what} stopped`);
    else await sse.send(options.error(err));
  } finally {
    await source.return(undefined);
    sse.end();
  }
}
