/**
 * Text that arrives in parts (a language model's output, sent with `continue: true`) cut into
 * pieces worth synthesising: a piece is released as soon as a sentence ends, so audio starts
 * before the text is complete, and never mid-sentence, so the prosody stays whole. Text without
 * sentence ends is released at a word boundary once it passes `maxPieceChars`; the rest is
 * released when the feed is closed (flush, or a last message without `continue`), or when the
 * client's wait bound passes (`releaseWaiting`).
 */

/** A sentence end: terminal punctuation, optional closing quotes or brackets, then whitespace. */
const SENTENCE_END = /[.!?…。！？]["'”’)\]]*\s/g;

export class TextFeed implements AsyncIterable<string> {
  private buffered = '';
  private readonly ready: string[] = [];
  private closed = false;
  private wake: (() => void) | undefined;
  /** Characters received so far. */
  received = 0;

  constructor(private readonly maxPieceChars = 400) {}

  get isClosed(): boolean {
    return this.closed;
  }

  push(text: string): void {
    if (this.closed) throw new Error('TextFeed is closed');
    this.received += text.length;
    this.buffered += text;
    let cut = 0;
    for (const match of this.buffered.matchAll(SENTENCE_END)) cut = match.index + match[0].length;
    if (cut === 0 && this.buffered.length > this.maxPieceChars) cut = Math.max(this.buffered.lastIndexOf(' ') + 1, 0) || this.buffered.length;
    if (cut > 0) this.release(cut);
  }

  /** Whether text waits for a sentence end (something besides whitespace). */
  get waiting(): boolean {
    return /\S/.test(this.buffered);
  }

  /**
   * Releases what waits without a sentence end, up to its last word boundary (a word still
   * arriving in parts stays for the next message); all of it when it holds no boundary.
   */
  releaseWaiting(): void {
    if (this.closed || !this.waiting) return;
    const boundary = this.buffered.trimEnd().lastIndexOf(' ') + 1;
    const endsInSpace = /\s$/.test(this.buffered);
    this.release(endsInSpace || boundary === 0 ? this.buffered.length : boundary);
  }

  /** No more text: what is buffered becomes the last piece. */
  close(): void {
    if (this.closed) return;
    this.release(this.buffered.length);
    this.closed = true;
    this.notify();
  }

  private release(upTo: number): void {
    const piece = this.buffered.slice(0, upTo);
    this.buffered = this.buffered.slice(upTo);
    if (/\S/.test(piece)) {
      this.ready.push(piece);
      this.notify();
    }
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<string> {
    for (;;) {
      const piece = this.ready.shift();
      if (piece !== undefined) {
        yield piece;
        continue;
      }
      if (this.closed) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }
}
