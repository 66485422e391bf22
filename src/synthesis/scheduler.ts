/**
 * Who gets an engine next. Every synthesis stream (an SSE request, a WebSocket request) asks for
 * a slot before each piece (one sentence) it sends to an engine. Each engine has `workersPerEngine`
 * slots; when they are all taken, waiting pieces are served in this order:
 *   1. a stream's first piece, before any stream's later pieces (first audio is what a listener
 *      waits for: without this, 64 streams' first chunks queue behind whole texts);
 *   2. then the stream that has had the fewest pieces so far (fair sharing), oldest first.
 * Pieces beyond the slots wait here, not in the engine's own queue, so this order is the order
 * the engine works in.
 */
import { AbortedError } from '../errors.js';

/** The identity of one stream: every piece of one request shares it. */
export class SynthesisStream {
  /** Pieces this stream has been given a slot for. */
  served = 0;
}

interface Waiter {
  stream: SynthesisStream;
  order: number;
  grant: () => void;
}

class EngineSlots {
  busy = 0;
  readonly waiting: Waiter[] = [];
}

export class SynthesisScheduler {
  private readonly engines = new WeakMap<object, EngineSlots>();
  private order = 0;

  constructor(readonly workersPerEngine: number) {
    if (!(workersPerEngine >= 1)) throw new RangeError('workersPerEngine must be at least 1');
  }

  /**
   * Resolves with a release function once `stream` may send its next piece to `engine`. Rejects
   * with AbortedError if `signal` aborts while it waits (it then holds no slot).
   */
  acquire(engine: object, stream: SynthesisStream, signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(new AbortedError());
    let slots = this.engines.get(engine);
    if (!slots) this.engines.set(engine, (slots = new EngineSlots()));
    const release = this.releaser(slots);
    if (slots.busy < this.workersPerEngine && slots.waiting.length === 0) {
      slots.busy++;
      stream.served++;
      return Promise.resolve(release);
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        stream,
        order: this.order++,
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(release);
        },
      };
      const onAbort = () => {
        const at = slots.waiting.indexOf(waiter);
        if (at >= 0) slots.waiting.splice(at, 1);
        reject(new AbortedError());
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      slots.waiting.push(waiter);
    });
  }

  /** Waiting pieces per engine are few (one per stream), so a linear pick is fine. */
  private next(slots: EngineSlots): Waiter | undefined {
    let best = -1;
    for (let i = 0; i < slots.waiting.length; i++) {
      if (best < 0 || before(slots.waiting[i]!, slots.waiting[best]!)) best = i;
    }
    return best < 0 ? undefined : slots.waiting.splice(best, 1)[0];
  }

  private releaser(slots: EngineSlots): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const waiter = this.next(slots);
      if (!waiter) {
        slots.busy--;
        return;
      }
      // The slot passes straight to the next piece.
      waiter.stream.served++;
      waiter.grant();
    };
  }
}

/** Fewest pieces served first (so every first piece, at 0, goes before any later one), then oldest. */
function before(a: Waiter, b: Waiter): boolean {
  if (a.stream.served !== b.stream.served) return a.stream.served < b.stream.served;
  return a.order < b.order;
}
