/**
 * Engine audio for a list of sentences, one sentence ahead: while the caller resamples, encodes
 * and sends sentence i, the engine (in its worker or on sherpa's thread pool) already works on
 * sentence i + 1. Without it the engine sits idle for every sentence's post-processing, and a
 * long text takes engine time + post-processing time instead of roughly the larger of the two.
 *
 * Memory stays bounded: sentence i + 1 starts only once sentence i is fully synthesised, and
 * sentence i + 2 only once the caller has moved on to i + 1, so at most two sentences of audio
 * are held at a time.
 */
import { AbortedError } from '../errors.js';

/** One sentence's engine output, pumped into a queue as fast as the engine produces it. */
class BufferedSentence {
  private readonly chunks: Float32Array[] = [];
  private done = false;
  private failure: unknown;
  private wake: (() => void) | undefined;
  /** Settles when the engine is done with the sentence: true when it finished, false when it failed. */
  readonly finished: Promise<boolean>;

  constructor(audio: AsyncIterable<Float32Array>) {
    this.finished = this.pump(audio);
  }

  private async pump(audio: AsyncIterable<Float32Array>): Promise<boolean> {
    try {
      for await (const chunk of audio) {
        this.chunks.push(chunk);
        this.notify();
      }
      return true;
    } catch (err) {
      this.failure = err;
      return false;
    } finally {
      this.done = true;
      this.notify();
    }
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  async *drain(): AsyncGenerator<Float32Array> {
    for (;;) {
      const chunk = this.chunks.shift();
      if (chunk) {
        yield chunk;
        continue;
      }
      if (this.done) {
        if (this.failure !== undefined) throw this.failure;
        return;
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }
}

/**
 * Yields each sentence's audio in order, chunk by chunk as `synthesize` produces it, with the next
 * sentence synthesised in the background. Engine errors surface in the sentence they belong to.
 * Stopping early (abort, error, or the caller returning) aborts the engine work still running.
 */
export async function* synthesizeAhead(
  sentences: readonly string[],
  synthesize: (sentence: string, signal: AbortSignal, index: number) => AsyncIterable<Float32Array>,
  signal: AbortSignal,
): AsyncGenerator<Float32Array> {
  // Our own controller: returning early must also stop the sentence being prefetched.
  const stop = new AbortController();
  const forward = (): void => stop.abort();
  signal.addEventListener('abort', forward, { once: true });
  const started: (BufferedSentence | undefined)[] = [];
  /** Index of the last sentence handed out in full: a late callback must not start it again. */
  let consumed = -1;
  const start = (i: number): BufferedSentence => {
    if (stop.signal.aborted) throw new AbortedError();
    return (started[i] ??= new BufferedSentence(synthesize(sentences[i]!, stop.signal, i)));
  };
  try {
    for (let i = 0; i < sentences.length; i++) {
      const current = start(i);
      // Sentence i is under way and the caller consumes it: i + 1 may start when i is done.
      if (i + 1 < sentences.length) {
        void current.finished.then((ok) => {
          if (ok && !stop.signal.aborted && i + 1 > consumed) start(i + 1);
        });
      }
      yield* current.drain();
      consumed = i;
      started[i] = undefined;
    }
  } finally {
    signal.removeEventListener('abort', forward);
    stop.abort();
    // Let an aborted prefetch finish unwinding (its engine frees the worker) before returning.
    await Promise.all(started.map((s) => s?.finished));
  }
}
