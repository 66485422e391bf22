/**
 * Server-Sent Events on a hijacked reply: writes events with backpressure and notices when the
 * client goes away (so the producer can stop within one sentence).
 */
import type { FastifyReply } from 'fastify';

export class SseStream {
  private closed = false;
  readonly abort = new AbortController();

  constructor(private readonly reply: FastifyReply) {
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
      await new Promise<void>((resolve) => {
        const done = () => {
          this.reply.raw.off('drain', done);
          this.reply.raw.off('close', done);
          resolve();
        };
        this.reply.raw.on('drain', done);
        this.reply.raw.on('close', done);
      });
    }
  }

  end(): void {
    if (!this.closed) this.reply.raw.end();
  }
}
