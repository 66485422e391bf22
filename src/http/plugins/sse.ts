/**
 * Server-Sent Events on a hijacked reply: writes events with backpressure and notices when the
 * client goes away (so the producer can stop within one sentence). A client that stops reading
 * is treated as gone once a write has waited `stallTimeoutMs` for the socket to drain: the
 * connection is destroyed, which aborts the producer.
 */
import type { FastifyReply } from 'fastify';

export class SseStream {
  private closed = false;
  readonly abort = new AbortController();

  constructor(
    private readonly reply: FastifyReply,
    private readonly stallTimeoutMs = 30_000,
  ) {
    reply.raw.on('close', () => {
      this.closed = true;
      if (!reply.raw.writableFinished) this.abort.abort();
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
  async send(fields: [string, string][]): Promise<void> {
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
