/**
 * Who gets an engine next. Every synthesis stream (an SSE request, a WebSocket request) asks for
 * a slot before each piece (one sentence) it sends to an engine. Each engine has `workersPerEngine`
 * slots; when they are all taken, waiting pieces are served in this order:
 *   1. a playing stream about to run dry: one whose listener has less than `urgentSlackSeconds`
 *      of audio left beyond what has played (its slack), least slack first. Without this, a
 *      crowd of new streams' first pieces would starve a stream already playing into a gap;
 *   2. a stream's first piece, before any stream's later pieces (first audio is what a listener
 *      waits for: without this, 64 streams' first chunks queue behind whole texts);
 *   3. then the playing stream with the least slack (its audio runs out first), then the stream
 *      that has had the fewest pieces so far (fair sharing; a whole-file request has no playback),
 *      oldest first.
 * Pieces beyond the slots wait here, not in the engine's own queue, so this order is the order
 * the engine works in. A stream's playback is counted from its first audio, at real time.
 */
import { AbortedError } from '../errors.js';

/** The identity of one stream: every piece of one request shares it. */
export class SynthesisStream {
  /** Pieces this stream has been given a slot for. */
  served = 0;
  /** When its first audio was produced (performance.now()); undefined before, and for a whole-file request. */
  private firstAudioAt: number | undefined;
  private audioSeconds = 0;

  /** Records audio produced for a listener who plays it as it comes. */
  played(seconds: number, now = performance.now()): void {
    if (seconds <= 0) return;
    this.firstAudioAt ??= now;
    this.audioSeconds += seconds;
  }

  /** Seconds of audio produced beyond what the listener has played at `now`; Infinity while nothing plays. */
  slack(now = performance.now()): number {
    return this.firstAudioAt === undefined ? Infinity : this.audioSeconds - (now - this.firstAudioAt) / 1000;
  }

  /** Whether any audio of this stream has been produced for a listener. */
  get started(): boolean {
    return this.firstAudioAt !== undefined;
  }
}

/**
 * How soon a stream needs its next output work done (resampling, encoding: after the engine), by
 * the engine's order: tier 0, a playing stream about to run dry; tier 1, a stream's first audio;
 * tier 2, anything else (a whole file, `playing` false, has no playback and waits with slack Infinity).
 * Lower tier first, then less slack.
 */
export interface OutputUrgency {
  tier: number;
  slack: number;
}

export function outputUrgency(stream: SynthesisStream, playing: boolean, urgentSlackSeconds = DEFAULT_URGENT_SLACK_SECONDS, now = performance.now()): OutputUrgency {
  if (!playing) return { tier: 2, slack: Infinity };
  const slack = stream.slack(now);
  return { tier: slack < urgentSlackSeconds ? 0 : stream.started ? 2 : 1, slack };
}

/** A playing stream with less audio than this in hand goes before first pieces. */
const DEFAULT_URGENT_SLACK_SECONDS = 1;

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

  constructor(
    readonly workersPerEngine: number,
    readonly urgentSlackSeconds = DEFAULT_URGENT_SLACK_SECONDS,
  ) {
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
    const now = performance.now();
    const ranked = slots.waiting.map((w) => rank(w, now, this.urgentSlackSeconds));
    let best = -1;
    for (let i = 0; i < ranked.length; i++) {
      if (best < 0 || before(ranked[i]!, ranked[best]!)) best = i;
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

interface Ranked {
  waiter: Waiter;
  /** 0: playing and about to run dry; 1: a first piece; 2: any other piece. */
  tier: number;
  slack: number;
}

function rank(waiter: Waiter, now: number, urgentSlackSeconds: number): Ranked {
  const slack = waiter.stream.slack(now);
  const tier = slack < urgentSlackSeconds ? 0 : waiter.stream.served === 0 ? 1 : 2;
  return { waiter, tier, slack };
}

/** By tier; within one, least slack (Infinity when not playing), then fewest pieces served, then oldest. */
function before(a: Ranked, b: Ranked): boolean {
  if (a.tier !== b.tier) return a.tier < b.tier;
  if (a.slack !== b.slack) return a.slack < b.slack;
  if (a.waiter.stream.served !== b.waiter.stream.served) return a.waiter.stream.served < b.waiter.stream.served;
  return a.waiter.order < b.waiter.order;
}
